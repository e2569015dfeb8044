/**
 * The service's CloudWatch metrics: the contract between the composition root, which records them
 * with Powertools `Metrics` and publishes them as EMF once per invocation, and the stack's alarms.
 * Pure: names only, no SDK. Every metric carries one dimension, Powertools' `service`; values are
 * counts and ages, never a number, key, code, URL or secret.
 */
import type { ZeroSmsClass } from '../domain/zero-sms.js';
import { RECEIPT_SIGNATURE_FAILURES } from './receipts-handler.js';

/** The service's name: Powertools' `service` (log field and the metrics' one dimension). */
export const SERVICE_NAME = 'reset-notifier';

/** The dimensions every service metric is published with (what an alarm's metric must name). */
export const SERVICE_METRIC_DIMENSIONS: Readonly<Record<string, string>> = { service: SERVICE_NAME };

/**
 * Metric names, and what records them:
 * - sender, per message: `ProviderSends` (a provider call was made), `ProviderUnknownOutcomes` (its
 *   outcome is unknown), `SenderRecordFailures` (the dispatch threw), `SenderClockSkewRefusals` (its
 *   clock was off the store's beyond the bound: nothing sent, docs/design.md#clock-skew); per
 *   view of the provider circuits, one `ProviderCircuit_<provider>` each ({@link circuitMetric});
 * - reconciler, per pass: `OldestDispatchUnknownAgeMs`, `OldestDueLagMs` (milliseconds) and
 *   `ReconcileItemErrors`;
 * - reconcile worker, per batch: `ReconcileWorkerItemErrors`, `ReconcilePoisonItems`, `ReconcileParkedItems`;
 * - api, per abuse-limit refusal: `AdmissionRefusals`;
 * - receipts, per callback whose signature did not verify: `ReceiptSignatureFailures`;
 * - every writer, per command that becomes final (the store the composition root hands out counts
 *   it, see `shared/domain/zero-sms.ts`): `FinalOutcomes`; when it ended without any SMS and the
 *   destination was valid, `ZeroSmsOutcome` (the alarm's numerator) and its class metric
 *   ({@link ZERO_SMS_CLASS_METRICS}); when the destination was at fault, `ZeroSmsDestinationFault`;
 * - the Twilio adapter, per absence proof switched off: `TwilioRedactionObserved`, `TwilioListLagObserved`.
 */
export const SERVICE_METRICS = {
  providerSends: 'ProviderSends',
  providerUnknownOutcomes: 'ProviderUnknownOutcomes',
  senderRecordFailures: 'SenderRecordFailures',
  senderClockSkew: 'SenderClockSkewRefusals',
  oldestDispatchUnknownAge: 'OldestDispatchUnknownAgeMs',
  reconcileItemErrors: 'ReconcileItemErrors',
  admissionRefusals: 'AdmissionRefusals',
  oldestDueLag: 'OldestDueLagMs',
  reconcileWorkerItemErrors: 'ReconcileWorkerItemErrors',
  reconcilePoisoned: 'ReconcilePoisonItems',
  reconcileParked: 'ReconcileParkedItems',
  receiptSignatureFailures: RECEIPT_SIGNATURE_FAILURES,
  finalOutcomes: 'FinalOutcomes',
  zeroSmsOutcomes: 'ZeroSmsOutcome',
  zeroSmsDestinationFault: 'ZeroSmsDestinationFault',
  twilioRedactionObserved: 'TwilioRedactionObserved',
  twilioListLagObserved: 'TwilioListLagObserved',
} as const;

/**
 * Each provider's circuit as a sender last saw it, published with every view the sender takes
 * (docs/providers/failover.md#circuit): {@link CIRCUIT_LEVELS} under `ProviderCircuit_<provider>`,
 * one metric per provider (the service's metrics carry the one `service` dimension).
 */
export function circuitMetric(provider: string): string {
  return `ProviderCircuit_${provider}`;
}

/**
 * A circuit's state as a number: a sender sees `open` while another sender's probe is out, so
 * the `open` alarm (Maximum >= 2) holds until the circuit closes again.
 */
export const CIRCUIT_LEVELS = { closed: 0, half_open: 1, open: 2 } as const;

/** One metric per zero-SMS class (valid destination only): what the dashboard stacks under the alarm. */
export const ZERO_SMS_CLASS_METRICS: Readonly<Record<ZeroSmsClass, string>> = {
  unknown_at_expiry: 'ZeroSmsUnknownAtExpiry',
  expired_before_dispatch: 'ZeroSmsExpiredBeforeDispatch',
  retry_exhausted: 'ZeroSmsRetryExhausted',
  failed: 'ZeroSmsFailed',
  undelivered: 'ZeroSmsUndelivered',
};
