import { ForbiddenTransitionError } from './errors.js';
import { parseReasonDetail, REFUSED_DETAIL, type ReasonDetail } from './reason-detail.js';
import { type Actor, findTransition, NotificationState, ReasonCode, TERMINAL_STATES } from './states.js';

/** Milliseconds since the epoch. All times inside the domain are numbers; ISO strings are for the edges. */
export type EpochMs = number;

/** The sensitive part of a command: only ever stored encrypted, removed when terminal. */
export interface SensitivePayload {
  /** The canonical E.164 number (`shared/http/phone.ts`): one string per number, whatever the caller's spelling. */
  readonly phone: string;
  readonly params: Readonly<Record<string, string>>;
}

/** What a caller asked for (normalised), before admission. */
export interface NotificationRequest {
  readonly idempotencyKey: string;
  readonly eventId: string;
  readonly channel: 'sms';
  readonly template: string;
  readonly locale: string;
  readonly expiresAt: EpochMs;
  readonly sensitive: SensitivePayload;
}

/** The provider-side facts we hold about the current or last attempt. */
export interface ProviderRef {
  readonly name: string;
  readonly messageId?: string;
}

/**
 * One attempt's provider message, as the record learnt it (send answer, receipt or lookup). Events
 * arrive unordered and name their attempt (client reference) and message: an event settles only the
 * attempt whose message it names (docs/providers/aws.md#attempt-attribution).
 */
export interface AttemptMessage {
  readonly attempt: number;
  readonly messageId: string;
  /** The provider said this message was never handed to a carrier: no later event of it settles anything. */
  readonly notSent?: true;
}

/** Which provider one attempt went to (docs/providers/failover.md): its lookups and receipts are that provider's. */
export interface AttemptProvider {
  readonly attempt: number;
  readonly provider: string;
  /** The provider refused the account permanently on this attempt: failover never goes back to it. */
  readonly refusedAccount?: true;
}

/**
 * The stored command record (minus storage details). `version` grows by one with every state
 * transition and equals the `seq` of the evidence record that transition wrote.
 */
export interface NotificationRecord {
  readonly idempotencyKey: string;
  readonly eventId: string;
  readonly channel: 'sms';
  readonly template: string;
  readonly locale: string;
  readonly state: NotificationState;
  readonly version: number;
  readonly attempts: number;
  readonly createdAt: EpochMs;
  readonly updatedAt: EpochMs;
  readonly expiresAt: EpochMs;
  readonly destinationFingerprint: string;
  readonly payloadFingerprint: string;
  readonly provider: ProviderRef;
  /** Every attempt's message id the record learnt, oldest attempt first (at most one per attempt). */
  readonly attemptMessages?: readonly AttemptMessage[];
  /**
   * Which provider each attempt went to, oldest first, written by a sender with more than one
   * provider (`PROVIDERS`); absent: every attempt went to `provider.name`.
   */
  readonly attemptProviders?: readonly AttemptProvider[];
  readonly lastReason: ReasonCode;
  /** The last transition's `reason_detail` (provider code, classification id, why a proof waits), if it had one. */
  readonly reasonDetail?: ReasonDetail;
  /** Set while `dispatching`: the claim is valid until then. */
  readonly leaseUntil?: EpochMs;
  readonly leaseOwner?: string;
  /** Earliest time the next provider attempt may start (retry backoff). */
  readonly nextAttemptAt?: EpochMs;
  /** When the current unknown outcome began (the age the alarms watch). */
  readonly unknownSince?: EpochMs;
  /** When the current attempt was claimed: provider search windows start here. */
  readonly attemptStartedAt?: EpochMs;
  /** When the current attempt's provider call had to end: absence is only read after it. */
  readonly callDeadline?: EpochMs;
  /** The first complete "absent" read for the current unknown; a second one a settle time later proves it. */
  readonly absentSince?: EpochMs;
  /** When the provider accepted the message (start of the status horizon). */
  readonly sentAt?: EpochMs;
  /** When the reconciler should next look at this item; absent for terminal items (sparse index). */
  readonly dueAt?: EpochMs;
  /** How many reconciliation checks the current unknown outcome has had (backoff). */
  readonly checks: number;
  /** `sent` stops being polled after the status horizon; then it is final. */
  readonly closed: boolean;
}

/** One durable evidence record (docs/design.md#evidence). Never carries sensitive data. */
export interface EvidenceRecord {
  readonly idempotencyKey: string;
  readonly eventId: string;
  readonly seq: number;
  readonly at: EpochMs;
  readonly fromState: NotificationState | null;
  readonly toState: NotificationState;
  readonly attempt: number;
  readonly reason: ReasonCode;
  /** Machine-readable why (`twilio:21211`, `absence_pending:<why>`); never personal data. */
  readonly reasonDetail?: ReasonDetail;
  readonly actor: Actor;
  readonly provider?: string;
  readonly providerMessageId?: string;
  readonly destinationFingerprint: string;
}

/** True when nothing more will ever happen to the record. */
export function isFinal(record: Pick<NotificationRecord, 'state' | 'closed'>): boolean {
  return TERMINAL_STATES.has(record.state) || (record.state === NotificationState.sent && record.closed);
}

