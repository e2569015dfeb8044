import { providerOfAttempt } from './failover.js';
import {
  type AttemptMessage,
  type AttemptProvider,
  type EpochMs,
  isFinal,
  type NotificationRecord,
  type TransitionIntent,
} from './notification.js';
import {
  backoffMs,
  type DispatchPolicy,
  dispatchDeadline,
  isPastDispatchDeadline,
  statusPollDelayMs,
} from './policy.js';
import {
  admissibleLookup,
  isNotSentStatus,
  type LookupOutcome,
  type ProviderCapabilities,
  type ProviderStatus,
  type SendOutcome,
} from './provider.js';
import { DomainDetail as D, detailWithCause, reasonDetailFrom } from './reason-detail.js';
import { Actor, ReasonCode as R, NotificationState as S } from './states.js';

/** What the sender should do with a command it was handed. */
export type DispatchDecision =
  | { readonly kind: 'skip'; readonly why: SkipReason }
  | { readonly kind: 'transition'; readonly intent: TransitionIntent }
  | { readonly kind: 'claim'; readonly intent: TransitionIntent; readonly callDeadline: EpochMs };

export type SkipReason = 'final' | 'in_flight' | 'awaiting_reconciliation' | 'sent' | 'not_yet_due';

/**
 * Decides, from the freshly read record alone, whether the sender may call the provider.
 * Duplicate and stale queue messages all end here as `skip`. `provider`: the provider the failover
 * decision chose for the attempt (`./failover.ts`), given by a sender with more than one provider;
 * the claim then records it as the attempt's. Without it the attempt goes to the record's provider.
 */
export function decideDispatch(
  record: NotificationRecord,
  now: EpochMs,
  policy: DispatchPolicy,
  owner: string,
  actor: Actor = Actor.sender,
  provider?: string,
): DispatchDecision {
  if (isFinal(record)) return { kind: 'skip', why: 'final' };
  switch (record.state) {
    case S.sent:
      return { kind: 'skip', why: 'sent' };
    case S.dispatchUnknown:
      return { kind: 'skip', why: 'awaiting_reconciliation' };
    case S.dispatching:
      if ((record.leaseUntil ?? 0) > now) return { kind: 'skip', why: 'in_flight' };
      return { kind: 'transition', intent: leaseExpired(record, now, policy, actor) };
    case S.accepted:
      return decideAccepted(record, now, policy, owner, provider);
    default:
      return { kind: 'skip', why: 'final' };
  }
}

function decideAccepted(
  record: NotificationRecord,
  now: EpochMs,
  policy: DispatchPolicy,
  owner: string,
  chosen: string | undefined,
): DispatchDecision {
  const deadline = dispatchDeadline(record, policy);
  if (now >= deadline - policy.minSendWindowMs) {
    const intent = expireAccepted(now, R.expiredBeforeDispatch, Actor.sender, expiryDetail(record));
    return { kind: 'transition', intent };
  }
  if (record.attempts >= policy.maxAttempts) {
    const intent = expireAccepted(now, R.retryExhausted, Actor.sender, exhaustedDetail(record));
    return { kind: 'transition', intent };
  }
  if ((record.nextAttemptAt ?? 0) > now) return { kind: 'skip', why: 'not_yet_due' };
  // The provider call must end before the token's dispatch deadline and inside the lease; the
  // call starts only once the claim is written, so the claim write's own time is budgeted too.
  const callDeadline = Math.min(now + policy.claimWriteBudgetMs + policy.providerTimeoutMs, deadline);
  const leaseUntil = callDeadline + policy.leaseSlackMs;
  // A new attempt starts without a message id: an id left from an earlier (absent) attempt would make the
  // reconciler look up that attempt instead of this one's client reference, and conclude "absent" wrongly.
  const provider = { name: chosen ?? record.provider.name };
  const attempt = record.attempts + 1;
  return {
    kind: 'claim',
    callDeadline,
    intent: {
      to: S.dispatching,
      reason: R.claimed,
      actor: Actor.sender,
      at: now,
      set: {
        attempts: attempt,
        provider,
        ...(chosen === undefined
          ? {}
          : { attemptProviders: withAttemptProvider(record, { attempt, provider: chosen }) }),
        leaseUntil,
        leaseOwner: owner,
        dueAt: leaseUntil,
        checks: 0,
        attemptStartedAt: now,
        callDeadline,
      },
      remove: ['nextAttemptAt', 'unknownSince', 'absentSince'],
    },
  };
}

