import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { parseDispatchBody } from '../messages/dispatch-body.js';
import { emptyReconcileSummary, type ReconcileSummary, tally } from '../usecases/reconcile-due.js';
import { type ItemReport, type ReconcileItemDeps, reconcileKey } from '../usecases/reconcile-key.js';

export interface ReconcileWorkerDeps extends ReconcileItemDeps {
  /** Keys handled at once inside one batch (the event source's `maxConcurrency` bounds batches). */
  readonly concurrency?: number;
  readonly onReport?: (key: string, report: ItemReport) => void;
  /** Once per batch, the same counters as a pass (for the log-derived metrics). */
  readonly onSummary?: (summary: ReconcileSummary) => void;
}

/**
 * Reconcile queue batch -> one `reconcileKey` per message, a few at a time (Powertools'
 * `BatchProcessor` starts them all; a limiter lets `concurrency` run at once). Only a transient
 * fault (throttling, store unavailable) is reported as a batch item failure and comes back, also
 * when every message met one; a poison item is isolated by the use case and its message deleted; a
 * body that is not ours, and a second copy of a key in the same batch, are dropped.
 */
export function createReconcileWorkerHandler(deps: ReconcileWorkerDeps) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    // A worker reads no shards: its summary has no per-shard entries.
    const summary = emptyReconcileSummary(0);
    // The same key twice in one batch is one piece of work.
    const seen = new Set<string>();
    const limit = limiter(deps.concurrency ?? 4);
    const reconcileOne = async (record: SQSRecord): Promise<void> => {
      const body = parseDispatchBody(record.body);
      if (!body || seen.has(body.idempotency_key)) return;
      const key = body.idempotency_key;
      seen.add(key);
      await limit(async () => {
        summary.examined++;
        try {
          const report = await reconcileKey(
            deps,
            key,
            body.due_at === undefined ? {} : { dueAt: body.due_at },
          );
          tally(summary, report);
          deps.onReport?.(key, report);
        } catch (error) {
          // Transient: reported by the use case with its cause; the queue delivers it again.
          summary.errors++;
          throw error;
        }
      });
    };
    // One processor per invocation: it holds the batch's state, and the local runtime may overlap calls.
    const response = await processPartialResponse(event, reconcileOne, new BatchProcessor(EventType.SQS), {
      throwOnFullBatchFailure: false,
    });
    deps.onSummary?.(summary);
    return response;
  };
}

/** Runs at most `n` tasks at once; the others wait, in the order they asked. */
function limiter(n: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running < n) running++;
    // A finishing task hands its place straight to the next waiting one.
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
