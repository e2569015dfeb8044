import { Logger } from '@aws-lambda-powertools/logger';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoNotificationStore } from './adapters/dynamodb/store.js';
import { createKmsCipher } from './adapters/kms-cipher.js';
import { createLocalCipher, parseKey } from './adapters/local-cipher.js';
import { readSecretString } from './adapters/secrets-manager-secret.js';
import { createSqsDispatchQueue } from './adapters/sqs/dispatch-queue.js';
import { createSsmSecretLoader } from './adapters/ssm-secret.js';
import type { ServiceConfig } from './config.js';
import { type Clock, systemClock } from './domain/clock.js';
import { createFingerprinter, type Fingerprinter } from './domain/fingerprint.js';
import type { SmsProvider } from './domain/provider.js';
import type { Cipher } from './ports/cipher.js';
import type { DispatchQueue } from './ports/queue.js';
import type { NotificationStore } from './ports/store.js';
import { createSnsProvider, SNS_CLIENT_CONFIG } from './providers/sns/index.js';
import { createTwilioProvider } from './providers/twilio/index.js';

/** Everything a handler needs, built once per container from configuration. */
export interface ServiceRuntime {
  readonly config: ServiceConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: NotificationStore;
  readonly queue: DispatchQueue;
  readonly cipher: Cipher;
  readonly fingerprinter: Fingerprinter;
  readonly provider: SmsProvider;
}

/** Local emulators accept any credentials; real AWS uses the default chain. */
function clientConfig(config: ServiceConfig, endpoint: string | undefined) {
  return endpoint
    ? { region: config.region, endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
    : { region: config.region };
}

async function fingerprintSecret(config: ServiceConfig, clock: Clock): Promise<Uint8Array> {
  if (config.fingerprintKeyParameter) {
    const load = createSsmSecretLoader({
      client: new SSMClient({ region: config.region }),
      name: config.fingerprintKeyParameter,
      clock,
    });
    return load();
  }
  if (!config.fingerprintKey) throw new Error('FINGERPRINT_KEY or FINGERPRINT_KEY_PARAMETER must be set');
  return parseKey(config.fingerprintKey);
}

function cipherFor(config: ServiceConfig, clock: Clock): Cipher {
  if (config.cipher === 'kms') {
    if (!config.kmsKeyId) throw new Error('CIPHER=kms needs KMS_KEY_ID');
    return createKmsCipher({
      client: new KMSClient({ region: config.region }),
      keyId: config.kmsKeyId,
      clock,
    });
  }
  if (!config.localDataKey) throw new Error('CIPHER=local needs LOCAL_DATA_KEY (32 bytes, hex or base64)');
  return createLocalCipher(parseKey(config.localDataKey));
}

async function providerFor(
  config: ServiceConfig,
  clock: Clock,
  fingerprinter: Fingerprinter,
): Promise<SmsProvider> {
  if (config.provider === 'sns') {
    return createSnsProvider({
      // No SDK retries: a retry after a lost response could send a second SMS.
      sns: new SNSClient({ region: config.region, ...SNS_CLIENT_CONFIG }),
      logs: new CloudWatchLogsClient({ region: config.region }),
      deliveryLogGroups: [...config.snsDeliveryLogGroups],
      fingerprint: (e164: string) => fingerprinter.destination(e164),
      clock,
      ...(config.snsSenderId ? { senderId: config.snsSenderId } : {}),
    });
  }
  const authToken = config.providerAuthTokenSecretArn
    ? await readSecretString(
        new SecretsManagerClient({ region: config.region }),
        config.providerAuthTokenSecretArn,
      )
    : config.providerAuthToken;
  return createTwilioProvider({
    baseUrl: config.providerBaseUrl,
    accountSid: config.providerAccountSid,
    authToken,
    from: config.providerFrom,
    name: config.provider,
    lookupTimeoutMs: config.providerLookupTimeoutMs,
    ...(config.providerStatusCallbackBase ? { statusCallbackBase: config.providerStatusCallbackBase } : {}),
    clock,
  });
}

/**
 * A provider built on first use: only the sender and the reconciler ever call it, so only they
 * need (and are granted) the provider's secrets; the API and the forwarder never load them.
 */
function lazyProvider(name: string, build: () => Promise<SmsProvider>): SmsProvider {
  let built: Promise<SmsProvider> | undefined;
  const get = () => {
    built ??= build().catch((error: unknown) => {
      built = undefined; // a failed secret read is retried by the next message
      throw error;
    });
    return built;
  };
  // If the provider cannot be built (e.g. its secret is unreadable), nothing was sent: say so.
  return {
    name,
    async send(command) {
      const provider = await get().catch(() => undefined);
      return provider
        ? provider.send(command)
        : { kind: 'not_sent_retryable', detail: 'provider_unavailable' };
    },
    async lookup(ref) {
      const provider = await get().catch(() => undefined);
      return provider ? provider.lookup(ref) : { kind: 'inconclusive', detail: 'provider_unavailable' };
    },
  };
}

/** Builds the runtime from configuration (module scope in each Lambda entry point). */
export async function createServiceRuntime(
  config: ServiceConfig,
  overrides: {
    readonly clock?: Clock;
    readonly logger?: Logger;
    readonly dynamoClient?: DynamoDBClient;
  } = {},
): Promise<ServiceRuntime> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? new Logger({ serviceName: 'reset-notifier' });
  const fingerprinter = createFingerprinter(await fingerprintSecret(config, clock));
  return {
    config,
    clock,
    logger,
    store: new DynamoNotificationStore({
      client: overrides.dynamoClient ?? new DynamoDBClient(clientConfig(config, config.dynamodbEndpoint)),
      tableName: config.tableName,
      evidenceRetentionDays: config.evidenceRetentionDays,
    }),
    queue: createSqsDispatchQueue(
      new SQSClient(clientConfig(config, config.sqsEndpoint)),
      config.dispatchQueueUrl,
    ),
    cipher: cipherFor(config, clock),
    fingerprinter,
    provider: lazyProvider(config.provider, () => providerFor(config, clock, fingerprinter)),
  };
}