function expireAccepted(
  now: EpochMs,
  reason: typeof R.expiredBeforeDispatch | typeof R.retryExhausted,
  actor: Actor,
  reasonDetail: string,
) {
  return { to: S.expired, reason, reasonDetail, actor, at: now } satisfies TransitionIntent;
}

/**
 * Why an `accepted` command expires unsent: never claimed, a retry's backoff that ran past the
 * deadline, or due but not claimed in time; with the last attempt's detail when it had one
 * (`backoff_past_deadline:twilio:config:21408`).
 */
function expiryDetail(record: Pick<NotificationRecord, 'attempts' | 'lastReason' | 'reasonDetail'>): string {
  if (record.attempts === 0 && record.lastReason === R.admitted) return D.neverClaimed;
  const backoff = record.lastReason === R.providerRejectedRetryable;
  return detailWithCause(backoff ? D.backoffPastDeadline : D.notClaimedInTime, record.reasonDetail);
}

/** Why the attempt limit ended a command: `max_attempts`, with the last attempt's detail (`max_attempts:twilio:http_429`). */
function exhaustedDetail(record: Pick<NotificationRecord, 'reasonDetail'>): string {
  return detailWithCause(D.maxAttempts, record.reasonDetail);
}

/** A `dispatching` record whose lease ran out: a crash after the call looks exactly like a timeout. */
function leaseExpired(
  record: NotificationRecord,
  now: EpochMs,
  policy: DispatchPolicy,
  actor: Actor,
): TransitionIntent {
  return {
    to: S.dispatchUnknown,
    reason: R.leaseExpired,
    actor,
    at: now,
    set: { unknownSince: record.leaseUntil ?? now, dueAt: now + policy.backoffBaseMs, checks: 0 },
    remove: ['leaseUntil', 'leaseOwner'],
  };
}

/** Maps a classified send outcome onto the transition that records it. */
export function recordSendOutcome(
  claimed: NotificationRecord,
  outcome: SendOutcome,
  now: EpochMs,
  policy: DispatchPolicy,
): TransitionIntent {
  const name = claimed.provider.name;
  switch (outcome.kind) {
    case 'accepted':
      return {
        to: S.sent,
        reason: R.providerAccepted,
        actor: Actor.sender,
        at: now,
        set: {
          provider: { name, messageId: outcome.messageId },
          attemptMessages: withAttemptMessage(claimed, {
            attempt: claimed.attempts,
            messageId: outcome.messageId,
          }),
          sentAt: now,
          dueAt: now + policy.statusPollMs,
        },
        remove: ['leaseUntil', 'leaseOwner'],
      };
    case 'not_sent_retryable': {
      const wait = Math.max(outcome.retryAfterMs ?? 0, backoffMs(claimed.attempts, policy));
      return {
        to: S.accepted,
        reason: R.providerRejectedRetryable,
        reasonDetail: reasonDetailFrom(name, outcome.detail),
        actor: Actor.sender,
        at: now,
        // Never due after the dispatch deadline: the reconciler must expire it on time if no retry can
        // start. Never due before now either: a pass reads on after its cursor, not behind it.
        set: {
          nextAttemptAt: now + wait,
          dueAt: Math.max(
            now,
            Math.min(now + wait + policy.queueSafetyNetMs, dispatchDeadline(claimed, policy)),
          ),
        },
        remove: ['leaseUntil', 'leaseOwner'],
      };
    }
    case 'not_sent_permanent':
      return {
        to: S.failed,
        reason: R.providerRejectedPermanent,
        reasonDetail: reasonDetailFrom(name, outcome.detail),
        actor: Actor.sender,
        at: now,
      };
    case 'unknown':
      return {
        to: S.dispatchUnknown,
        reason: outcome.timedOut ? R.providerTimeout : R.providerAmbiguous,
        reasonDetail: reasonDetailFrom(name, outcome.detail),
        actor: Actor.sender,
        at: now,
        set: {
          ...(outcome.messageId === undefined
            ? {}
            : {
                provider: { name, messageId: outcome.messageId },
                attemptMessages: withAttemptMessage(claimed, {
                  attempt: claimed.attempts,
                  messageId: outcome.messageId,
                }),
              }),
          unknownSince: now,
          dueAt: now + policy.backoffBaseMs,
          checks: 0,
        },
        remove: ['leaseUntil', 'leaseOwner'],
      };
  }
}

