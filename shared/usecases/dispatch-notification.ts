import type { Clock } from '../domain/clock.js';
import { type ClockCheck, checkClock } from '../domain/clock-skew.js';
import {
  abandonClaim,
  type DispatchDecision,
  decideDispatch,
  recordSendOutcome,
  refusedForFailover,
} from '../domain/dispatch.js';
import {
  type CircuitRead,
  chooseProvider,
  failoverCandidates,
  failsOverOnRefusal,
  healthSampleOf,
  pastAttempts,
} from '../domain/failover.js';
import { applyTransition, type NotificationRecord, type TransitionIntent } from '../domain/notification.js';
import { type DispatchPolicy, dispatchDeadline } from '../domain/policy.js';
import { clientReference, type SendOutcome } from '../domain/provider.js';
import { Actor } from '../domain/states.js';
import { renderBody } from '../domain/templates.js';
import type { DestinationFaults } from '../domain/zero-sms.js';
import type { Cipher } from '../ports/cipher.js';
import type { CommandStore } from '../ports/command-store.js';
import { transientFaultOf } from '../ports/faults.js';
import type { ProviderHealth } from '../ports/provider-health.js';
import type { ServerTimeSource } from '../ports/server-time.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import { MissingPayloadError, PayloadUnreadableError } from './errors.js';
import { openPayload } from './payload-seal.js';
import { withReceiptGrace } from './reconcile-key.js';

export interface DispatchDeps {
  readonly store: CommandStore;
  readonly cipher: Cipher;
  /** The primary provider (the first of `providers` when those are given). */
  readonly provider: SmsProvider;
  /**
   * Every provider in order of preference (`PROVIDERS`, docs/providers/failover.md). With more
   * than one, each attempt's provider is chosen by the failover decision and recorded on the
   * claim; unset or one: every attempt goes to the record's provider through `provider`.
   */
  readonly providers?: readonly SmsProvider[];
  /** The providers' circuits, shared by every sender: read before an attempt, fed after each send. */
  readonly health?: ProviderHealth;
  /** Every provider's destination faults: a refusal about the destination is no sign of ill health. */
  readonly destinationFaults?: readonly DestinationFaults[];
  readonly clock: Clock;
  readonly policy: DispatchPolicy;
  /** Identifies this sender instance in leases. */
  readonly owner: string;
  /** First status poll of a `sent` message this long after the send, when the provider pushes receipts. */
  readonly receiptGraceMs?: number;
  /**
   * The store's server time (docs/design.md#clock-skew): our clock is checked against it before
   * each provider attempt. Without one (or before its first sample) our clock is used unchecked.
   */
  readonly serverTime?: ServerTimeSource;
}

/** What one dispatch did, for logs, metrics and tests. */
export type DispatchReport =
  | { readonly kind: 'missing' }
  | { readonly kind: 'skipped'; readonly why: string; readonly state: string }
  | { readonly kind: 'lost_race'; readonly at: 'claim' | 'transition' | 'outcome' }
  | { readonly kind: 'transitioned'; readonly to: string; readonly reason: string }
  /** Our clock is off the store's beyond the bound: the claim was given back (`recorded`), nothing sent. */
  | {
      readonly kind: 'refused';
      readonly why: 'clock_skew';
      readonly detail: string;
      readonly recorded: boolean;
    }
  | {
      readonly kind: 'sent';
      readonly outcome: SendOutcome['kind'];
      /** The classification's detail (never message content). */
      readonly detail?: string;
      readonly recorded: boolean;
      readonly to: string;
    };

/**
 * The sender's use case: re-read strongly, decide, claim with a lease, call the provider inside
 * the lease and the token's life, record the classified outcome. Duplicates end as skips.
 */
