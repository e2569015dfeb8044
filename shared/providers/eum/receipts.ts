import { InvalidConfigurationError } from '../../domain/errors.js';
import type { IngestReceipt, IngestReceiptDeps, ReceiptResult } from '../../usecases/ingest-receipt.js';
import { type EumEventRejection, parseEumNotification, type SnsNotification } from './events.js';
import {
  type FailedInvocationRecord,
  isFailedInvocationRecord,
  isSqsRecordsEvent,
  type KeptReceipt,
  keptReceiptsOf,
  keptReceiptsOfDeadLetters,
  type SqsRecordsEvent,
} from './kept-receipts.js';

/** What one notification did, for logs and metrics. Carries no number and no body. */
export type EumReceiptReport =
  | {
      readonly kind: 'ingested';
      readonly eventType: string;
      /** The event's `isFinal`: a non-final event was handed on as `sent`. */
      readonly final: boolean;
      readonly messageId: string;
      readonly clientReference: string;
      readonly result: ReceiptResult;
    }
  | { readonly kind: 'rejected'; readonly why: EumEventRejection; readonly eventType?: string };

/** Dependencies of {@link ingestEumNotification}. */
export interface EumReceiptDeps extends IngestReceiptDeps {
  /** The receipts use case (`shared/usecases/ingest-receipt.ts`). */
  readonly ingest: IngestReceipt;
  /** The SNS topic the configuration set's event destination publishes to. */
  readonly topicArn: string;
}

/**
 * One SNS-delivered End User Messaging event into the receipts use case: the same use case as
 * Twilio's status callbacks, correlating by the `Context.client_reference` we sent. A rejected
 * notification writes nothing.
 */
export async function ingestEumNotification(
  deps: EumReceiptDeps,
  notification: SnsNotification,
): Promise<EumReceiptReport> {
  const parsed = parseEumNotification(notification, deps.topicArn);
  if (parsed.kind === 'rejected') return parsed;
  const { event } = parsed;
  const result = await deps.ingest(
    { store: deps.store, clock: deps.clock, policy: deps.policy },
    {
      provider: 'eum',
      clientReference: event.clientReference,
      messageId: event.messageId,
      status: event.status,
      providerStatus: event.eventType,
      // The event type is the provider's own status id (`TEXT_CARRIER_UNREACHABLE`): the evidence's
      // `reason_detail`, marked when the event was intermediate (it settled nothing) or a Monitor
      // rule's recommendation (the message went out).
      detail: `eum:event:${event.eventType}${event.monitor ? ':monitor' : event.final ? '' : ':not_final'}`,
      ...(event.notificationId === '' ? {} : { dedupeToken: `sns:${event.notificationId}` }),
    },
  );
  return {
    kind: 'ingested',
    eventType: event.eventType,
    final: event.final,
    messageId: event.messageId,
    clientReference: event.clientReference,
    result,
  };
}

/** Lambda's SNS event, reduced to what we read. */
export interface SnsLambdaEvent {
  readonly Records: readonly { readonly Sns: SnsNotification }[];
}

/** Where kept receipts go (a queue): copies without numbers, re-delivered by the redrive. */
export type KeepReceipts = (kept: readonly KeptReceipt[]) => Promise<void>;

/**
 * The receipts function's handler: every record of the SNS event, in order. A failure of the store
 * throws, so Lambda's asynchronous retry (and then its failure destination) redelivers the batch;
 * the use case is idempotent, so a redelivered event changes nothing twice.
 *
 * With `keep`, the same handler is the keeper: given what Lambda sends an on-failure destination
 * (an invocation that failed every attempt) or the SNS subscription's dead-letter messages, it
 * keeps copies without any phone number ({@link keptReceiptsOf}) and ingests nothing
 * (docs/providers/aws.md#kept-receipts-and-redrive). Without `keep` such an event is refused.
 */
export function createEumReceiptsHandler(
  deps: EumReceiptDeps & {
    readonly onReport?: (report: EumReceiptReport) => void;
    readonly keep?: KeepReceipts;
  },
) {
  return async (
    event: SnsLambdaEvent | FailedInvocationRecord | SqsRecordsEvent,
  ): Promise<{ readonly reports: readonly EumReceiptReport[]; readonly kept?: number }> => {
    if (isFailedInvocationRecord(event) || isSqsRecordsEvent(event)) {
      if (deps.keep === undefined)
        throw new InvalidConfigurationError(
          'receipts: a failed-receipt record reached a function with nowhere to keep it',
        );
      const kept = isSqsRecordsEvent(event) ? keptReceiptsOfDeadLetters(event) : keptReceiptsOf(event);
      await deps.keep(kept);
      return { reports: [], kept: kept.length };
    }
    const reports: EumReceiptReport[] = [];
    for (const record of (event as SnsLambdaEvent).Records) {
      const report = await ingestEumNotification(deps, record.Sns);
      deps.onReport?.(report);
      reports.push(report);
    }
    return { reports };
  };
}

/**
 * Re-delivers kept receipts through the receipts use case, in order: the use case is idempotent,
 * so a copy kept twice (or one whose original did get through) changes nothing twice. A store fault
 * is thrown: the caller keeps the copies it has not confirmed.
 */
export async function redriveKeptReceipts(
  deps: EumReceiptDeps,
  kept: readonly KeptReceipt[],
): Promise<readonly EumReceiptReport[]> {
  const reports: EumReceiptReport[] = [];
  for (const receipt of kept) reports.push(await ingestEumNotification(deps, receipt));
  return reports;
}