/**
 * A permanent refusal of the account by the attempt's provider, with another provider listed that
 * may take the next attempt (`failsOverOnRefusal` in `./failover.ts`): nothing was sent, so the
 * command goes back to `accepted`, due at once, with the provider's code in `reasonDetail`.
 */
export function refusedForFailover(
  claimed: Pick<NotificationRecord, 'provider' | 'attempts' | 'attemptProviders'>,
  outcome: Extract<SendOutcome, { kind: 'not_sent_permanent' }>,
  now: EpochMs,
): TransitionIntent {
  const refused = {
    attempt: claimed.attempts,
    provider: claimed.provider.name,
    refusedAccount: true,
  } as const;
  return {
    to: S.accepted,
    reason: R.providerRejectedPermanent,
    reasonDetail: reasonDetailFrom(claimed.provider.name, outcome.detail),
    actor: Actor.sender,
    at: now,
    // Remembered per attempt: a later failover never goes back to a provider that refused the account.
    set: { nextAttemptAt: now, dueAt: now, attemptProviders: withAttemptProvider(claimed, refused) },
    remove: ['leaseUntil', 'leaseOwner'],
  };
}

/**
 * The claim was won but too little time is left to start a call that could end before the
 * deadline or inside the lease (the claim write itself was slow): nothing was sent, so the command
 * goes back to `accepted`, due at once. Near the deadline the next look expires it; otherwise it is
 * claimed again. The attempt is given back: attempts count provider calls (`maxAttempts` bounds
 * them), and a slow store must not use them up without a single call. `reasonDetail` says why when
 * it was not the time left (`clock_skew:behind:15`, docs/design.md#clock-skew).
 */
export function abandonClaim(
  claimed: Pick<NotificationRecord, 'attempts'>,
  now: EpochMs,
  reasonDetail?: string,
): TransitionIntent {
  return {
    to: S.accepted,
    reason: R.callNotStarted,
    ...(reasonDetail === undefined ? {} : { reasonDetail }),
    actor: Actor.sender,
    at: now,
    set: { attempts: Math.max(0, claimed.attempts - 1), nextAttemptAt: now, dueAt: now },
    remove: ['leaseUntil', 'leaseOwner'],
  };
}

/** What the reconciler should do with a due item before (or instead of) asking the provider. */
export type ReconcileStep =
  | { readonly kind: 'skip'; readonly why: 'final' | 'not_due' | 'in_flight' }
  | { readonly kind: 'transition'; readonly intent: TransitionIntent }
  | { readonly kind: 'redrive'; readonly nextDueAt: EpochMs }
  | { readonly kind: 'lookup' };

/** First half of a reconciler step: decided from the record alone. */
export function decideReconcile(
  record: NotificationRecord,
  now: EpochMs,
  policy: DispatchPolicy,
): ReconcileStep {
  if (isFinal(record)) return { kind: 'skip', why: 'final' };
  if (record.dueAt !== undefined && record.dueAt > now) return { kind: 'skip', why: 'not_due' };
  switch (record.state) {
    case S.accepted:
      if (isPastDispatchDeadline(record, now, policy)) {
        const intent = expireAccepted(now, R.expiredBeforeDispatch, Actor.reconciler, expiryDetail(record));
        return { kind: 'transition', intent };
      }
      // The queue message was lost or is late: put the key on the queue again (never a send).
      return { kind: 'redrive', nextDueAt: now + policy.queueSafetyNetMs };
    case S.dispatching:
      if ((record.leaseUntil ?? 0) > now) return { kind: 'skip', why: 'in_flight' };
      return { kind: 'transition', intent: leaseExpired(record, now, policy, Actor.reconciler) };
    case S.dispatchUnknown:
    case S.sent:
      return { kind: 'lookup' };
    default:
      return { kind: 'skip', why: 'final' };
  }
}

/** A change of schedule that is not a state change (no evidence, no version bump). */
export interface Reschedule {
  readonly kind: 'reschedule';
  readonly dueAt: EpochMs;
}

