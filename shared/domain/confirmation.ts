/**
 * User confirmation: the caller (the auth service) says the code or link was used. That is the
 * strongest delivery proof the service can get, stronger than any receipt: the message arrived.
 */
import type { EpochMs, NotificationRecord, TransitionIntent } from './notification.js';
import { Actor, ReasonCode as R, NotificationState as S } from './states.js';

/** What a confirmation means for a record. */
export type ConfirmationDecision =
  | { readonly kind: 'transition'; readonly intent: TransitionIntent }
  /** Recorded before: a repeat writes nothing. */
  | { readonly kind: 'already_confirmed' }
  /** No provider call of this command can have reached the user: the caller is confused or lying. */
  | { readonly kind: 'never_sent' };

/**
 * Decides a confirmation from the record alone.
 * - `sent`, `dispatch_unknown`, `dispatching` (the call is in flight and the user already has the
 *   code), `undelivered` (a carrier receipt can be wrong; the user's action is not) and `delivered`
 *   (a receipt came first; the confirmation is still recorded once) -> `delivered`.
 * - `accepted` after at least one attempt (an earlier attempt was judged absent or not sent, yet it
 *   arrived) -> `delivered`: this also stops the next attempt.
 * - `expired` after `unknown_at_expiry` -> `delivered` (the unknown is now known).
 * - never sent: `accepted` with no attempt, `failed`, `expired` for any other reason -> refused.
 */
export function decideConfirmation(record: NotificationRecord, now: EpochMs): ConfirmationDecision {
  if (record.lastReason === R.userConfirmed) return { kind: 'already_confirmed' };
  const neverSent =
    (record.state === S.accepted && record.attempts === 0) ||
    record.state === S.failed ||
    (record.state === S.expired && record.lastReason !== R.unknownAtExpiry);
  if (neverSent) return { kind: 'never_sent' };
  return {
    kind: 'transition',
    intent: { to: S.delivered, reason: R.userConfirmed, actor: Actor.api, at: now },
  };
}
