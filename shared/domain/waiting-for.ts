import { type EpochMs, isFinal, type NotificationRecord } from './notification.js';
import { ReasonCode as R, NotificationState as S } from './states.js';

/** What a command that is not final waits for next. */
export const WaitKind = {
  /** `accepted` and due: a sender takes it off the queue; at `until` the reconciler puts it on the queue again. */
  senderPickup: 'sender_pickup',
  /** `accepted` after a retryable refusal: the next attempt may start at `until` (`nextAttemptAt`). */
  retryBackoff: 'retry_backoff',
  /** `dispatching`: the provider call is in flight; its lease runs out at `until` (`leaseUntil`). */
  providerCall: 'provider_call',
  /** `dispatch_unknown` after one complete absent read: the second read is due at `until` (first read + settle time). */
  secondAbsenceRead: 'second_absence_read',
  /** `dispatch_unknown`: the next provider read is due at `until`. */
  reconcileCheck: 'reconcile_check',
  /** `sent`: a receipt, or the next status check at `until`. */
  statusCheck: 'status_check',
} as const;
export type WaitKind = (typeof WaitKind)[keyof typeof WaitKind];

/** What the service waits for, and until when (docs/design.md#waiting-for: nothing waits past the token's life unbounded). */
export interface WaitingFor {
  readonly kind: WaitKind;
  /** When the wait ends: the scheduled time, or the expiry when that comes first. */
  readonly until: EpochMs;
  /**
   * The scheduled time lies at or past `expiresAt`: at `until` the token is dead, and the command
   * expires instead (a `sent` message is still polled until its status horizon, so never bounded).
   */
  readonly boundedByExpiry: boolean;
}

/** The fields {@link waitingFor} reads. */
export type WaitingRecord = Pick<
  NotificationRecord,
  | 'state'
  | 'closed'
  | 'lastReason'
  | 'updatedAt'
  | 'expiresAt'
  | 'leaseUntil'
  | 'nextAttemptAt'
  | 'absentSince'
  | 'dueAt'
>;

/**
 * What a non-final command waits for and until when, read off the record alone; undefined for a
 * final one. The times are the ones the service acts on: the lease for an attempt in flight, the
 * retry backoff's `nextAttemptAt`, and `dueAt` for everything the reconciler does next (the second
 * absence read is scheduled at the first read plus the settle time, a status check at its poll
 * time, a re-drive at the queue safety net). Everything but a status check ends by `expiresAt`.
 * Used by the public view, so the API, `reset-notifier status` and the console say the same.
 */
export function waitingFor(record: WaitingRecord): WaitingFor | undefined {
  if (isFinal(record)) return undefined;
  const wait = (kind: WaitKind, at: EpochMs | undefined, bounded = true): WaitingFor => {
    const scheduled = at ?? record.expiresAt;
    const boundedByExpiry = bounded && scheduled >= record.expiresAt;
    return { kind, until: boundedByExpiry ? record.expiresAt : scheduled, boundedByExpiry };
  };
  switch (record.state) {
    case S.accepted: {
      // A retryable refusal sets the next attempt after the transition's own time; every other way
      // into `accepted` (admission, absence proven, not sent, claim abandoned) makes it due at once.
      const backoff =
        record.lastReason === R.providerRejectedRetryable &&
        record.nextAttemptAt !== undefined &&
        record.nextAttemptAt > record.updatedAt;
      return backoff
        ? wait(WaitKind.retryBackoff, record.nextAttemptAt)
        : wait(WaitKind.senderPickup, record.dueAt);
    }
    case S.dispatching:
      return wait(WaitKind.providerCall, record.leaseUntil ?? record.dueAt);
    case S.dispatchUnknown:
      return record.absentSince === undefined
        ? wait(WaitKind.reconcileCheck, record.dueAt)
        : wait(WaitKind.secondAbsenceRead, record.dueAt);
    case S.sent:
      return wait(WaitKind.statusCheck, record.dueAt, false);
    default:
      return undefined;
  }
}