/**
 * Second half of a reconciler step: what the provider's answer means for the record. `absent`
 * counts only from a provider that declares it can prove absence ({@link admissibleLookup}).
 */
export function applyLookup(
  record: NotificationRecord,
  lookup: LookupOutcome,
  now: EpochMs,
  policy: DispatchPolicy,
  capabilities: Pick<ProviderCapabilities, 'absenceProof'>,
): TransitionIntent | Reschedule {
  const admissible = admissibleLookup(lookup, capabilities);
  return record.state === S.sent
    ? applyStatusPoll(record, admissible, now, policy)
    : applyUnknownLookup(record, admissible, now, policy);
}

/** The provider's own "never handed to a carrier", for the current attempt only. */
function notSentForCurrentAttempt(
  record: NotificationRecord,
  found: { readonly status: ProviderStatus; readonly attempt?: number; readonly messageId: string },
): boolean {
  if (!isNotSentStatus(found.status)) return false;
  if (found.attempt !== undefined) return found.attempt === record.attempts;
  // Without an attempt the message id must be the one this attempt got back.
  return record.provider.messageId === found.messageId;
}

/**
 * A message that was definitely never handed to a carrier: a new attempt while the token allows
 * one, otherwise final. The settle time does not apply: this is the provider's statement, not a
 * missing read. `not_sent_permanent` (a cause no attempt can cure in time) is final at once: `failed`.
 * The message is kept on the record as not sent, so none of its later events settles anything.
 * From `dispatching` (the event outran the sender's write of the call's answer, which then loses
 * its version race) the call is over as far as this attempt goes: the provider has its message and
 * says it never left.
 */
function notSentIntent(
  record: NotificationRecord,
  status: 'not_sent' | 'not_sent_permanent',
  now: EpochMs,
  policy: DispatchPolicy,
  actor: Actor,
  detail: string | undefined,
  message: Omit<AttemptMessage, 'notSent'>,
): TransitionIntent {
  const base = {
    actor,
    at: now,
    ...(detail === undefined ? {} : { reasonDetail: detail }),
    set: { attemptMessages: withAttemptMessage(record, { ...message, notSent: true }) },
  } as const;
  if (status === 'not_sent_permanent') return { ...base, to: S.failed, reason: R.providerNotSent };
  if (isPastDispatchDeadline(record, now, policy) || record.attempts >= policy.maxAttempts) {
    // A call was made (`sent`, or `dispatching` whose answer is not written yet): undelivered, the
    // provider's word; an unknown becomes an expiry (the table never expires a call in flight).
    return record.state === S.sent || record.state === S.dispatching
      ? { ...base, to: S.undelivered, reason: R.providerNotSent }
      : {
          ...base,
          to: S.expired,
          reason: R.expiredBeforeDispatch,
          reasonDetail: detailWithCause(D.notSentPastDeadline, detail),
        };
  }
  return {
    ...base,
    to: S.accepted,
    reason: R.providerNotSent,
    set: { ...base.set, nextAttemptAt: now, dueAt: now + policy.queueSafetyNetMs, checks: 0 },
    remove: ['unknownSince', 'absentSince', 'sentAt', 'leaseUntil', 'leaseOwner'],
  };
}

/**
 * The record's attempt messages with `message` in its attempt's place: one message per attempt
 * (the send client makes one request per attempt), oldest attempt first.
 */
function withAttemptMessage(
  record: Pick<NotificationRecord, 'attemptMessages'>,
  message: AttemptMessage,
): readonly AttemptMessage[] {
  const others = (record.attemptMessages ?? []).filter((m) => m.attempt !== message.attempt);
  return [...others, message].sort((a, b) => a.attempt - b.attempt);
}

/** The record's attempt providers with `entry` in its attempt's place (a given-back claim's is replaced), oldest first. */
function withAttemptProvider(
  record: Pick<NotificationRecord, 'attemptProviders'>,
  entry: AttemptProvider,
): readonly AttemptProvider[] {
  const others = (record.attemptProviders ?? []).filter((p) => p.attempt !== entry.attempt);
  return [...others, entry].sort((a, b) => a.attempt - b.attempt);
}

