import type { Clock } from '../domain/clock.js';
import { applyLookup, decideReconcile } from '../domain/dispatch.js';
import { applyTransition, type NotificationRecord } from '../domain/notification.js';
import type { DispatchPolicy } from '../domain/policy.js';
import { clientReference, type LookupOutcome, type SmsProvider } from '../domain/provider.js';
import { secretOf } from '../domain/templates.js';
import type { Cipher } from '../ports/cipher.js';
import type { DispatchQueue } from '../ports/queue.js';
import type { NotificationStore } from '../ports/store.js';
import { openPayload } from './payload-seal.js';

export interface ReconcileDeps {
  readonly store: NotificationStore;
  readonly cipher: Cipher;
  readonly provider: SmsProvider;
  readonly queue: DispatchQueue;
  readonly clock: Clock;
  readonly policy: DispatchPolicy;
  /** At most this many items per pass (the schedule runs again soon). */
  readonly maxItems?: number;
  /** Items handled in parallel. */
  readonly concurrency?: number;
}

/** Counts of what one reconciler pass did. */
export interface ReconcileSummary {
  examined: number;
  transitioned: number;
  rescheduled: number;
  redriven: number;
  lookups: number;
  skipped: number;
  stale: number;
  errors: number;
  /** Age in ms of the oldest `dispatch_unknown` seen (for the alarm metric). */
  oldestUnknownAgeMs: number;
}

/**
 * One reconciler pass over the sparse due index. It reads provider status and moves records;
 * it never sends an SMS (re-driving an `accepted` key onto the queue is not a send).
 */
export async function reconcileDue(deps: ReconcileDeps): Promise<ReconcileSummary> {
  const summary: ReconcileSummary = {
    examined: 0,
    transitioned: 0,
    rescheduled: 0,
    redriven: 0,
    lookups: 0,
    skipped: 0,
    stale: 0,
    errors: 0,
    oldestUnknownAgeMs: 0,
  };
  const maxItems = deps.maxItems ?? 500;
  const now = deps.clock.now();
  let cursor: string | undefined;
  do {
    const page = await deps.store.due(now, Math.min(100, maxItems - summary.examined), cursor);
    cursor = page.cursor;
    await runBounded(page.items, deps.concurrency ?? 8, async (record) => {
      summary.examined++;
      if (record.state === 'dispatch_unknown' && record.unknownSince !== undefined) {
        summary.oldestUnknownAgeMs = Math.max(summary.oldestUnknownAgeMs, now - record.unknownSince);
      }
      try {
        await reconcileOne(deps, record, summary);
      } catch {
        // One bad item must not stop the pass; it stays due and is retried next pass.
        summary.errors++;
      }
    });
  } while (cursor && summary.examined < maxItems);
  return summary;
}

async function reconcileOne(
  deps: ReconcileDeps,
  record: NotificationRecord,
  summary: ReconcileSummary,
): Promise<void> {
  const now = deps.clock.now();
  const step = decideReconcile(record, now, deps.policy);
  switch (step.kind) {
    case 'skip':
      summary.skipped++;
      return;
    case 'transition':
      count(summary, await deps.store.transition(applyTransition(record, step.intent)), 'transitioned');
      return;
    case 'redrive': {
      const { failed } = await deps.queue.enqueue([
        {
          id: record.idempotencyKey,
          message: { idempotencyKey: record.idempotencyKey, version: record.version, delaySeconds: 0 },
        },
      ]);
      if (failed.length) throw new Error('redrive enqueue failed');
      summary.redriven++;
      count(summary, await deps.store.reschedule(record, step.nextDueAt), 'rescheduled');
      return;
    }
    case 'lookup': {
      // The index copy may lag: read the command strongly and act only if nothing moved since.
      const stored = await deps.store.get(record.idempotencyKey);
      if (!stored || stored.record.version !== record.version) {
        summary.stale++;
        return;
      }
      summary.lookups++;
      // The strong read carries every field (the index projects only what the pass needs).
      const current = stored.record;
      const lookup = await lookupAttempt(deps, current, stored.sealedPayload);
      const next = applyLookup(current, lookup, deps.clock.now(), deps.policy, deps.provider.capabilities);
      if ('kind' in next) {
        count(summary, await deps.store.reschedule(current, next.dueAt), 'rescheduled');
      } else {
        count(summary, await deps.store.transition(applyTransition(current, next)), 'transitioned');
      }
    }
  }
}

async function lookupAttempt(
  deps: ReconcileDeps,
  record: NotificationRecord,
  sealedPayload: string | undefined,
): Promise<LookupOutcome> {
  if (!sealedPayload) return { kind: 'inconclusive', detail: 'payload_unavailable' };
  const payload = await openPayload(deps.cipher, record.idempotencyKey, sealedPayload);
  // Windows start at the attempt's claim; records claimed before these fields existed fall back to
  // the unknown's start, never to admission.
  const attemptStartedAt = record.attemptStartedAt ?? record.unknownSince ?? record.updatedAt;
  try {
    return await deps.provider.lookup({
      ...(record.provider.messageId === undefined ? {} : { messageId: record.provider.messageId }),
      idempotencyKey: record.idempotencyKey,
      attempt: record.attempts,
      clientReference: clientReference(record.idempotencyKey, record.attempts),
      to: payload.phone,
      secret: secretOf(payload.params),
      attemptStartedAt,
      callDeadline: record.callDeadline ?? record.unknownSince ?? record.updatedAt,
    });
  } catch (error) {
    return { kind: 'inconclusive', detail: `adapter_threw:${(error as Error).name}` };
  }
}

function count(
  summary: ReconcileSummary,
  result: { readonly kind: 'written' | 'stale' },
  field: 'transitioned' | 'rescheduled',
): void {
  if (result.kind === 'written') summary[field]++;
  else summary.stale++;
}

async function runBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(workers);
}
