/**
 * The `lost_deliverable` invariant: admitted commands whose destination and provider could have
 * taken an SMS and that ended without one. Every command that ended with no provider-accepted
 * message for its key (a `failed` message is none) gets one reason, from what the scenario knows
 * (the faults it injected per key and when, the provider's request log and ledger, the trail).
 * A reason is either an excuse (documented: the provider refused, the provider failed every
 * try, a provider that cannot prove absence, Message Redaction seen, a token too short-lived
 * under an injected fault) or not; `lost_deliverable` counts the commands without an excuse.
 * It is strict: an expiry with no injected fault on the key (our own slowness) or caused only by
 * lost write answers, throttling or retries that the service should have absorbed is not excused.
 */
import { SEND_FAULT_MODES } from '../../local/simulator/faults.js';
import type { EvidenceRecord, NotificationRecord } from '../../shared/domain/notification.js';
import { isFinal } from '../../shared/domain/notification.js';
import { ReasonCode } from '../../shared/domain/states.js';
import type { InvariantResult, LedgerEntry, SendRequestEntry } from './invariants.js';
import { keyOfReference } from './invariants.js';

/** One simulator fault phase as the driver applied it (wall-clock ms). */
export interface PhaseWindow {
  readonly start: number;
  readonly end: number;
  /** The send fault (`null`: none) and message faults (`redaction`, ...) of the phase. */
  readonly sendFault: string | null;
  readonly messageFaults: readonly string[];
}

/** What the classification reads; a part of the chaos dataset. */
export interface DeliverableInput {
  readonly commands: readonly NotificationRecord[];
  readonly evidence: readonly EvidenceRecord[];
  readonly ledger: readonly LedgerEntry[];
  readonly requests: readonly SendRequestEntry[];
  readonly provider: 'twilio' | 'sns' | 'eum';
  readonly phases: readonly PhaseWindow[];
  /** Injected faults per key (crash_<step>, decrypt_failure, throttle, lost_answer_<kind>). */
  readonly faultsByKey: ReadonlyMap<string, ReadonlySet<string>>;
  /** Keys of the scenario's short-life events (6-9 s tokens). */
  readonly shortLifeKeys: ReadonlySet<string>;
}

/** Reasons that excuse a command without an SMS (docs/chaos.md lists them with their grounds). */
export const EXCUSED_REASONS = [
  /** The provider refused the send for good (the simulator's `reject_permanent`). */
  'provider_refused_permanent',
  /** Every try that reached the provider failed there (5xx, 429, not-sent failures) until no try was left. */
  'provider_failed_every_try',
  /** SNS: an unknown outcome (a provider fault or a sender crash) that no SNS read can prove absent. */
  'sns_unknown_unprovable',
  /** End User Messaging: the same, no event named the message. */
  'eum_unknown_unprovable',
  /** Twilio with Message Redaction seen before the token expired: absence unprovable (README). */
  'redaction_on',
  /**
   * The provider accepted the message and held it in its queue until its validity period (the
   * token's remaining life) ended, then failed it (Twilio 30036; for the AWS simulator, whose
   * ledger has no code, a failure while only `queue_delay` could cause it): no
   * time was left for another send, and one while it was queued could have been a duplicate.
   */
  'provider_queue_expired',
  /**
   * A short-life event (a 6-9 s token: 1-4 s before the dispatch deadline) that expired before
   * any send, or that an injected fault touched: the scenario makes these race the pipeline
   * (stream, forwarder, queue, sender) on purpose, to test "never after expiry".
   */
  'token_life_short',
  /**
   * End User Messaging: the provider accepted the message, then failed it while its events were
   * lost (`fail_not_sent` with `receipt_loss`). Events are the only evidence this provider gives,
   * so the service cannot learn of the failure and closes the command `sent` at the status horizon
   * (docs/providers/aws.md); a resend without that evidence could be a second SMS.
   */
  'eum_events_lost',
  /**
   * SNS or End User Messaging: a send that timed out before any request reached the provider (the
   * soak's 1 s provider timeout on a loaded machine), which these providers can never prove absent:
   * an unknown without evidence, a documented unprovable case (README), listed apart from injected
   * faults because it is the service's own slowness (docs/chaos.md).
   */
  'sns_unknown_no_provider_call',
  'eum_unknown_no_provider_call',
] as const;
export type ExcusedReason = (typeof EXCUSED_REASONS)[number];