/**
 * What the record knows about the message a receipt or lookup names: `not_sent` when the provider
 * already said it never left (nothing of it settles anything again), `other_message` when the
 * record holds it under another attempt or holds another message for its attempt.
 */
function attributionOf(
  record: Pick<NotificationRecord, 'attemptMessages'>,
  attempt: number,
  messageId: string,
): 'not_sent' | 'other_message' | undefined {
  const messages = record.attemptMessages ?? [];
  const named = messages.find((m) => m.messageId === messageId);
  if (named?.notSent) return 'not_sent';
  if (named !== undefined && named.attempt !== attempt) return 'other_message';
  const ofAttempt = messages.find((m) => m.attempt === attempt);
  if (ofAttempt !== undefined && ofAttempt.messageId !== messageId) return 'other_message';
  return undefined;
}

function applyUnknownLookup(
  record: NotificationRecord,
  lookup: LookupOutcome,
  now: EpochMs,
  policy: DispatchPolicy,
): TransitionIntent {
  const name = record.provider.name;
  const base = { actor: Actor.reconciler, at: now } as const;
  if (lookup.kind === 'found' && notSentForCurrentAttempt(record, lookup) && isNotSentStatus(lookup.status)) {
    return notSentIntent(record, lookup.status, now, policy, Actor.reconciler, foundDetail(record, lookup), {
      attempt: lookup.attempt ?? record.attempts,
      messageId: lookup.messageId,
    });
  }
  // A not-sent message of an older attempt says nothing about the current one.
  if (lookup.kind === 'found' && !isNotSentStatus(lookup.status)) {
    // A message of any attempt of this key counts: the record takes its id and never sends again.
    const to =
      lookup.status === 'delivered' ? S.delivered : lookup.status === 'undelivered' ? S.undelivered : S.sent;
    return {
      ...base,
      to,
      reason: R.reconciledFound,
      ...detailOf(foundDetail(record, lookup)),
      set: {
        provider: { name, messageId: lookup.messageId },
        attemptMessages: withAttemptMessage(record, {
          attempt: lookup.attempt ?? record.attempts,
          messageId: lookup.messageId,
        }),
        sentAt: now,
        dueAt: now + policy.statusPollMs,
        checks: 0,
      },
      remove: ['unknownSince', 'absentSince'],
    };
  }
  const pastDeadline = isPastDispatchDeadline(record, now, policy);
  const lookupDetail = inconclusiveDetail(record, lookup, now);
  const lastDetail = record.reasonDetail ?? D.noConclusiveRead;
  // Absence is read only after the attempt's call had to end; legacy records fall back to the unknown's start.
  const callEnded = now >= (record.callDeadline ?? record.unknownSince ?? record.updatedAt);
  const absent = lookup.kind === 'absent' && callEnded;
  if (absent && record.absentSince !== undefined && now - record.absentSince >= policy.reconcileSettleMs) {
    // Two agreeing reads, settle apart, both after the call deadline: no message exists.
    if (pastDeadline) {
      return {
        ...base,
        to: S.expired,
        reason: R.expiredBeforeDispatch,
        reasonDetail: D.absenceProvenPastDeadline,
      };
    }
    return {
      ...base,
      to: S.accepted,
      reason: R.reconciledAbsent,
      set: { nextAttemptAt: now, dueAt: now + policy.queueSafetyNetMs, checks: 0 },
      remove: ['unknownSince', 'absentSince'],
    };
  }
  if (pastDeadline && now >= record.expiresAt) {
    // The token is dead: whatever the provider did, no further send may happen. The outcome stays unknown;
    // the detail is why the last read could not settle it.
    return { ...base, to: S.expired, reason: R.unknownAtExpiry, reasonDetail: lookupDetail ?? lastDetail };
  }
  if (absent && record.absentSince === undefined) {
    // The first complete absent read: one more, a settle time later, must agree.
    return {
      ...base,
      to: S.dispatchUnknown,
      reason: R.absenceObserved,
      reasonDetail: D.secondAbsenceRead,
      set: {
        absentSince: now,
        checks: record.checks + 1,
        dueAt: Math.min(now + policy.reconcileSettleMs, Math.max(record.expiresAt, now + 1)),
      },
    };
  }
  const checks = record.checks + 1;
  const wait = Math.min(backoffMs(checks, policy), policy.backoffMaxMs);
  if (lookup.kind === 'absent') {
    // Still inside the settle time (or the call had not ended): look again when the proof can complete.
    const proofAt =
      record.absentSince === undefined
        ? (record.callDeadline ?? record.unknownSince ?? record.updatedAt)
        : record.absentSince + policy.reconcileSettleMs;
    return {
      ...base,
      to: S.dispatchUnknown,
      reason: R.reconcileInconclusive,
      ...(lookupDetail === undefined ? {} : { reasonDetail: lookupDetail }),
      set: { checks, dueAt: Math.max(Math.min(proofAt, record.expiresAt), now + 1) },
    };
  }
  // Any read that is not a complete absence breaks the proof: it starts again.
  return {
    ...base,
    to: S.dispatchUnknown,
    reason: R.reconcileInconclusive,
    ...(lookupDetail === undefined ? {} : { reasonDetail: lookupDetail }),
    set: { checks, dueAt: Math.min(now + wait, Math.max(record.expiresAt, now + 1)) },
    remove: ['absentSince'],
  };
}

