import type { IngestReceipt, IngestReceiptDeps, ReceiptResult } from '../../usecases/ingest-receipt.js';
import { type EumEventRejection, parseEumNotification, type SnsNotification } from './events.js';

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
      // `reason_detail`, marked when the event was intermediate (it settled nothing).
      detail: `eum:event:${event.eventType}${event.final ? '' : ':not_final'}`,
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

/**
 * The receipts function's handler: every record of the SNS event, in order. A failure of the store
 * throws, so Lambda's asynchronous retry (and then its failure destination) redelivers the batch;
 * the use case is idempotent, so a redelivered event changes nothing twice.
 */
export function createEumReceiptsHandler(
  deps: EumReceiptDeps & { readonly onReport?: (report: EumReceiptReport) => void },
) {
  return async (event: SnsLambdaEvent): Promise<{ readonly reports: readonly EumReceiptReport[] }> => {
    const reports: EumReceiptReport[] = [];
    for (const record of event.Records) {
      const report = await ingestEumNotification(deps, record.Sns);
      deps.onReport?.(report);
      reports.push(report);
    }
    return { reports };
  };
}