export async function dispatchNotification(
  deps: DispatchDeps,
  idempotencyKey: string,
): Promise<DispatchReport> {
  const stored = await deps.store.get(idempotencyKey);
  if (!stored) return { kind: 'missing' };
  // The later of our clock and the store's: a slow clock must not see a live token in a dead one.
  const decidedAt = checkedClock(deps).now;
  let decision: DispatchDecision = decideDispatch(stored.record, decidedAt, deps.policy, deps.owner);
  if (decision.kind === 'claim' && (deps.providers?.length ?? 0) > 1) {
    // Failover (docs/providers/failover.md): the same decision with the attempt's provider chosen.
    const chosen = await chooseAttemptProvider(deps, stored.record, decidedAt);
    decision = decideDispatch(stored.record, decidedAt, deps.policy, deps.owner, Actor.sender, chosen);
  }
  if (decision.kind === 'skip') return { kind: 'skipped', why: decision.why, state: stored.record.state };
  if (decision.kind === 'transition') {
    const written = await write(deps, stored.record, decision.intent);
    return written
      ? { kind: 'transitioned', to: decision.intent.to, reason: decision.intent.reason }
      : lost('transition');
  }

  if (!stored.sealedPayload)
    throw new MissingPayloadError(`command ${idempotencyKey} has no payload to send`);
  // Opened before the claim: a cipher or KMS failure then means "not sent" (nothing claimed, no
  // unknown outcome); the queue delivers the message again after its visibility timeout, and the
  // reconciler expires the command on time if the key never comes back.
  let payload: Awaited<ReturnType<typeof openPayload>>;
  try {
    payload = await openPayload(deps.cipher, idempotencyKey, stored.sealedPayload);
  } catch (error) {
    throw new PayloadUnreadableError(`payload of ${idempotencyKey} could not be opened; not sent`, {
      cause: error,
    });
  }
  const claimed = await write(deps, stored.record, decision.intent);
  if (!claimed) return lost('claim');

  // Checked against the best recent server time (the claim's own answer when it was quick) before the attempt: beyond
  // the bound nothing is sent, and the claim is given back with the reason.
  const clock = checkedClock(deps);
  // The time budget starts now, not at the decision: the claim write itself may have been slow.
  const callStart = clock.now;
  if (clock.kind === 'beyond_bound') {
    const written = await write(deps, claimed, abandonClaim(claimed, callStart, clock.detail));
    return { kind: 'refused', why: 'clock_skew', detail: clock.detail, recorded: written !== undefined };
  }
  // Never past the call deadline the claim recorded: absence reads and list-lag allowances count
  // from it, so a call may not outlast it (the claim budgets for its own write, so a slow one still fits).
  const callEnd = Math.min(
    callStart + deps.policy.providerTimeoutMs,
    dispatchDeadline(claimed, deps.policy),
    claimed.callDeadline ?? decision.callDeadline,
    (claimed.leaseUntil ?? decision.callDeadline) - deps.policy.leaseSlackMs / 2,
  );
  if (callEnd - callStart < Math.min(deps.policy.minSendWindowMs, deps.policy.providerTimeoutMs)) {
    // Too late to start a call that could finish in time: nothing is sent, never after the deadline.
    const abandoned = abandonClaim(claimed, callStart);
    const written = await write(deps, claimed, abandoned);
    return written ? { kind: 'transitioned', to: abandoned.to, reason: abandoned.reason } : lost('outcome');
  }
  const provider = attemptProvider(deps, claimed.provider.name);
  const outcome: SendOutcome = await sendSafely(provider, {
    idempotencyKey,
    attempt: claimed.attempts,
    clientReference: clientReference(idempotencyKey, claimed.attempts),
    to: payload.phone,
    body: renderBody(claimed.template, claimed.locale, payload.params),
    // The provider must not deliver a stale reset: validity = the token's remaining life, never more.
    validityPeriodSeconds: Math.floor((claimed.expiresAt - callStart) / 1000),
    // The provider times its call on our own clock: the deadline goes back to it.
    deadline: callEnd - clock.offsetMs,
  });

  const answeredAt = checkedClock(deps).now;
  const intent = withReceiptGrace({ ...deps, provider }, outcomeIntent(deps, claimed, outcome, answeredAt));
  // If the lease was taken over meanwhile, the reconciler finds this attempt by its client reference.
  const recorded = await write(deps, claimed, intent);
  await recordHealth(deps, claimed.provider.name, outcome, answeredAt);
  const detail = 'detail' in outcome ? { detail: outcome.detail } : {};
  return { kind: 'sent', outcome: outcome.kind, ...detail, recorded: recorded !== undefined, to: intent.to };
}

/**
 * One guarded write, tried once more after a transient fault. The store answers `written` for a
 * write of ours that was applied but whose answer was lost, so a transient fault means it found
 * the write not applied; the guard (state and version) makes the second try safe. It matters most
 * after a claim: a claim left behind by a failed give-back or outcome write would go unknown at
 * its lease's end although this sender knows what it did.
 */
async function write(
  deps: Pick<DispatchDeps, 'store'>,
  record: NotificationRecord,
  intent: TransitionIntent,
): Promise<NotificationRecord | undefined> {
  const applied = applyTransition(record, intent);
  let result: Awaited<ReturnType<CommandStore['transition']>>;
  try {
    result = await deps.store.transition(applied);
  } catch (error) {
    if (transientFaultOf(error) === undefined) throw error;
    result = await deps.store.transition(applied);
  }
  return result.kind === 'written' ? result.record : undefined;
}

