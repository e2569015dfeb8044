/**
 * Zero-SMS outcomes: a command that became final without any SMS reaching the phone, as far as
 * the service can know. Pure: the metrics (`ZeroSmsOutcome`), the alarm on their rate and the
 * chaos report all classify transitions here, so they count the same thing.
 *
 * A command counts once, on the transition that makes it final for the first time:
 * - `expired` (`unknown_at_expiry`, `expired_before_dispatch`, `retry_exhausted`): its token ran out
 *   with no message the provider accepted (or none that could be proven);
 * - `failed`: the provider refused the message or said it could not be sent;
 * - `undelivered`: the provider accepted it, the carrier or handset did not deliver it.
 * Never counted: a command that ends `delivered` or `sent` (closed at the status horizon: accepted,
 * no bad news), a transition that is not final, and any transition out of a final state (late
 * evidence about a command already counted or already delivered).
 *
 * The destination is at fault when the provider's `reason_detail` says the number is invalid,
 * cannot take SMS or opted out (each provider's codes are its own: {@link DestinationFaults}): such
 * an outcome is counted apart and never pages (the user gave a number no provider can reach;
 * nothing the operator does changes it).
 */
import { type NotificationState, ReasonCode, TERMINAL_STATES } from './states.js';

/** Why a command ended without an SMS (the metric's name suffix and the chaos report's key). */
export const ZeroSmsClass = {
  unknownAtExpiry: 'unknown_at_expiry',
  expiredBeforeDispatch: 'expired_before_dispatch',
  retryExhausted: 'retry_exhausted',
  failed: 'failed',
  undelivered: 'undelivered',
} as const;
export type ZeroSmsClass = (typeof ZeroSmsClass)[keyof typeof ZeroSmsClass];
export const ALL_ZERO_SMS_CLASSES: readonly ZeroSmsClass[] = Object.values(ZeroSmsClass);

/** Whether the destination could have taken an SMS: `valid` unless the provider said otherwise. */
export type DestinationVerdict = 'valid' | 'invalid_number' | 'opted_out';

/** One zero-SMS outcome. `pages` is true when the destination was valid (the alarm's numerator). */
export interface ZeroSmsOutcome {
  readonly class: ZeroSmsClass;
  readonly destination: DestinationVerdict;
  readonly pages: boolean;
}

/** What a command's first final transition says: whether it ended without an SMS, and how. */
export interface FinalOutcome {
  /** Undefined when an SMS was delivered or accepted without bad news. */
  readonly zeroSms?: ZeroSmsOutcome;
}

/** The facts of one transition this module reads (from an applied transition or an evidence trail). */
export interface OutcomeTransition {
  readonly fromState: NotificationState | null;
  /** Whether the record was final before (terminal, or `sent` closed at the status horizon). */
  readonly fromFinal: boolean;
  readonly toState: NotificationState;
  readonly toFinal: boolean;
  readonly reason: ReasonCode;
  readonly reasonDetail?: string;
}

/**
 * What one provider's `reason_detail`s say about the destination: the details' sources (their
 * first part: `twilio`, `sns`, `eum`) and the later parts that put the fault on the destination
 * (the number is invalid, cannot take SMS or opted out). Each provider declares its own
 * (`destinationFaults` of `shared/providers/<kind>/module.ts`); callers pass them all in.
 */
export interface DestinationFaults {
  readonly sources: readonly string[];
  readonly parts: Readonly<Record<string, Exclude<DestinationVerdict, 'valid'>>>;
}

/** What a `reason_detail` says about the destination: `valid` unless it names a destination fault. */
export function destinationVerdict(
  reasonDetail: string | undefined,
  faults: readonly DestinationFaults[],
): DestinationVerdict {
  if (reasonDetail === undefined) return 'valid';
  const [source = '', ...parts] = reasonDetail.split(':');
  const tables = faults.filter((f) => f.sources.includes(source));
  for (const part of parts) {
    for (const table of tables) {
      const verdict = Object.hasOwn(table.parts, part) ? table.parts[part] : undefined;
      if (verdict !== undefined) return verdict;
    }
  }
  return 'valid';
}

