/**
 * The notification state machine: states, reason codes, actors and the transition table.
 * Pure data shared by the code that decides and by the tests that check it.
 */

/** Every state a notification command can be in. */
export const NotificationState = {
  accepted: 'accepted',
  dispatching: 'dispatching',
  dispatchUnknown: 'dispatch_unknown',
  sent: 'sent',
  delivered: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
  expired: 'expired',
} as const;
export type NotificationState = (typeof NotificationState)[keyof typeof NotificationState];
export const ALL_STATES: readonly NotificationState[] = Object.values(NotificationState);

/** States from which nothing more ever happens. `sent` becomes final only through `closed` (status horizon). */
export const TERMINAL_STATES: ReadonlySet<NotificationState> = new Set([
  NotificationState.delivered,
  NotificationState.undelivered,
  NotificationState.failed,
  NotificationState.expired,
]);

/** The closed list of reason codes that an evidence record may carry. */
export const ReasonCode = {
  admitted: 'admitted',
  claimed: 'claimed',
  providerAccepted: 'provider_accepted',
  providerTimeout: 'provider_timeout',
  providerAmbiguous: 'provider_ambiguous',
  providerRejectedRetryable: 'provider_rejected_retryable',
  providerRejectedPermanent: 'provider_rejected_permanent',
  leaseExpired: 'lease_expired',
  reconciledFound: 'reconciled_found',
  reconciledAbsent: 'reconciled_absent',
  reconcileInconclusive: 'reconcile_inconclusive',
  absenceObserved: 'absence_observed',
  providerNotSent: 'provider_not_sent',
  expiredBeforeDispatch: 'expired_before_dispatch',
  unknownAtExpiry: 'unknown_at_expiry',
  retryExhausted: 'retry_exhausted',
  callNotStarted: 'call_not_started',
  deliveryReceipt: 'delivery_receipt',
  statusPolled: 'status_polled',
  statusHorizon: 'status_horizon',
  /** The caller (the auth service) says the code or link was used: the strongest delivery proof. */
  userConfirmed: 'user_confirmed',
} as const;
export type ReasonCode = (typeof ReasonCode)[keyof typeof ReasonCode];
export const ALL_REASONS: readonly ReasonCode[] = Object.values(ReasonCode);

/** Who made a transition. */
export const Actor = {
  api: 'api',
  forwarder: 'forwarder',
  sender: 'sender',
  reconciler: 'reconciler',
  receipt: 'receipt',
} as const;
export type Actor = (typeof Actor)[keyof typeof Actor];

/** One allowed edge of the state machine. `from: null` is admission. */
export interface TransitionRule {
  readonly from: NotificationState | null;
  readonly to: NotificationState;
  readonly reasons: readonly ReasonCode[];
  readonly actors: readonly Actor[];
}

const S = NotificationState;
const R = ReasonCode;
const A = Actor;

/**
 * States a user confirmation may move to `delivered`. Terminal ones included: a confirmation is
 * late evidence, never a send. See `decideConfirmation` for the records it still refuses.
 */
export const CONFIRMABLE_STATES: readonly NotificationState[] = [
  S.accepted,
  S.dispatching,
  S.dispatchUnknown,
  S.sent,
  S.delivered,
  S.undelivered,
  S.expired,
];

/**
 * The only reasons that may leave a terminal state: late evidence about a message that exists (a
 * user's confirmation; a receipt for an unknown that expired). No edge out of a terminal state
 * leads anywhere a send could follow.
 */
export const LATE_EVIDENCE_REASONS: ReadonlySet<ReasonCode> = new Set([R.userConfirmed, R.deliveryReceipt]);

/**
 * The transition table (docs/design.md#states). Anything not listed here is forbidden.
 * Expiry edges only leave states in which no provider call is in flight.
 */
