import type { Clock } from '../domain/clock.js';
import { applyLookup, decideReconcile } from '../domain/dispatch.js';
import { applyTransition, type NotificationRecord, type TransitionIntent } from '../domain/notification.js';
import { poisonMove } from '../domain/poison.js';
import type { DispatchPolicy } from '../domain/policy.js';
import { clientReference, type LookupOutcome } from '../domain/provider.js';
import { NotificationState } from '../domain/states.js';
import { secretOf } from '../domain/templates.js';
import type { Cipher } from '../ports/cipher.js';
import type { CommandStore } from '../ports/command-store.js';
import type { DispatchQueue } from '../ports/queue.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import { UseCaseError } from './errors.js';
import { describeError, type ErrorDescription, isTransientFault } from './fault-description.js';
import { openPayload } from './payload-seal.js';

// The reconcile worker's use case: one due key at a time, as a reconcile queue message (or an
// inline pass, `reconcile-due.ts`) hands it over.

/** What handling one due key needs (the reconcile worker, or an inline pass). */
export interface ReconcileItemDeps {
  /** The store in its command role: a strong read, then at most one guarded write. */
  readonly store: CommandStore;
  readonly cipher: Cipher;
  /** Lookups bounded by the per-provider token bucket (see `rate-limit.ts`). */
  readonly provider: SmsProvider;
  /**
   * Every listed provider (`PROVIDERS`), each bounded likewise: a lookup goes to the provider of
   * the record's current attempt, whose capabilities judge its answer (docs/providers/failover.md).
   * Unset: every lookup goes to `provider`.
   */
  readonly providers?: readonly SmsProvider[];
  /** The dispatch queue: an `accepted` key whose message was lost is put back on it (never a send). */
  readonly queue: DispatchQueue;
  readonly clock: Clock;
  readonly policy: DispatchPolicy;
  /**
   * With a provider that pushes receipts, a `sent` message is first status-polled only this long
   * after it was sent: the receipt is the normal path, the poll a fallback. 0 = poll as before.
   */
  readonly receiptGraceMs?: number;
  /** Called for every item a pass could not handle, with its key and a PII-free cause. */
  readonly onItemError?: (report: ItemErrorReport) => void;
}

/** One item a pass could not handle. */
export interface ItemErrorReport {
  readonly idempotencyKey: string;
  readonly cause: ErrorDescription;
  /** `retry`: left due (a transient fault); `poisoned`/`parked`: moved out of the way. */
  readonly action: 'retry' | 'poisoned' | 'parked' | 'poison_mark_failed';
  readonly poisonCount?: number;
}

/** What handling one key did. */
export type ItemReport =
  | { readonly kind: 'missing' }
  | { readonly kind: 'skipped'; readonly why: string }
  | { readonly kind: 'stale' }
  | { readonly kind: 'transitioned'; readonly to: string; readonly reason: string; readonly lookup: boolean }
  | { readonly kind: 'rescheduled'; readonly lookup: boolean }
  | { readonly kind: 'redriven' }
  | { readonly kind: 'poisoned'; readonly poisonCount: number; readonly parked: boolean }
  | { readonly kind: 'error'; readonly transient: boolean };

/**
 * Handles one due key (what a reconcile worker does with one queue message): a strong read, then
 * the decision from the record alone (expiry, lease, re-drive), then at most one provider lookup.
 * Duplicate and stale messages end as skips: the item is no longer due once handled. An item that
 * cannot be read or handled is isolated (counted, logged with its key and cause, moved to a later
 * due time, parked after a few tries), never deleted; a transient store fault is thrown so the
 * queue delivers the message again.
 */
export async function reconcileKey(
  deps: ReconcileItemDeps,
  idempotencyKey: string,
  seen: { readonly dueAt?: number } = {},
): Promise<ItemReport> {
  try {
    return await handleKey(deps, idempotencyKey, seen.dueAt);
  } catch (error) {
    const cause = describeError(error);
    if (isTransientFault(error)) {
      deps.onItemError?.({ idempotencyKey, cause, action: 'retry' });
      throw error;
    }
    return poison(deps, idempotencyKey, cause);
  }
}

async function poison(
  deps: ReconcileItemDeps,
  idempotencyKey: string,
  cause: ErrorDescription,
): Promise<ItemReport> {
  const now = deps.clock.now();
  try {
    const mark = await deps.store.markPoison(idempotencyKey, now, (count) => poisonMove(count, now));
    if (!mark) return { kind: 'missing' };
    deps.onItemError?.({
      idempotencyKey,
      cause,
      action: mark.parked ? 'parked' : 'poisoned',
      poisonCount: mark.poisonCount,
    });
    return { kind: 'poisoned', poisonCount: mark.poisonCount, parked: mark.parked };
  } catch (error) {
    deps.onItemError?.({ idempotencyKey, cause: describeError(error), action: 'poison_mark_failed' });
    return { kind: 'error', transient: true };
  }
}