/**
 * The outcome of a transition that makes a command final for the first time; undefined for any
 * other transition (not final, or out of a state that was already final).
 */
export function finalOutcomeOf(
  t: OutcomeTransition,
  faults: readonly DestinationFaults[],
): FinalOutcome | undefined {
  if (!t.toFinal || t.fromFinal) return undefined;
  const zeroClass = zeroSmsClassOf(t);
  if (zeroClass === undefined) return {};
  // Only the provider's refusal or failure names the destination; an expiry never blames it.
  const destination =
    zeroClass === ZeroSmsClass.failed || zeroClass === ZeroSmsClass.undelivered
      ? destinationVerdict(t.reasonDetail, faults)
      : 'valid';
  return { zeroSms: { class: zeroClass, destination, pages: destination === 'valid' } };
}

function zeroSmsClassOf(t: OutcomeTransition): ZeroSmsClass | undefined {
  switch (t.toState) {
    case 'failed':
      return ZeroSmsClass.failed;
    case 'undelivered':
      return ZeroSmsClass.undelivered;
    case 'expired':
      if (t.reason === ReasonCode.unknownAtExpiry) return ZeroSmsClass.unknownAtExpiry;
      if (t.reason === ReasonCode.retryExhausted) return ZeroSmsClass.retryExhausted;
      if (t.reason === ReasonCode.expiredBeforeDispatch) return ZeroSmsClass.expiredBeforeDispatch;
      // A reason a later table adds: an unknown that expired is still an unknown.
      return t.fromState === 'dispatch_unknown'
        ? ZeroSmsClass.unknownAtExpiry
        : ZeroSmsClass.expiredBeforeDispatch;
    default:
      return undefined;
  }
}

/** A record as far as finality goes. */
interface FinalityOf {
  readonly state: NotificationState;
  readonly closed: boolean;
}

const isFinalRecord = (r: FinalityOf): boolean =>
  TERMINAL_STATES.has(r.state) || (r.state === 'sent' && r.closed);

/** The outcome of an applied transition (record before and after, and its evidence). */
export function outcomeOfApplied(
  applied: {
    readonly previous: FinalityOf;
    readonly next: FinalityOf;
    readonly evidence: { readonly reason: ReasonCode; readonly reasonDetail?: string };
  },
  faults: readonly DestinationFaults[],
): FinalOutcome | undefined {
  return finalOutcomeOf(
    {
      fromState: applied.previous.state,
      fromFinal: isFinalRecord(applied.previous),
      toState: applied.next.state,
      toFinal: isFinalRecord(applied.next),
      reason: applied.evidence.reason,
      ...(applied.evidence.reasonDetail === undefined ? {} : { reasonDetail: applied.evidence.reasonDetail }),
    },
    faults,
  );
}

/** One evidence record as far as this module reads it. */
export interface TrailStep {
  readonly seq: number;
  readonly at: number;
  readonly fromState: NotificationState | null;
  readonly toState: NotificationState;
  readonly reason: ReasonCode;
  readonly reasonDetail?: string;
}

/**
 * The first final outcome of one command's evidence trail, with when it happened; undefined while
 * the command is not final. Every step before the first final one starts from a state that is not
 * final; `sent` becomes final through its `status_horizon` step (the record's `closed`).
 */
export function finalOutcomeOfTrail(
  trail: readonly TrailStep[],
  faults: readonly DestinationFaults[],
): { readonly at: number; readonly outcome: FinalOutcome } | undefined {
  for (const step of [...trail].sort((a, b) => a.seq - b.seq)) {
    const outcome = finalOutcomeOf(
      {
        fromState: step.fromState,
        fromFinal: false,
        toState: step.toState,
        toFinal: TERMINAL_STATES.has(step.toState) || step.reason === ReasonCode.statusHorizon,
        reason: step.reason,
        ...(step.reasonDetail === undefined ? {} : { reasonDetail: step.reasonDetail }),
      },
      faults,
    );
    if (outcome !== undefined) return { at: step.at, outcome };
  }
  return undefined;
}
