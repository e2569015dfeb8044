/**
 * The metrics of final outcomes, recorded where transitions are written: every writer (sender,
 * reconciler, reconcile workers, receipts, confirmations) goes through the store the composition
 * root hands it, so one decorator sees every committed transition exactly once.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { type FinalOutcome, outcomeOfApplied } from '../domain/zero-sms.js';
import { SERVICE_METRICS, ZERO_SMS_CLASS_METRICS } from '../handlers/service-metrics.js';
import type { NotificationStore } from '../ports/store.js';
import type { ProviderEvent } from '../providers/module.js';
import { DESTINATION_FAULTS } from '../providers/registry.js';
import type { MetricsSink } from './handlers.js';

/**
 * Counts one final outcome: `FinalOutcomes` always; a zero-SMS outcome with a valid destination as
 * `ZeroSmsOutcome` (what the alarm reads) and its class metric; one whose destination was at fault
 * as `ZeroSmsDestinationFault` only (it never pages).
 */
export function recordFinalOutcome(metrics: MetricsSink, outcome: FinalOutcome): void {
  metrics.addMetric(SERVICE_METRICS.finalOutcomes, MetricUnit.Count, 1);
  const zero = outcome.zeroSms;
  if (zero === undefined) return;
  if (!zero.pages) {
    metrics.addMetric(SERVICE_METRICS.zeroSmsDestinationFault, MetricUnit.Count, 1);
    return;
  }
  metrics.addMetric(SERVICE_METRICS.zeroSmsOutcomes, MetricUnit.Count, 1);
  metrics.addMetric(ZERO_SMS_CLASS_METRICS[zero.class], MetricUnit.Count, 1);
}

/**
 * The store, counting the final outcome of every transition it writes (`written` only: a stale
 * write changed nothing, and a write that threw is counted by whichever retry commits it). Every
 * other member is the store's own, so methods added to the port later pass through unchanged.
 * A zero-SMS outcome with a valid destination also gets one log line (key, class, reason and
 * detail; never the number) for the operator the alarm pages.
 */
export function countingFinalOutcomes(
  store: NotificationStore,
  metrics: MetricsSink,
  logger?: Pick<Logger, 'warn'>,
): NotificationStore {
  const transition: NotificationStore['transition'] = async (applied) => {
    const result = await store.transition(applied);
    if (result.kind !== 'written') return result;
    const outcome = outcomeOfApplied(applied, DESTINATION_FAULTS);
    if (outcome === undefined) return result;
    recordFinalOutcome(metrics, outcome);
    if (outcome.zeroSms?.pages) {
      logger?.warn('zero-SMS outcome', {
        idempotency_key: applied.next.idempotencyKey,
        outcome: outcome.zeroSms.class,
        reason: applied.evidence.reason,
        ...(applied.evidence.reasonDetail === undefined
          ? {}
          : { reason_detail: applied.evidence.reasonDetail }),
        attempts: applied.next.attempts,
      });
    }
    return result;
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'transition') return transition;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Reports a provider adapter event (`shared/providers/module.ts`): one log line (ids and cause,
 * never a number or a body) and one metric in the service's namespace, through the same sink as
 * every other metric.
 */
export function providerEventReporter(
  logger: Pick<Logger, 'warn'>,
  metrics: MetricsSink,
): (event: ProviderEvent) => void {
  return (event) => {
    logger.warn(event.message, { ...event.fields });
    metrics.addMetric(event.metric, MetricUnit.Count, 1);
  };
}