/** The verdict: the invariant, and every zero-SMS command counted by reason. */
export interface DeliverableReport {
  readonly invariant: InvariantResult;
  /** Commands that ended without an SMS, by reason (excused and not). */
  readonly byReason: Readonly<Record<string, number>>;
  readonly zeroSms: number;
}

/**
 * Faults of the provider's send that mean it may have taken the message (it did not, here): the
 * fault catalogue's request lane (local/simulator/fault-catalogue.ts).
 */
const PROVIDER_SEND_FAULTS: ReadonlySet<string> = new Set(SEND_FAULT_MODES);

/** Twilio's "Validity Period Expired": the message stayed queued past its validity and was not sent. */
const VALIDITY_EXPIRED_CODE = 30036;

const CRASH_AFTER_CLAIM = ['crash_after_claim', 'crash_after_provider_call', 'crash_before_outcome_write'];

/** The injected faults that touched a key, for an unexcused reason's label. */
const touched = (faults: ReadonlySet<string>) => [...faults].sort().join('+') || 'no_fault';

/** Classifies one command that ended without an SMS. */
function reasonFor(
  record: NotificationRecord,
  trail: readonly EvidenceRecord[],
  requests: readonly SendRequestEntry[],
  failedMessages: number,
  failedCodes: ReadonlySet<number>,
  failedAcceptedAt: readonly number[],
  input: DeliverableInput,
): string {
  const faults = input.faultsByKey.get(record.idempotencyKey) ?? new Set<string>();
  const reason = record.lastReason;
  const provider = input.provider;
  const refused = requests.some((r) => r.fault === 'reject_permanent');
  if (reason === ReasonCode.providerRejectedPermanent && (refused || failedMessages > 0)) {
    return 'provider_refused_permanent';
  }
  if (failedCodes.has(VALIDITY_EXPIRED_CODE)) return 'provider_queue_expired';
  // The AWS simulator's ledger has no error code: a failed message accepted while `queue_delay`
  // was on and `fail_not_sent` was not can only have failed by its TTL (TEXT_TTL_EXPIRED).
  const phaseAt = (at: number) => input.phases.find((p) => p.start <= at && at < p.end);
  const queueExpired = failedAcceptedAt.some((at) => {
    const faults = phaseAt(at)?.messageFaults ?? [];
    return faults.includes('queue_delay') && !faults.includes('fail_not_sent');
  });
  if (provider !== 'twilio' && queueExpired) return 'provider_queue_expired';
  const failedUnseen = failedAcceptedAt.some((at) => phaseAt(at)?.messageFaults.includes('receipt_loss'));
  if (provider === 'eum' && record.state === 'sent' && failedUnseen) return 'eum_events_lost';
  const everyTryFailed =
    requests.length > 0 && requests.every((r) => r.fault !== null && PROVIDER_SEND_FAULTS.has(r.fault));
  if (
    (reason === ReasonCode.retryExhausted || reason === ReasonCode.providerNotSent) &&
    (everyTryFailed || failedMessages >= requests.length)
  ) {
    return 'provider_failed_every_try';
  }
  const unknownAttempt = trail
    .filter((e) => e.toState === 'dispatch_unknown' && e.fromState !== 'dispatch_unknown')
    .map((e) => e.attempt)
    .at(-1);
  if (reason === ReasonCode.unknownAtExpiry && unknownAttempt !== undefined) {
    const request = requests.find((r) => r.client_reference === `${record.idempotencyKey}#${unknownAttempt}`);
    const cause =
      request?.fault != null && PROVIDER_SEND_FAULTS.has(request.fault)
        ? `provider_${request.fault}`
        : CRASH_AFTER_CLAIM.some((c) => faults.has(c))
          ? 'sender_crash'
          : request
            ? 'answered'
            : 'no_provider_call';
    const injected = cause.startsWith('provider_') || cause === 'sender_crash';
    if (injected && provider === 'sns') return 'sns_unknown_unprovable';
    if (injected && provider === 'eum') return 'eum_unknown_unprovable';
    if (cause === 'no_provider_call' && (provider === 'sns' || provider === 'eum')) {
      return `${provider}_unknown_no_provider_call`;
    }
    const claimedAt = trail.find((e) => e.reason === ReasonCode.claimed && e.attempt === unknownAttempt)?.at;
    const redactionSeen = input.phases.some(
      (p) => p.messageFaults.includes('redaction') && p.start < record.expiresAt,
    );
    if (injected && provider === 'twilio' && redactionSeen && claimedAt !== undefined) return 'redaction_on';
    return `unknown_at_expiry:${cause}:${touched(faults)}`;
  }
  if (
    input.shortLifeKeys.has(record.idempotencyKey) &&
    (reason === ReasonCode.expiredBeforeDispatch || faults.size > 0)
  ) {
    return 'token_life_short';
  }
  return `${reason}:${touched(faults)}`;
}