/**
 * Why a read of an unknown outcome did not settle it: the adapter's own detail for an inconclusive
 * read (`absence_pending:canary_older_than_attempt`, `twilio:content:masked_number`), or where an
 * absent read stands in the proof (before the call deadline, inside the settle time).
 */
function inconclusiveDetail(
  record: NotificationRecord,
  lookup: LookupOutcome,
  now: EpochMs,
): string | undefined {
  if (lookup.kind === 'inconclusive') return reasonDetailFrom(record.provider.name, lookup.detail);
  if (lookup.kind !== 'absent') return undefined;
  const callEnded = now >= (record.callDeadline ?? record.unknownSince ?? record.updatedAt);
  if (!callEnded) return D.callNotEnded;
  return record.absentSince === undefined ? D.secondAbsenceRead : D.settleTime;
}

/** `{ reasonDetail }` when there is one: spread into an intent. */
const detailOf = (detail: string | undefined) => (detail === undefined ? {} : { reasonDetail: detail });

/** The provider's code on a found message (`twilio:30003`), in the grammar. */
function foundDetail(record: NotificationRecord, lookup: { readonly detail?: string }): string | undefined {
  return lookup.detail === undefined ? undefined : reasonDetailFrom(record.provider.name, lookup.detail);
}

/** The provider's status and code on a receipt (`twilio:undelivered:30003`), in the grammar. */
function receiptDetail(record: NotificationRecord, receipt: Receipt): string | undefined {
  return receipt.detail === undefined
    ? undefined
    : reasonDetailFrom(providerOfAttempt(record, receipt.attempt), receipt.detail);
}

function applyStatusPoll(
  record: NotificationRecord,
  lookup: LookupOutcome,
  now: EpochMs,
  policy: DispatchPolicy,
): TransitionIntent | Reschedule {
  const base = { actor: Actor.reconciler, at: now } as const;
  if (lookup.kind === 'found' && notSentForCurrentAttempt(record, lookup) && isNotSentStatus(lookup.status)) {
    return notSentIntent(record, lookup.status, now, policy, Actor.reconciler, foundDetail(record, lookup), {
      attempt: lookup.attempt ?? record.attempts,
      messageId: lookup.messageId,
    });
  }
  if (lookup.kind === 'found' && lookup.status === 'delivered') {
    return { ...base, to: S.delivered, reason: R.statusPolled, ...detailOf(foundDetail(record, lookup)) };
  }
  if (lookup.kind === 'found' && lookup.status === 'undelivered') {
    return { ...base, to: S.undelivered, reason: R.statusPolled, ...detailOf(foundDetail(record, lookup)) };
  }
  if (now - (record.sentAt ?? record.updatedAt) >= policy.statusHorizonMs) {
    return { ...base, to: S.sent, reason: R.statusHorizon, set: { closed: true } };
  }
  // Backed off with the message's age, and never past the horizon, where the poll closes it.
  const sentAt = record.sentAt ?? record.updatedAt;
  const dueAt = Math.min(now + statusPollDelayMs(sentAt, now, policy), sentAt + policy.statusHorizonMs);
  return { kind: 'reschedule', dueAt: Math.max(dueAt, now + 1) };
}

