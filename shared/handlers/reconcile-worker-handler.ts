import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseDispatchBody } from '../messages/dispatch-body.js';
import {
  type ItemReport,
  type ReconcileItemDeps,
  type ReconcileSummary,
  reconcileKey,
  tally,
} from '../usecases/reconcile-due.js';

export interface ReconcileWorkerDeps extends ReconcileItemDeps {
  /** Keys handled at once inside one batch (the event source's `maxConcurrency` bounds batches). */
  readonly concurrency?: number;
  readonly onReport?: (key: string, report: ItemReport) => void;
  /** Once per batch, the same counters as a pass (for the log-derived metrics). */
  readonly onSummary?: (summary: ReconcileSummary) => void;
}

/**
 * Reconcile queue batch -> one `reconcileKey` per message, a few at a time. Only a transient fault
 * (throttling, store unavailable) is reported as a batch item failure and comes back; a poison item
 * is isolated by the use case and its message deleted; a body that is not ours is dropped.
 */
export function createReconcileWorkerHandler(deps: ReconcileWorkerDeps) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const summary: ReconcileSummary = {
      examined: 0,
      transitioned: 0,
      rescheduled: 0,
      redriven: 0,
      lookups: 0,
      skipped: 0,
      stale: 0,
      errors: 0,
      poisoned: 0,
      parked: 0,
      enqueued: 0,
      enqueueFailed: 0,
      shardEntries: [],
      shardsWrapped: 0,
      oldestUnknownAgeMs: 0,
      oldestDueLagMs: 0,
    };
    const failures: string[] = [];
    // The same key twice in one batch is one piece of work.
    const seen = new Set<string>();
    const work = event.Records.flatMap((record) => {
      const body = parseDispatchBody(record.body);
      if (!body || seen.has(body.idempotency_key)) return [];
      seen.add(body.idempotency_key);
      return [
        {
          messageId: record.messageId,
          key: body.idempotency_key,
          ...(body.due_at === undefined ? {} : { dueAt: body.due_at }),
        },
      ];
    });
    let next = 0;
    const lanes = Array.from({ length: Math.min(deps.concurrency ?? 4, work.length) }, async () => {
      while (next < work.length) {
        const item = work[next++];
        if (!item) break;
        summary.examined++;
        try {
          const report = await reconcileKey(
            deps,
            item.key,
            item.dueAt === undefined ? {} : { dueAt: item.dueAt },
          );
          tally(summary, report);
          deps.onReport?.(item.key, report);
        } catch {
          // Transient: reported by the use case with its cause; the queue delivers it again.
          summary.errors++;
          failures.push(item.messageId);
        }
      }
    });
    await Promise.all(lanes);
    deps.onSummary?.(summary);
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