export const TRANSITIONS: readonly TransitionRule[] = [
  { from: null, to: S.accepted, reasons: [R.admitted], actors: [A.api] },
  { from: S.accepted, to: S.dispatching, reasons: [R.claimed], actors: [A.sender] },
  {
    from: S.accepted,
    to: S.expired,
    reasons: [R.expiredBeforeDispatch, R.retryExhausted],
    actors: [A.sender, A.reconciler],
  },
  { from: S.dispatching, to: S.sent, reasons: [R.providerAccepted], actors: [A.sender] },
  // A receipt is positive evidence whatever the record believes: the message exists, so no send may follow.
  ...[S.accepted, S.dispatching, S.dispatchUnknown].flatMap((from) =>
    [S.sent, S.delivered, S.undelivered].map(
      (to): TransitionRule => ({ from, to, reasons: [R.deliveryReceipt], actors: [A.receipt] }),
    ),
  ),
  {
    from: S.dispatching,
    to: S.accepted,
    // A permanent refusal of the account comes back here only to fail over (docs/providers/failover.md).
    reasons: [R.providerRejectedRetryable, R.callNotStarted, R.providerRejectedPermanent],
    actors: [A.sender],
  },
  { from: S.dispatching, to: S.failed, reasons: [R.providerRejectedPermanent], actors: [A.sender] },
  // The provider's own "never handed to a carrier" can outrun the sender's write of the call's answer
  // (AWS publishes events before SendTextMessage answers): the attempt is over, the write loses.
  // Never to expired (a call may be in flight): past the deadline it is the provider's undelivered.
  ...[S.accepted, S.failed, S.undelivered].map(
    (to): TransitionRule => ({ from: S.dispatching, to, reasons: [R.providerNotSent], actors: [A.receipt] }),
  ),
  {
    from: S.dispatching,
    to: S.dispatchUnknown,
    reasons: [R.providerTimeout, R.providerAmbiguous, R.leaseExpired],
    actors: [A.sender, A.reconciler],
  },
  { from: S.dispatchUnknown, to: S.sent, reasons: [R.reconciledFound], actors: [A.reconciler] },
  { from: S.dispatchUnknown, to: S.delivered, reasons: [R.reconciledFound], actors: [A.reconciler] },
  { from: S.dispatchUnknown, to: S.undelivered, reasons: [R.reconciledFound], actors: [A.reconciler] },
  { from: S.dispatchUnknown, to: S.accepted, reasons: [R.reconciledAbsent], actors: [A.reconciler] },
  // The provider said it never handed the message to a carrier: a new attempt is safe.
  {
    from: S.dispatchUnknown,
    to: S.accepted,
    reasons: [R.providerNotSent],
    actors: [A.reconciler, A.receipt],
  },
  { from: S.sent, to: S.accepted, reasons: [R.providerNotSent], actors: [A.reconciler, A.receipt] },
  // The provider said it never handed the message to a carrier, for a cause no new attempt can cure
  // in time (account suspended, geo permissions, SMS pumping protection): final, never sent again.
  ...[S.dispatchUnknown, S.sent].map(
    (from): TransitionRule => ({
      from,
      to: S.failed,
      reasons: [R.providerNotSent],
      actors: [A.reconciler, A.receipt],
    }),
  ),
  {
    from: S.dispatchUnknown,
    to: S.dispatchUnknown,
    reasons: [R.reconcileInconclusive, R.absenceObserved],
    actors: [A.reconciler],
  },
  {
    from: S.dispatchUnknown,
    to: S.expired,
    reasons: [R.unknownAtExpiry, R.expiredBeforeDispatch],
    actors: [A.reconciler, A.receipt],
  },
  {
    from: S.sent,
    to: S.delivered,
    reasons: [R.statusPolled, R.deliveryReceipt],
    actors: [A.reconciler, A.receipt],
  },
  {
    from: S.sent,
    to: S.undelivered,
    reasons: [R.statusPolled, R.deliveryReceipt, R.providerNotSent],
    actors: [A.reconciler, A.receipt],
  },
  { from: S.sent, to: S.sent, reasons: [R.statusHorizon], actors: [A.reconciler] },
  // A late receipt settles an unknown that expired: the token is dead, but the record learns the truth.
  // (The decision allows it only after `unknown_at_expiry`; nothing is ever sent from here.)
  ...[S.delivered, S.undelivered].map(
    (to): TransitionRule => ({ from: S.expired, to, reasons: [R.deliveryReceipt], actors: [A.receipt] }),
  ),
  // The user used the code or link: whatever the record believed, the message arrived. Recorded once
  // (the decision answers a repeat without a write); `delivered -> delivered` records it on a record
  // a receipt already settled. The decision refuses records that were never sent.
  ...CONFIRMABLE_STATES.map(
    (from): TransitionRule => ({ from, to: S.delivered, reasons: [R.userConfirmed], actors: [A.api] }),
  ),
];

/** The rule allowing `from -> to` for `reason`, or undefined when the table forbids it. */
export function findTransition(
  from: NotificationState | null,
  to: NotificationState,
  reason: ReasonCode,
): TransitionRule | undefined {
  return TRANSITIONS.find((t) => t.from === from && t.to === to && t.reasons.includes(reason));
}

/** True when the table allows `from -> to` with `reason`. */
export function isTransitionAllowed(
  from: NotificationState | null,
  to: NotificationState,
  reason: ReasonCode,
): boolean {
  return findTransition(from, to, reason) !== undefined;
}