/** The fields a transition may change besides state, version, reason and time. */
export type TransitionChanges = Partial<
  Pick<
    NotificationRecord,
    | 'attempts'
    | 'provider'
    | 'attemptMessages'
    | 'attemptProviders'
    | 'leaseUntil'
    | 'leaseOwner'
    | 'nextAttemptAt'
    | 'unknownSince'
    | 'attemptStartedAt'
    | 'callDeadline'
    | 'absentSince'
    | 'sentAt'
    | 'dueAt'
    | 'checks'
    | 'closed'
  >
>;

/** A requested state change: the table is checked before anything is built. */
export interface TransitionIntent {
  readonly to: NotificationState;
  readonly reason: ReasonCode;
  /**
   * Machine-readable why, checked by {@link parseReasonDetail} when applied: a string outside the
   * grammar is recorded as `detail_refused`, never as itself.
   */
  readonly reasonDetail?: string;
  readonly actor: Actor;
  readonly at: EpochMs;
  /** Fields to set; a key with value `undefined` means "remove". */
  readonly set?: TransitionChanges;
  readonly remove?: readonly (keyof TransitionChanges)[];
}

/** The result of applying a transition: the next record and the evidence it must be stored with. */
export interface AppliedTransition {
  readonly previous: NotificationRecord;
  readonly next: NotificationRecord;
  readonly evidence: EvidenceRecord;
}

/**
 * Applies a transition to a record, purely. Throws {@link ForbiddenTransitionError} when the
 * table does not allow it; storage then makes the write conditional on `previous.version`.
 */
export function applyTransition(record: NotificationRecord, intent: TransitionIntent): AppliedTransition {
  if (!findTransition(record.state, intent.to, intent.reason) || !findActor(record.state, intent)) {
    throw new ForbiddenTransitionError(record.state, intent.to, intent.reason);
  }
  const draft: Record<string, unknown> = { ...record, ...(intent.set ?? {}) };
  for (const field of intent.remove ?? []) delete draft[field];
  // The record's detail is always the last transition's: one without a detail clears it.
  delete draft.reasonDetail;
  const reasonDetail = detailOf(intent);
  const final = TERMINAL_STATES.has(intent.to) || (intent.set?.closed ?? false);
  if (final) {
    // Final records leave the reconciler's sparse index and give up any lease.
    delete draft.dueAt;
    delete draft.leaseUntil;
    delete draft.leaseOwner;
    delete draft.nextAttemptAt;
  }
  const next = {
    ...(draft as unknown as NotificationRecord),
    state: intent.to,
    version: record.version + 1,
    updatedAt: intent.at,
    lastReason: intent.reason,
    ...(reasonDetail === undefined ? {} : { reasonDetail }),
  };
  return { previous: record, next, evidence: evidenceFor(record.state, next, intent) };
}

/** The intent's detail as it may be stored: admitted by the grammar, otherwise the refusal marker. */
function detailOf(intent: Pick<TransitionIntent, 'reasonDetail'>): ReasonDetail | undefined {
  if (intent.reasonDetail === undefined) return undefined;
  return parseReasonDetail(intent.reasonDetail) ?? REFUSED_DETAIL;
}

function findActor(from: NotificationState, intent: TransitionIntent): boolean {
  return findTransition(from, intent.to, intent.reason)?.actors.includes(intent.actor) ?? false;
}

function evidenceFor(
  from: NotificationState | null,
  next: NotificationRecord,
  intent: Pick<TransitionIntent, 'reason' | 'reasonDetail' | 'actor' | 'at'>,
): EvidenceRecord {
  const reasonDetail = detailOf(intent);
  return {
    idempotencyKey: next.idempotencyKey,
    eventId: next.eventId,
    seq: next.version,
    at: intent.at,
    fromState: from,
    toState: next.state,
    attempt: next.attempts,
    reason: intent.reason,
    ...(reasonDetail === undefined ? {} : { reasonDetail }),
    actor: intent.actor,
    provider: next.provider.name,
    ...(next.provider.messageId === undefined ? {} : { providerMessageId: next.provider.messageId }),
    destinationFingerprint: next.destinationFingerprint,
  };
}

/** Inputs to {@link admit}: a validated request plus the fingerprints computed at the edge. */
export interface AdmissionInput {
  readonly request: NotificationRequest;
  readonly destinationFingerprint: string;
  readonly payloadFingerprint: string;
  readonly providerName: string;
  readonly now: EpochMs;
  /** When the reconciler should look if the queue never delivered the command. */
  readonly safetyNetAt: EpochMs;
}

/** A new command and the evidence of its admission. */
export interface Admission {
  readonly next: NotificationRecord;
  readonly evidence: EvidenceRecord;
}

/** Builds the first record (version 1) and its admission evidence (seq 1). */
export function admit(input: AdmissionInput): Admission {
  const { request, now } = input;
  const next: NotificationRecord = {
    idempotencyKey: request.idempotencyKey,
    eventId: request.eventId,
    channel: request.channel,
    template: request.template,
    locale: request.locale,
    state: NotificationState.accepted,
    version: 1,
    attempts: 0,
    createdAt: now,
    updatedAt: now,
    expiresAt: request.expiresAt,
    destinationFingerprint: input.destinationFingerprint,
    payloadFingerprint: input.payloadFingerprint,
    provider: { name: input.providerName },
    lastReason: ReasonCode.admitted,
    nextAttemptAt: now,
    dueAt: input.safetyNetAt,
    checks: 0,
    closed: false,
  };
  const evidence = evidenceFor(null, next, { reason: ReasonCode.admitted, actor: 'api', at: now });
  return { next, evidence };
}
