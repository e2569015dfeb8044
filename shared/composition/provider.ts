import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { readSecretString } from '../adapters/secrets-manager-secret.js';
import type { ServiceConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { Fingerprinter } from '../domain/fingerprint.js';
import { NO_ABSENCE_PROOF, type SmsProvider } from '../domain/provider.js';
import { createSnsProvider, SNS_CLIENT_CONFIG } from '../providers/sns/index.js';
import { createTwilioFeedback } from '../providers/twilio/feedback.js';
import { createTwilioProvider, TWILIO_CAPABILITIES } from '../providers/twilio/index.js';

async function buildProvider(
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
  const twilio = createTwilioProvider({
    baseUrl: config.providerBaseUrl,
    accountSid: config.providerAccountSid,
    authToken,
    from: config.providerFrom,
    name: config.provider,
    lookupTimeoutMs: config.providerLookupTimeoutMs,
    ...(config.providerStatusCallbackBase ? { statusCallbackBase: config.providerStatusCallbackBase } : {}),
    clock,
  });
  const feedback = createTwilioFeedback({
    baseUrl: config.providerBaseUrl,
    accountSid: config.providerAccountSid,
    authToken,
  });
  return withFeedback(twilio, feedback.confirm);
}

/** The adapter with the port's optional `confirm` (a provider's feedback API) added. */
function withFeedback(adapter: SmsProvider, confirm: NonNullable<SmsProvider['confirm']>): SmsProvider {
  return {
    name: adapter.name,
    capabilities: adapter.capabilities,
    send: (command) => adapter.send(command),
    lookup: (ref) => adapter.lookup(ref),
    confirm,
  };
}

/** Providers whose feedback API `confirm` forwards user confirmations to. */
const HAS_FEEDBACK: ReadonlySet<ServiceConfig['provider']> = new Set(['twilio', 'simulator']);

/**
 * The configured provider, built on first use so a failure to read its secret is retried by the
 * next message. If it cannot be built, nothing was sent: `send` says so, `lookup` is inconclusive.
 */
export function providerFor(config: ServiceConfig, clock: Clock, fingerprinter: Fingerprinter): SmsProvider {
  let built: Promise<SmsProvider> | undefined;
  const get = () => {
    built ??= buildProvider(config, clock, fingerprinter).catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built.catch(() => undefined);
  };
  return {
    name: config.provider,
    // Known before the adapter is built: decisions must not wait on its secret.
    capabilities: config.provider === 'sns' ? NO_ABSENCE_PROOF : TWILIO_CAPABILITIES,
    async send(command) {
      const provider = await get();
      return provider
        ? provider.send(command)
        : { kind: 'not_sent_retryable', detail: 'provider_unavailable' };
    },
    async lookup(ref) {
      const provider = await get();
      return provider ? provider.lookup(ref) : { kind: 'inconclusive', detail: 'provider_unavailable' };
    },
    ...(HAS_FEEDBACK.has(config.provider)
      ? {
          async confirm(messageId: string) {
            const provider = await get();
            return provider?.confirm
              ? provider.confirm(messageId)
              : { kind: 'failed', detail: provider ? 'no_feedback_api' : 'provider_unavailable' };
          },
        }
      : {}),
  };
}
