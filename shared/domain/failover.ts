/**
 * Provider failover without a second SMS (issue 23, docs/providers/failover.md). Pure: which
 * provider the next attempt of a command goes to, from the ordered provider list, each provider's
 * circuit and how the command's earlier attempts ended. The rule is the one that already guards
 * a resend: a next attempt, at any provider, only when every earlier attempt provably did not
 * send. Failover changes where that attempt goes, never whether it may happen.
 */
import type { CircuitState, HealthSample } from './circuit.js';
import type { NotificationRecord } from './notification.js';
import type { SendOutcome } from './provider.js';
import { reasonDetailFrom } from './reason-detail.js';
import { ReasonCode as R, NotificationState as S } from './states.js';
import { type DestinationFaults, destinationVerdict } from './zero-sms.js';

/** How one attempt ended, as far as a next attempt is concerned. */
export const AttemptEnd = {
  /** Refused before acceptance (a 4xx that says so, a throttle, a 5xx, connection refused): nothing sent. */
  refused: 'refused',
  /** Refused permanently for a reason about the account (suspended, geo permission): nothing sent. */
  refusedAccount: 'refused_account',
  /** Refused permanently for a reason about the destination (invalid number, opted out). */
  refusedDestination: 'refused_destination',
  /** Reconciled absent by a provider that can prove absence (two reads, settle apart). */
  absent: 'absent',
  /** The provider's own statement that the message was never handed to a carrier. */
  notSent: 'not_sent',
  /** Accepted, found, unknown or in flight: the message may exist. */
  mayHaveSent: 'may_have_sent',
} as const;
export type AttemptEnd = (typeof AttemptEnd)[keyof typeof AttemptEnd];

/** One earlier attempt of a command: where it went and how it ended. */
export interface PastAttempt {
  readonly attempt: number;
  readonly provider: string;
  readonly end: AttemptEnd;
}

/** A provider's circuit as the decision reads it (the port's view, without its times). */
export interface CircuitRead {
  readonly provider: string;
  readonly state: CircuitState;
}

/** Why no provider may take the next attempt. */
export type NoProviderReason =
  /** An earlier attempt may have sent: an unknown blocks failover exactly as it blocks a resend. */
  | 'may_have_sent'
  /** A provider refused the destination itself: no provider can reach it. */
  | 'destination_refused'
  /** Every listed provider refused the account permanently. */
  | 'no_provider_left';

/** The decision: a provider for the next attempt, or why none. */
export type ProviderChoice =
  | {
      readonly kind: 'provider';
      readonly provider: string;
      /** A provider other than the previous attempt's. */
      readonly failover: boolean;
      /** Every candidate's circuit was open: the first candidate is tried anyway (nowhere else to go). */
      readonly circuitsOpen: boolean;
    }
  | { readonly kind: 'none'; readonly why: NoProviderReason };

/** The candidates for the next attempt, in order, or why there are none (circuits not read yet). */
export type Candidates =
  | { readonly kind: 'candidates'; readonly order: readonly [string, ...string[]] }
  | { readonly kind: 'none'; readonly why: NoProviderReason };

/**
 * The providers the next attempt may go to, best first. None while an earlier attempt may have
 * sent or after a refusal of the destination. A provider that refused the account permanently is
 * left out. After an attempt that provably did not send, the providers after its own come first
 * (the list wraps): its provider failed this command just now, so it is tried last.
 */
export function failoverCandidates(
  providers: readonly string[],
  attempts: readonly PastAttempt[],
): Candidates {
  if (attempts.some((a) => a.end === AttemptEnd.mayHaveSent)) return { kind: 'none', why: 'may_have_sent' };
  if (attempts.some((a) => a.end === AttemptEnd.refusedDestination)) {
    return { kind: 'none', why: 'destination_refused' };
  }
  const refusedAccount = new Set(
    attempts.filter((a) => a.end === AttemptEnd.refusedAccount).map((a) => a.provider),
  );
  const last = attempts.reduce<PastAttempt | undefined>(
    (latest, a) => (latest === undefined || a.attempt > latest.attempt ? a : latest),
    undefined,
  );
  const at = last === undefined ? -1 : providers.indexOf(last.provider);
  const rotated = at < 0 ? providers : [...providers.slice(at + 1), ...providers.slice(0, at + 1)];
  const [first, ...rest] = rotated.filter((p) => !refusedAccount.has(p));
  if (first === undefined) return { kind: 'none', why: 'no_provider_left' };
  return { kind: 'candidates', order: [first, ...rest] };
}

/**
 * Chooses the provider of the next attempt: the first candidate ({@link failoverCandidates})
 * whose circuit is not open (a circuit not read counts as closed). When every candidate's circuit
 * is open the first candidate is tried anyway: waiting would only spend the token's life, and a
 * refusal or an unknown there is recorded like any other (an unknown still blocks failover).
 */
