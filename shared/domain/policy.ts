import type { EpochMs, NotificationRecord } from './notification.js';

/** Timing settings that decisions depend on. All in milliseconds. */
export interface DispatchPolicy {
  /** No provider call starts at or after `expiresAt - dispatchMarginMs`. */
  readonly dispatchMarginMs: number;
  /** Upper bound of one provider call. */
  readonly providerTimeoutMs: number;
  /** Extra lease time beyond the provider timeout, for the outcome write. */
  readonly leaseSlackMs: number;
  /**
   * Time the claim write itself may take: the lease and the call deadline are decided before the
   * claim is written, and a claim answered late (a slow or retried write) must still leave room for
   * the call rather than give the claim back unused (docs/design.md#states).
   */
  readonly claimWriteBudgetMs: number;
  /** A lookup may conclude "absent" only this long after the unknown outcome began. */
  readonly reconcileSettleMs: number;
  /** Base and cap of exponential backoff for retries and reconciliation checks. */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** How long `sent` is polled for a final status. */
  readonly statusHorizonMs: number;
  /**
   * First interval between status polls of a `sent` item; later polls back off with the message's
   * age (see {@link statusPollDelayMs}).
   */
  readonly statusPollMs: number;
  /** When the reconciler re-drives an `accepted` command the queue did not deliver. */
  readonly queueSafetyNetMs: number;
  /** At most this many provider attempts per command. */
  readonly maxAttempts: number;
  /** A provider call needs at least this much time left to be worth starting. */
  readonly minSendWindowMs: number;
  /**
   * No call starts with less token life left than this: a shorter validity period is below what
   * providers honour (Twilio recommends at least 5 s) and the message could not arrive usefully.
   */
  readonly minValidityMs: number;
}

export const DEFAULT_POLICY: DispatchPolicy = {
  dispatchMarginMs: 5_000,
  providerTimeoutMs: 3_000,
  leaseSlackMs: 5_000,
  claimWriteBudgetMs: 2_000,
  reconcileSettleMs: 10_000,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  statusHorizonMs: 10 * 60_000,
  statusPollMs: 5_000,
  queueSafetyNetMs: 60_000,
  maxAttempts: 5,
  minSendWindowMs: 1_000,
  minValidityMs: 5_000,
};

/** The last instant at which a provider call may start: the margin, and never under the minimum validity. */
export function dispatchDeadline(
  record: Pick<NotificationRecord, 'expiresAt'>,
  policy: Pick<DispatchPolicy, 'dispatchMarginMs' | 'minValidityMs'>,
): EpochMs {
  return record.expiresAt - Math.max(policy.dispatchMarginMs, policy.minValidityMs);
}

/** True when no provider call can start any more (docs/design.md#never-after-expiry: `now >= expires_at - margin`). */
export function isPastDispatchDeadline(
  record: Pick<NotificationRecord, 'expiresAt'>,
  now: EpochMs,
  policy: Pick<DispatchPolicy, 'dispatchMarginMs' | 'minValidityMs'>,
): boolean {
  return now >= dispatchDeadline(record, policy);
}

/** Exponential backoff with a cap; deterministic (jitter is the caller's business). */
export function backoffMs(
  step: number,
  policy: Pick<DispatchPolicy, 'backoffBaseMs' | 'backoffMaxMs'>,
): number {
  const exp = Math.min(step, 20);
  return Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.max(0, exp - 1));
}

/**
 * Later status polls wait this share of the message's age: polls at 1, 1.5, 2.25 ... times the
 * first interval, so a message costs about log1.5(horizon / first interval) polls instead of
 * horizon / interval (at 5 s and a 1 h horizon: 17 polls, not 720). A status read is a fallback
 * (receipts are the normal path) and only informational once the message is sent.
 */
const STATUS_POLL_AGE_SHARE = 0.5;

/** How long after `now` the next status poll of a message sent at `sentAt` is due. */
export function statusPollDelayMs(
  sentAt: EpochMs,
  now: EpochMs,
  policy: Pick<DispatchPolicy, 'statusPollMs'>,
): number {
  return Math.max(policy.statusPollMs, Math.round(Math.max(0, now - sentAt) * STATUS_POLL_AGE_SHARE));
}