/**
 * Our clock checked against the store's latest server time: `now` is the later of the two
 * (deadlines are never passed unnoticed), `offsetMs` what it adds to our own reading.
 */
function checkedClock(
  deps: Pick<DispatchDeps, 'clock' | 'serverTime'>,
): ClockCheck & { readonly offsetMs: number } {
  const local = deps.clock.now();
  const check = checkClock(deps.serverTime?.latestServerTime(), local);
  return { ...check, offsetMs: check.now - local };
}

/**
 * The provider of the next attempt (`../domain/failover.ts`): circuits are read one provider at a
 * time, best candidate first, and no further than the first that is not open (a half-open view lets
 * this sender's probe through: it must be the provider it then sends to). No choice (an earlier
 * attempt may have sent): the record's provider, as without failover; the domain sends nothing then.
 */
async function chooseAttemptProvider(
  deps: Pick<DispatchDeps, 'providers' | 'health'>,
  record: NotificationRecord,
  now: number,
): Promise<string> {
  const names = (deps.providers ?? []).map((p) => p.name);
  const attempts = pastAttempts(record);
  const candidates = failoverCandidates(names, attempts);
  if (candidates.kind === 'none') return record.provider.name;
  const circuits: CircuitRead[] = [];
  for (const name of candidates.order) {
    const view = await readCircuit(deps.health, name, now);
    circuits.push(view);
    if (view.state !== 'open') break;
  }
  const choice = chooseProvider(names, circuits, attempts);
  return choice.kind === 'provider' ? choice.provider : record.provider.name;
}

/** One provider's circuit; closed without a health port, or when it cannot be read (never blocks a send). */
async function readCircuit(
  health: ProviderHealth | undefined,
  provider: string,
  now: number,
): Promise<CircuitRead> {
  if (health === undefined) return { provider, state: 'closed' };
  try {
    const [view] = await health.view([provider], now);
    return { provider, state: view?.state ?? 'closed' };
  } catch {
    return { provider, state: 'closed' };
  }
}

/**
 * The adapter of the attempt's provider: `provider` when it is the one (as handed over, maybe
 * decorated), else by name among `providers`, else `provider`.
 */
function attemptProvider(deps: Pick<DispatchDeps, 'provider' | 'providers'>, name: string): SmsProvider {
  if (deps.provider.name === name) return deps.provider;
  return deps.providers?.find((p) => p.name === name) ?? deps.provider;
}

/** Feeds the send's sample to the provider's circuit; a failure to record it never touches the outcome. */
async function recordHealth(
  deps: Pick<DispatchDeps, 'health' | 'destinationFaults'>,
  provider: string,
  outcome: SendOutcome,
  now: number,
): Promise<void> {
  if (deps.health === undefined) return;
  try {
    await deps.health.record(provider, healthSampleOf(provider, outcome, deps.destinationFaults ?? []), now);
  } catch {
    // The port never throws on contention; any other fault only loses one sample.
  }
}

/**
 * The transition that records the send's outcome; a permanent refusal of the account with another
 * provider left fails over instead of ending the command (docs/providers/failover.md).
 */
function outcomeIntent(
  deps: Pick<DispatchDeps, 'providers' | 'destinationFaults' | 'policy'>,
  claimed: NotificationRecord,
  outcome: SendOutcome,
  now: number,
): TransitionIntent {
  const names = (deps.providers ?? []).map((p) => p.name);
  if (
    outcome.kind === 'not_sent_permanent' &&
    failsOverOnRefusal(names, claimed, outcome, deps.destinationFaults ?? [])
  ) {
    return refusedForFailover(claimed, outcome, now);
  }
  return recordSendOutcome(claimed, outcome, now, deps.policy);
}

function lost(at: 'claim' | 'transition' | 'outcome'): DispatchReport {
  return { kind: 'lost_race', at };
}

/** An adapter that throws breaks its contract; whatever happened is treated as an unknown outcome. */
async function sendSafely(
  provider: SmsProvider,
  command: Parameters<SmsProvider['send']>[0],
): Promise<SendOutcome> {
  try {
    return await provider.send(command);
  } catch (error) {
    return { kind: 'unknown', detail: `adapter_threw:${(error as Error).name}`, timedOut: false };
  }
}