export function chooseProvider(
  providers: readonly string[],
  circuits: readonly CircuitRead[],
  attempts: readonly PastAttempt[],
): ProviderChoice {
  const candidates = failoverCandidates(providers, attempts);
  if (candidates.kind === 'none') return candidates;
  const open = (p: string) => circuits.find((c) => c.provider === p)?.state === 'open';
  const usable = candidates.order.find((p) => !open(p));
  const provider = usable ?? candidates.order[0];
  const previous = attempts.reduce<PastAttempt | undefined>(
    (latest, a) => (latest === undefined || a.attempt > latest.attempt ? a : latest),
    undefined,
  );
  return {
    kind: 'provider',
    provider,
    failover: previous !== undefined && previous.provider !== provider,
    circuitsOpen: usable === undefined,
  };
}

/**
 * Which provider attempt `attempt` of the record went to: its entry in `attemptProviders`, else
 * the record's provider (a record written before failover, or by a single-provider sender, sent
 * every attempt through that one).
 */
export function providerOfAttempt(
  record: Pick<NotificationRecord, 'attemptProviders' | 'provider'>,
  attempt: number,
): string {
  return record.attemptProviders?.find((a) => a.attempt === attempt)?.provider ?? record.provider.name;
}

/** How an attempt before the last ended: it did not send; its provider may have refused the account. */
function earlierEnd(record: Pick<NotificationRecord, 'attemptProviders'>, attempt: number): AttemptEnd {
  const entry = record.attemptProviders?.find((a) => a.attempt === attempt);
  return entry?.refusedAccount === true ? AttemptEnd.refusedAccount : AttemptEnd.notSent;
}

/** How the record's last transition ended its current attempt (an `accepted` record only). */
function lastEnd(record: Pick<NotificationRecord, 'lastReason' | 'reasonDetail'>): AttemptEnd {
  switch (record.lastReason) {
    case R.providerRejectedRetryable:
      return AttemptEnd.refused;
    // Back to `accepted` after a permanent refusal only when it was about the account and another
    // provider is listed ({@link failsOverOnRefusal}): the destination was never refused.
    case R.providerRejectedPermanent:
      return AttemptEnd.refusedAccount;
    case R.reconciledAbsent:
      return AttemptEnd.absent;
    case R.providerNotSent:
      return AttemptEnd.notSent;
    // The claim was given back before any call (the attempt number too): the attempt it names
    // now is an earlier one, which had come back to `accepted`, so it did not send either.
    case R.callNotStarted:
      return AttemptEnd.notSent;
    default:
      return AttemptEnd.mayHaveSent;
  }
}

/**
 * The record's earlier attempts as the decision reads them. Only an `accepted` record may start
 * an attempt, and a record comes back to `accepted` only after an attempt that provably did not
 * send (refused before acceptance, absence proven, the provider's own not-sent, a claim given
 * back): so every earlier attempt is one of those, and the last one is named by the last reason.
 * Any other state: every attempt may have sent.
 */
export function pastAttempts(record: NotificationRecord): readonly PastAttempt[] {
  const attempts: PastAttempt[] = [];
  for (let attempt = 1; attempt <= record.attempts; attempt++) {
    const end =
      record.state !== S.accepted
        ? AttemptEnd.mayHaveSent
        : attempt === record.attempts
          ? lastEnd(record)
          : earlierEnd(record, attempt);
    attempts.push({ attempt, provider: providerOfAttempt(record, attempt), end });
  }
  return attempts;
}

/**
 * What one send told us about its provider's health: accepted, or refused for a reason about the
 * destination, says the provider works; any other refusal before acceptance is an error; an
 * unknown outcome is `unknown`.
 */
export function healthSampleOf(
  provider: string,
  outcome: SendOutcome,
  faults: readonly DestinationFaults[],
): HealthSample {
  switch (outcome.kind) {
    case 'accepted':
      return 'ok';
    case 'unknown':
      return 'unknown';
    case 'not_sent_retryable':
      return 'error';
    case 'not_sent_permanent':
      return destinationVerdict(reasonDetailFrom(provider, outcome.detail), faults) === 'valid'
        ? 'error'
        : 'ok';
  }
}

/**
 * Whether a permanent refusal of the attempt just made moves the command to another provider
 * instead of ending it `failed`: the refusal is about the account (suspended, geo permission, the
 * provider's own fraud guard), not the destination, so nothing was sent and another listed
 * provider that has not refused the account may take the next attempt. A refusal of the
 * destination (invalid number, opted out) never fails over: no provider can reach it.
 */
export function failsOverOnRefusal(
  providers: readonly string[],
  record: NotificationRecord,
  outcome: SendOutcome,
  faults: readonly DestinationFaults[],
): boolean {
  if (outcome.kind !== 'not_sent_permanent' || providers.length < 2) return false;
  const provider = providerOfAttempt(record, record.attempts);
  if (destinationVerdict(reasonDetailFrom(provider, outcome.detail), faults) !== 'valid') return false;
  // Earlier attempts ended without sending: the record was `accepted` to claim this one.
  const attempts: PastAttempt[] = [];
  for (let attempt = 1; attempt < record.attempts; attempt++) {
    attempts.push({
      attempt,
      provider: providerOfAttempt(record, attempt),
      end: earlierEnd(record, attempt),
    });
  }
  attempts.push({ attempt: record.attempts, provider, end: AttemptEnd.refusedAccount });
  return failoverCandidates(providers, attempts).kind === 'candidates';
}