/** A provider receipt (status callback or delivery event), authenticated and parsed at the edge. */
export interface Receipt {
  /** The attempt its client reference names. */
  readonly attempt: number;
  readonly messageId: string;
  readonly status: ProviderStatus;
  /** The provider's code for a final status, in the `reason_detail` grammar (`twilio:30450`). */
  readonly detail?: string;
}

/** Why a receipt changed nothing: every one of these is harmless and answered as received. */
export type ReceiptIgnored =
  | 'final'
  | 'unknown_attempt'
  | 'not_newer'
  | 'other_message'
  | 'message_not_sent'
  | 'not_sent_for_old_attempt';

/**
 * What a receipt means for the record. A receipt is positive evidence: whatever the record
 * believes (accepted, dispatching, unknown), the message exists, so the record takes its id and
 * never sends again. It never moves a record backwards, so duplicates and out-of-order receipts
 * change nothing and write no second evidence record.
 */
export function applyReceipt(
  record: NotificationRecord,
  receipt: Receipt,
  now: EpochMs,
  policy: DispatchPolicy,
): TransitionIntent | { readonly kind: 'ignore'; readonly why: ReceiptIgnored } {
  const ignore = (why: ReceiptIgnored) => ({ kind: 'ignore', why }) as const;
  const detail = receiptDetail(record, receipt);
  const base = {
    actor: Actor.receipt,
    at: now,
    reason: R.deliveryReceipt,
    ...(detail === undefined ? {} : { reasonDetail: detail }),
  } as const;
  const knownAttempt = receipt.attempt >= 1 && receipt.attempt <= record.attempts;
  // An event settles only the attempt whose message it names: a message the provider said never
  // left settles nothing again (a late TEXT_QUEUED after TEXT_PROTECT_BLOCKED), and a reference that
  // disagrees with the message the record holds for that attempt is another attempt's.
  const attribution = attributionOf(record, receipt.attempt, receipt.messageId);
  if (attribution === 'not_sent') return ignore('message_not_sent');
  if (attribution === 'other_message') return ignore('other_message');
  const message = { attempt: receipt.attempt, messageId: receipt.messageId };
  const finalStatus =
    receipt.status === 'delivered' ? S.delivered : receipt.status === 'undelivered' ? S.undelivered : null;
  if (record.state === S.expired && record.lastReason === R.unknownAtExpiry && knownAttempt && finalStatus) {
    // Late truth for an unknown the token outlived: the record learns which message it was. Never a send.
    const provider = { name: providerOfAttempt(record, receipt.attempt), messageId: receipt.messageId };
    return {
      ...base,
      to: finalStatus,
      set: { provider, attemptMessages: withAttemptMessage(record, message) },
    };
  }
  if (isFinal(record)) return ignore('final');
  if (!knownAttempt) return ignore('unknown_attempt');
  if (isNotSentStatus(receipt.status)) {
    const current =
      receipt.attempt === record.attempts &&
      (record.provider.messageId === undefined || record.provider.messageId === receipt.messageId);
    // `dispatching` too: the event can outrun the sender's write of the call's answer, and must not be lost.
    const open =
      record.state === S.dispatchUnknown || record.state === S.sent || record.state === S.dispatching;
    if (!current || !open) return ignore('not_sent_for_old_attempt');
    return notSentIntent(record, receipt.status, now, policy, Actor.receipt, detail, message);
  }
  const to =
    receipt.status === 'delivered' ? S.delivered : receipt.status === 'undelivered' ? S.undelivered : S.sent;
  if (record.state === S.sent) {
    if (record.provider.messageId !== undefined && record.provider.messageId !== receipt.messageId) {
      return ignore('other_message');
    }
    if (to === S.sent) return ignore('not_newer');
    return { ...base, to };
  }
  // accepted, dispatching or dispatch_unknown: the message exists.
  return {
    ...base,
    to,
    set: {
      // The message is the attempt's, at the attempt's provider (with failover, maybe not the current one).
      provider: { name: providerOfAttempt(record, receipt.attempt), messageId: receipt.messageId },
      attemptMessages: withAttemptMessage(record, message),
      sentAt: now,
      dueAt: now + policy.statusPollMs,
      checks: 0,
    },
    remove: ['unknownSince', 'absentSince', 'leaseUntil', 'leaseOwner', 'nextAttemptAt'],
  };
}
