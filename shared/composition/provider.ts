import { Logger } from '@aws-lambda-powertools/logger';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { PinpointSMSVoiceV2Client } from '@aws-sdk/client-pinpoint-sms-voice-v2';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { readSecretString } from '../adapters/secrets-manager-secret.js';
import type { ServiceConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { InvalidConfigurationError } from '../domain/errors.js';
import type { Fingerprinter } from '../domain/fingerprint.js';
import { NO_ABSENCE_PROOF, type ProviderCapabilities } from '../domain/provider.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import {
  createEumProvider,
  EUM_CAPABILITIES,
  EUM_CLIENT_CONFIG,
  type EumProvider,
} from '../providers/eum/index.js';
import { createSnsProvider, SNS_CLIENT_CONFIG } from '../providers/sns/index.js';
import { createTwilioFeedback } from '../providers/twilio/feedback.js';
import {
  checkTwilioSettings,
  createTwilioProvider,
  TWILIO_CAPABILITIES,
  type TwilioAdapterEvent,
} from '../providers/twilio/index.js';
import { clientConfig } from './clients.js';

const eventLogger = new Logger({ serviceName: 'reset-notifier' });

/**
 * Where a Twilio adapter event goes when the caller gives nothing: one log line (sid and cause only,
 * never a number or a body). The composition root passes a reporter that also records the metric
 * through the service's Powertools `Metrics` (`outcome-metrics.ts`).
 */
function logTwilioEvent(event: TwilioAdapterEvent): void {
  eventLogger.warn('twilio absence proof disabled', {
    event: event.kind,
    message_sid: event.messageSid,
    ...(event.kind === 'redaction_observed' ? { why: event.why } : { age_ms: event.ageMs }),
  });
}

/** The End User Messaging adapter for this configuration; throws when a required setting is missing. */
export function buildEumProvider(config: ServiceConfig, clock: Clock): EumProvider {
  if (!config.eumOriginationIdentity || !config.eumConfigurationSet) {
    throw new InvalidConfigurationError(
      'PROVIDER=eum needs EUM_ORIGINATION_IDENTITY and EUM_CONFIGURATION_SET',
    );
  }
  return createEumProvider({
    // No SDK retries: a retry after a lost response could send a second SMS.
    client: new PinpointSMSVoiceV2Client({
      ...clientConfig(config, config.eumEndpoint),
      ...EUM_CLIENT_CONFIG,
    }),
    originationIdentity: config.eumOriginationIdentity,
    configurationSetName: config.eumConfigurationSet,
    ...(config.eumMaxPrice ? { maxPrice: config.eumMaxPrice } : {}),
    ...(config.eumProtectConfigurationId ? { protectConfigurationId: config.eumProtectConfigurationId } : {}),
    messageFeedback: config.eumMessageFeedback,
    clock,
  });
}

async function buildProvider(
  config: ServiceConfig,
  clock: Clock,
  // Kept for the callers' signature: no adapter reads the destination's fingerprint any more.
  _fingerprinter: Fingerprinter,
  onTwilioEvent: (event: TwilioAdapterEvent) => void,
): Promise<SmsProvider> {
  if (config.provider === 'eum') return buildEumProvider(config, clock);
  if (config.provider === 'sns') {
    return createSnsProvider({
      // No SDK retries: a retry after a lost response could send a second SMS.
      sns: new SNSClient({ ...clientConfig(config, config.snsEndpoint), ...SNS_CLIENT_CONFIG }),
      logs: new CloudWatchLogsClient(clientConfig(config, config.logsEndpoint)),
      // The calls the account quota counts are bounded here, where one call serves a whole batch.
      ...(config.providerLookupRatePerSecond === undefined
        ? {}
        : { logsRatePerSecond: config.providerLookupRatePerSecond }),
      logsCallTimeoutMs: config.providerLookupTimeoutMs,
      deliveryLogGroups: [...config.snsDeliveryLogGroups],
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
    ...(config.providerFrom ? { from: config.providerFrom } : {}),
    ...(config.providerMessagingServiceSid
      ? { messagingServiceSid: config.providerMessagingServiceSid }
      : {}),
    // Empty when unset: the adapter refuses to start with a message naming the variable.
    statusCallbackBase: config.providerStatusCallbackBase ?? '',
    redaction: config.providerRedaction,
    listLagAllowanceMs: config.providerListLagAllowanceMs,
    ...(config.providerAbsenceProbeTo ? { absenceProbeTo: config.providerAbsenceProbeTo } : {}),
    name: config.provider,
    lookupTimeoutMs: config.providerLookupTimeoutMs,
    clock,
    onEvent: onTwilioEvent,
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

/** Providers whose feedback API `confirm` forwards user confirmations to (Twilio Message Feedback, End User Messaging PutMessageFeedback). */
const HAS_FEEDBACK: ReadonlySet<ServiceConfig['provider']> = new Set(['twilio', 'simulator', 'eum']);

/**
 * The configured provider, built on first use so a failure to read its secret is retried by the
 * next message. If it cannot be built, nothing was sent: `send` says so, `lookup` is inconclusive.
 */
export function providerFor(
  config: ServiceConfig,
  clock: Clock,
  fingerprinter: Fingerprinter,
  /** Twilio adapter events (absence proofs switched off); default: one log line each. */
  onTwilioEvent: (event: TwilioAdapterEvent) => void = logTwilioEvent,
): SmsProvider {
  // A Twilio provider without a callback base or a sender refuses to start (at cold start, not at
  // the first message): a deployment error must be loud, not an endless provider_unavailable.
  if (config.provider === 'twilio' || config.provider === 'simulator') {
    checkTwilioSettings({
      statusCallbackBase: config.providerStatusCallbackBase,
      from: config.providerFrom,
      messagingServiceSid: config.providerMessagingServiceSid,
      absenceProbeTo: config.providerAbsenceProbeTo,
    });
  }
  let built: Promise<SmsProvider> | undefined;
  const get = () => {
    built ??= buildProvider(config, clock, fingerprinter, onTwilioEvent).catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built.catch(() => undefined);
  };
  return {
    name: config.provider,
    // Known before the adapter is built: decisions must not wait on its secret.
    capabilities: capabilitiesOf(config.provider),
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

/** What each configured provider declares, known without building it. */
export function capabilitiesOf(provider: ServiceConfig['provider']): ProviderCapabilities {
  if (provider === 'sns') return NO_ABSENCE_PROOF;
  if (provider === 'eum') return EUM_CAPABILITIES;
  return TWILIO_CAPABILITIES;
}