async function handleKey(
  deps: ReconcileItemDeps,
  idempotencyKey: string,
  seenDueAt: number | undefined,
): Promise<ItemReport> {
  const stored = await deps.store.get(idempotencyKey);
  if (!stored) return { kind: 'missing' };
  const record = stored.record;
  // A copy from an earlier pass: the item was handled since (every handling moves or clears its due
  // time). It is still in the due index if due, so the next pass enqueues it afresh: nothing is lost.
  if (seenDueAt !== undefined && record.dueAt !== seenDueAt) return { kind: 'skipped', why: 'handled_since' };
  const now = deps.clock.now();
  // Decided from the record alone, before any payload is opened: expiry of an `accepted` command and
  // a lease that ran out never depend on the cipher or the provider.
  const step = decideReconcile(record, now, deps.policy);
  switch (step.kind) {
    case 'skip':
      return { kind: 'skipped', why: step.why };
    case 'transition':
      return written(await write(deps, record, step.intent), step.intent, false);
    case 'redrive': {
      const { failed } = await deps.queue.enqueue([
        {
          id: record.idempotencyKey,
          message: { idempotencyKey: record.idempotencyKey, version: record.version, delaySeconds: 0 },
        },
      ]);
      if (failed.length) throw new RedriveFailedError(`redrive of ${record.idempotencyKey} failed`);
      const moved = await deps.store.reschedule(record, step.nextDueAt);
      return moved.kind === 'written' ? { kind: 'redriven' } : { kind: 'stale' };
    }
    case 'lookup': {
      const graceUntil = receiptGraceUntil(deps, record);
      if (graceUntil !== undefined && now < graceUntil) {
        // The receipt is the normal path: no status poll before the grace time has passed.
        const moved = await deps.store.reschedule(record, graceUntil);
        return moved.kind === 'written' ? { kind: 'rescheduled', lookup: false } : { kind: 'stale' };
      }
      // Any failure to open the payload or to ask the provider is an inconclusive read; past the
      // token's expiry the domain then expires the command (and the store drops the payload).
      const provider = providerOfRecord(deps, record);
      const lookup = await lookupAttempt({ ...deps, provider }, record, stored.sealedPayload);
      const next = applyLookup(record, lookup, deps.clock.now(), deps.policy, provider.capabilities);
      if ('kind' in next) {
        const moved = await deps.store.reschedule(record, next.dueAt);
        return moved.kind === 'written' ? { kind: 'rescheduled', lookup: true } : { kind: 'stale' };
      }
      return written(await write(deps, record, withReceiptGrace({ ...deps, provider }, next)), next, true);
    }
  }
}

/**
 * The provider of the record's current attempt (the claim names it): its lookups, its capabilities.
 * A provider no longer listed, or no list: `provider`, as without failover.
 */
function providerOfRecord(
  deps: Pick<ReconcileItemDeps, 'provider' | 'providers'>,
  record: NotificationRecord,
): SmsProvider {
  return deps.providers?.find((p) => p.name === record.provider.name) ?? deps.provider;
}

/** When a `sent` record's first status poll may happen, if the provider pushes receipts. */
function receiptGraceUntil(deps: ReconcileItemDeps, record: NotificationRecord): number | undefined {
  if (record.state !== NotificationState.sent) return undefined;
  if (!providerOfRecord(deps, record).capabilities.receipts || !deps.receiptGraceMs) return undefined;
  return (record.sentAt ?? record.updatedAt) + deps.receiptGraceMs;
}

/**
 * A transition into `sent` schedules its first status poll after the receipt grace time (when the
 * provider pushes receipts): the poll is the fallback for a receipt that did not come.
 */
export function withReceiptGrace(
  deps: Pick<ReconcileItemDeps, 'provider' | 'receiptGraceMs' | 'policy'>,
  intent: TransitionIntent,
): TransitionIntent {
  if (intent.to !== NotificationState.sent || intent.set?.dueAt === undefined || intent.set.closed)
    return intent;
  if (!deps.provider.capabilities.receipts || !deps.receiptGraceMs) return intent;
  const dueAt = intent.at + Math.max(deps.receiptGraceMs, deps.policy.statusPollMs);
  return { ...intent, set: { ...intent.set, dueAt } };
}

/** The re-drive of a lost dispatch message could not be enqueued (retried by the queue). */
export class RedriveFailedError extends UseCaseError {
  readonly code = 'redrive_enqueue_failed';
  override readonly name = 'RedriveFailedError';
}

async function write(deps: ReconcileItemDeps, record: NotificationRecord, intent: TransitionIntent) {
  return deps.store.transition(applyTransition(record, intent));
}

function written(
  result: { readonly kind: 'written' | 'stale' },
  intent: TransitionIntent,
  lookup: boolean,
): ItemReport {
  return result.kind === 'written'
    ? { kind: 'transitioned', to: intent.to, reason: intent.reason, lookup }
    : { kind: 'stale' };
}

async function lookupAttempt(
  deps: ReconcileItemDeps,
  record: NotificationRecord,
  sealedPayload: string | undefined,
): Promise<LookupOutcome> {
  if (!sealedPayload) return { kind: 'inconclusive', detail: 'payload_unavailable' };
  let payload: Awaited<ReturnType<typeof openPayload>>;
  try {
    payload = await openPayload(deps.cipher, record.idempotencyKey, sealedPayload);
  } catch (error) {
    // A disabled or changed key must not keep the command alive: this is just an inconclusive read.
    deps.onItemError?.({
      idempotencyKey: record.idempotencyKey,
      cause: describeError(error),
      action: 'retry',
    });
    return { kind: 'inconclusive', detail: `payload_unreadable:${(error as Error).name}` };
  }
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
