import type { Clock } from '../domain/clock.js';
import { applyReceipt } from '../domain/dispatch.js';
import { type AppliedTransition, applyTransition, type NotificationRecord } from '../domain/notification.js';
import type { DispatchPolicy } from '../domain/policy.js';
import { NotificationState } from '../domain/states.js';
import type { NotificationStore, TransitionWriteResult } from '../ports/store.js';

/** Options of {@link keepProviderMessageIds}. */
export interface KeepIdsOptions {
  readonly clock: Clock;
  readonly policy: DispatchPolicy;
  /** Waits between write attempts; default setTimeout. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Write attempts in all (default 4), spaced 100, 200, 400 ms, never past the claim's lease. */
  readonly attempts?: number;
  /** Called when the id reached the record another way than the sender's own write. */
  readonly onRecovered?: (idempotencyKey: string, how: 'retried' | 'late_evidence') => void;
}

/**
 * A store for the sender that never loses the message id a provider returned (for SNS it is the
 * only way the message can ever be found again):
 *
 * 1. The outcome write that records a new provider id is retried, within the claim's lease, when
 *    it throws (a DynamoDB error or a lost response). The write is conditional on the version, so
 *    a retry can never apply twice; a retry that finds our own write already in place is success.
 * 2. If the write is stale because the lease was taken over meanwhile (the reconciler moved the
 *    record to `dispatch_unknown` for the same attempt, without an id), the id is applied as the
 *    positive evidence it is, through the domain's receipt rule: the record takes the id, becomes
 *    `sent`, and never sends again.
 *
 * What still loses the id: every write attempt throwing until the lease ends. The record then
 * ends `unknown_at_expiry` with no second send (never a duplicate).
 */
export function keepProviderMessageIds(store: NotificationStore, options: KeepIdsOptions): NotificationStore {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const attempts = Math.max(1, options.attempts ?? 4);

  const writeWithRetry = async (
    applied: AppliedTransition,
    until: number,
  ): Promise<{ result: TransitionWriteResult; retried: boolean }> => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const result = await store.transition(applied);
        const retried = attempt > 1;
        // A retry that finds our own earlier write in place: that write did happen, its answer was lost.
        if (
          retried &&
          result.kind === 'stale' &&
          result.current !== undefined &&
          isOurs(result.current, applied)
        ) {
          return { result: { kind: 'written', record: result.current }, retried };
        }
        return { result, retried };
      } catch (error) {
        const waitMs = 100 * 2 ** (attempt - 1);
        if (attempt >= attempts || options.clock.now() + waitMs >= until) throw error;
        await sleep(waitMs);
      }
    }
  };

  return {
    ...bind(store),
    async transition(applied) {
      const id = applied.next.provider.messageId;
      const recordsNewId =
        applied.previous.state === NotificationState.dispatching &&
        id !== undefined &&
        applied.previous.provider.messageId !== id;
      if (!recordsNewId) return store.transition(applied);
      const until = applied.previous.leaseUntil ?? options.clock.now();
      const { result, retried } = await writeWithRetry(applied, until);
      if (result.kind === 'written') {
        if (retried) options.onRecovered?.(applied.next.idempotencyKey, 'retried');
        return result;
      }
      const current = result.current;
      if (
        current === undefined ||
        current.attempts !== applied.next.attempts ||
        current.provider.messageId !== undefined
      ) {
        return result;
      }
      const intent = applyReceipt(
        current,
        { attempt: current.attempts, messageId: id, status: 'sent' },
        options.clock.now(),
        options.policy,
      );
      if ('kind' in intent) return result;
      const late = await store.transition(applyTransition(current, intent)).catch(() => undefined);
      if (late?.kind === 'written') options.onRecovered?.(applied.next.idempotencyKey, 'late_evidence');
      // The sender's own write did lose its race: it reports so, whatever the evidence write did.
      return result;
    },
  };
}

function isOurs(current: NotificationRecord, applied: AppliedTransition): boolean {
  return (
    current.version === applied.next.version &&
    current.state === applied.next.state &&
    current.provider.messageId === applied.next.provider.messageId
  );
}

/** The store's methods bound to it, so the wrapper can spread them. */
function bind(store: NotificationStore): NotificationStore {
  return {
    admit: store.admit.bind(store),
    get: store.get.bind(store),
    evidence: store.evidence.bind(store),
    byEvent: store.byEvent.bind(store),
    transition: store.transition.bind(store),
    reschedule: store.reschedule.bind(store),
    due: store.due.bind(store),
    dueShardCount: store.dueShardCount,
    dueLanes: store.dueLanes,
    dueInShard: store.dueInShard.bind(store),
    oldestDue: store.oldestDue.bind(store),
    readReconcileCursor: store.readReconcileCursor.bind(store),
    writeReconcileCursor: store.writeReconcileCursor.bind(store),
    markPoison: store.markPoison.bind(store),
  };
}
