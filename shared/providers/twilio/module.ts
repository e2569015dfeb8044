import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { readSecretString } from '../../adapters/secrets-manager-secret.js';
import type { ServiceConfig } from '../../config.js';
import type { DestinationFaults } from '../../domain/zero-sms.js';
import { SERVICE_METRICS } from '../../handlers/service-metrics.js';
import type { SmsProvider } from '../../ports/sms-provider.js';
import type { ProviderBuildDeps, ProviderEvent, ProviderModule } from '../module.js';
import { withFeedback } from '../module.js';
import { createTwilioFeedback } from './feedback.js';
import {
  checkTwilioSettings,
  createTwilioProvider,
  TWILIO_CAPABILITIES,
  type TwilioAdapterEvent,
} from './provider.js';

/**
 * Twilio error codes that put the fault on the destination (the number, not the service, the
 * provider or the carrier): the API refusals of `PERMANENT_TWILIO_CODES` that name the number, and
 * the delivery errors 30005 (unknown destination handset) and 30006 (landline or unreachable
 * carrier). 30003 (handset unreachable: switched off, out of coverage) and 30004/30007 (blocked,
 * filtered) are not: the number is valid and the outcome pages.
 */
export const TWILIO_DESTINATION_FAULTS: DestinationFaults = {
  sources: ['twilio'],
  parts: {
    '21211': 'invalid_number',
    '21214': 'invalid_number',
    '21217': 'invalid_number',
    '21265': 'invalid_number',
    '21407': 'invalid_number',
    '21610': 'opted_out',
    '21614': 'invalid_number',
    '30005': 'invalid_number',
    '30006': 'invalid_number',
  },
};

/** The metric of each Twilio adapter event: absence proofs switched off. */
const TWILIO_EVENT_METRICS: Readonly<Record<TwilioAdapterEvent['kind'], string>> = {
  redaction_observed: SERVICE_METRICS.twilioRedactionObserved,
  list_lag_observed: SERVICE_METRICS.twilioListLagObserved,
};

/** A Twilio adapter event as the composition root reports it (sid and cause only, never a number or a body). */
export function twilioEvent(event: TwilioAdapterEvent): ProviderEvent {
  return {
    provider: 'twilio',
    message: 'twilio absence proof disabled',
    metric: TWILIO_EVENT_METRICS[event.kind],
    fields: {
      event: event.kind,
      message_sid: event.messageSid,
      ...(event.kind === 'redaction_observed' ? { why: event.why } : { age_ms: event.ageMs }),
    },
  };
}

/** Refuses a Twilio(-compatible) provider without a callback base or a sender, at cold start. */
export function checkTwilioConfig(config: ServiceConfig): void {
  checkTwilioSettings({
    statusCallbackBase: config.providerStatusCallbackBase,
    from: config.providerFrom,
    messagingServiceSid: config.providerMessagingServiceSid,
    absenceProbeTo: config.providerAbsenceProbeTo,
  });
}

/**
 * The Twilio adapter and its Message Feedback for these settings (also what the simulator kind
 * builds: the same API at another base URL). The auth token comes from its secret in AWS.
 */
export async function buildTwilioProvider(
  config: ServiceConfig,
  { clock, onEvent }: ProviderBuildDeps,
): Promise<SmsProvider> {
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
    onEvent: (event) => onEvent(twilioEvent(event)),
  });
  const feedback = createTwilioFeedback({
    baseUrl: config.providerBaseUrl,
    accountSid: config.providerAccountSid,
    authToken,
  });
  return withFeedback(twilio, feedback.confirm);
}

/** Twilio (docs/providers/twilio.md): absence provable under conditions, receipts by status callback. */
export const twilioModule: ProviderModule<'twilio'> = {
  kind: 'twilio',
  capabilities: TWILIO_CAPABILITIES,
  settings: [
    'twilioBaseUrl',
    'twilioAccountSid',
    'twilioAuthToken',
    'twilioAuthTokenSecret',
    'twilioFrom',
    'twilioMessagingService',
    'twilioStatusCallbackBase',
    'twilioRedaction',
    'twilioListLagAllowance',
    'twilioAbsenceProbeTo',
  ],
  feedback: true,
  boundsOwnLookups: false,
  destinationFaults: TWILIO_DESTINATION_FAULTS,
  check: checkTwilioConfig,
  build: buildTwilioProvider,
};