/** Counts `lost_deliverable` and classifies every command that ended without an SMS. */
export function checkLostDeliverable(input: DeliverableInput): DeliverableReport {
  const sms = new Set<string>();
  const failedMessages = new Map<string, number>();
  const failedCodes = new Map<string, Set<number>>();
  const failedAcceptedAt = new Map<string, number[]>();
  for (const m of input.ledger) {
    const key = keyOfReference(m.client_reference);
    if (key === null) continue;
    if (m.status === 'failed') {
      failedMessages.set(key, (failedMessages.get(key) ?? 0) + 1);
      failedAcceptedAt.set(key, [...(failedAcceptedAt.get(key) ?? []), Date.parse(m.accepted_at)]);
      if (typeof m.error_code === 'number') {
        failedCodes.set(key, new Set([...(failedCodes.get(key) ?? []), m.error_code]));
      }
    } else sms.add(key);
  }
  const requestsOf = new Map<string, SendRequestEntry[]>();
  for (const r of input.requests) {
    const key = keyOfReference(r.client_reference);
    if (key !== null) requestsOf.set(key, [...(requestsOf.get(key) ?? []), r]);
  }
  const trails = new Map<string, EvidenceRecord[]>();
  for (const e of input.evidence) trails.set(e.idempotencyKey, [...(trails.get(e.idempotencyKey) ?? []), e]);
  const excused = new Set<string>(EXCUSED_REASONS);
  const byReason: Record<string, number> = {};
  const problems: string[] = [];
  let zeroSms = 0;
  for (const record of input.commands) {
    // Not final yet: the `lost` and `stuck` invariants count it.
    if (!isFinal(record) || sms.has(record.idempotencyKey)) continue;
    zeroSms++;
    const trail = (trails.get(record.idempotencyKey) ?? []).sort((a, b) => a.seq - b.seq);
    const why = reasonFor(
      record,
      trail,
      requestsOf.get(record.idempotencyKey) ?? [],
      failedMessages.get(record.idempotencyKey) ?? 0,
      failedCodes.get(record.idempotencyKey) ?? new Set(),
      failedAcceptedAt.get(record.idempotencyKey) ?? [],
      input,
    );
    byReason[why] = (byReason[why] ?? 0) + 1;
    if (!excused.has(why)) problems.push(`${record.idempotencyKey}: ${record.state} without an SMS (${why})`);
  }
  // One example per reason first (a reason holds many keys), so the forensics show each kind.
  const reasonOf = (p: string) => p.slice(p.lastIndexOf('('));
  const firsts = problems.filter((p, i) => problems.findIndex((q) => reasonOf(q) === reasonOf(p)) === i);
  const examples = [...firsts, ...problems.filter((p) => !firsts.includes(p))].slice(0, 5);
  return {
    invariant: {
      name: 'lost_deliverable',
      label: 'commands that could have taken an SMS and ended without one, no excusing reason',
      count: problems.length,
      examples,
      keys: [...new Set(examples.map((p) => p.split(': ')[0] as string))],
    },
    byReason,
    zeroSms,
  };
}
