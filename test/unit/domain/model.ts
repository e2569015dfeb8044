/**
 * A small executable model of the pipeline around the pure domain: a sender, a reconciler, a
 * provider with a ledger of accepted messages, a manual clock and conditional writes. It applies
 * only what the domain decides, and records everything the properties need to judge a run.
 */
import fc from 'fast-check';
import {
  applyLookup,
  decideDispatch,
  decideReconcile,
  recordSendOutcome,
} from '../../../shared/domain/dispatch.js';
import {
  admit,
  applyTransition,
  type EvidenceRecord,
  isFinal,
  type NotificationRecord,
  type TransitionIntent,
} from '../../../shared/domain/notification.js';
import type { DispatchPolicy } from '../../../shared/domain/policy.js';
import {
  AbsenceProof,
  clientReference,
  type LookupOutcome,
  type ProviderStatus,
  type SendOutcome,
} from '../../../shared/domain/provider.js';
import { ManualClock } from '../../support/manual-clock.js';
import { anAdmissionInput, aRequest, SECOND, T0 } from './fixtures.js';

/** A provider that can prove absence (the domain adds its own two-read rule). */
const PROVABLE = { absenceProof: AbsenceProof.conditional } as const;

/** How one provider call goes (the simulator's fault modes, plus crashes and phantom ids). */
export const FAULTS = [
  'ok',
  'timeout_before_accept',
  'timeout_after_accept',
  'error_5xx_before_accept',
  'error_5xx_after_accept',
  'ambiguous_with_id',
  'ambiguous_with_phantom_id',
  'rate_limited',
  'unavailable_retryable',
  'reject_permanent',
  'crash_before_accept',
  'crash_after_accept',
] as const;
export type Fault = (typeof FAULTS)[number];

export type Step =
  | { readonly kind: 'advance'; readonly ms: number }
  | {
      readonly kind: 'sender';
      readonly fault: Fault;
      /** Where in the allowed call window the provider answers or accepts, in thousandths. */
      readonly callPoint: number;
      readonly retryAfterMs: number | undefined;
      /** How long after acceptance the message becomes visible to lookups, in thousandths of the settle time. */
      readonly visibilityLag: number;
      readonly finalStatus: 'delivered' | 'undelivered' | 'never';
      readonly finalAfterMs: number;
      /** The sender's outcome write is delayed until a later `finish` step (a slow or paused sender). */
      readonly stall: boolean;
    }
  | { readonly kind: 'finish' }
  | { readonly kind: 'reconciler'; readonly inconclusive: boolean };

export interface Scenario {
  readonly policy: DispatchPolicy;
  readonly lifeMs: number;
  readonly steps: readonly Step[];
  /** Cycled through during the drain phase. */
  readonly drainSteps: readonly Step[];
}

export interface Message {
  readonly id: string;
  readonly clientReference: string;
  readonly acceptedAt: number;
  readonly visibleAt: number;
  readonly finalStatus: 'delivered' | 'undelivered' | 'never';
  readonly finalAt: number;
}

export interface Claim {
  readonly at: number;
  readonly attempt: number;
  readonly callDeadline: number;
  readonly leaseUntil: number;
  readonly dispatchDeadline: number;
  /** The state history position of the claim (evidence seq). */
  readonly seq: number;
}

export interface Trace {
  readonly record: NotificationRecord;
  readonly evidence: readonly EvidenceRecord[];
  readonly ledger: readonly Message[];
  readonly claims: readonly Claim[];
  /** Invariant breaches noticed while running (empty in a good run). */
  readonly violations: readonly string[];
}

interface Pending {
  readonly expectedVersion: number;
  readonly outcome: SendOutcome;
}

const DRAIN_TICK_MS = 250;

/** Runs a scenario: the random steps, then a drain phase that lets the clock run out. */
export function simulate(scenario: Scenario, drainIterations = 3_000): Trace {
  const { policy } = scenario;
  const clock = new ManualClock(T0);
  const request = aRequest({ expiresAt: T0 + scenario.lifeMs });
  const admission = admit(
    anAdmissionInput({ request, now: T0, safetyNetAt: T0 + policy.queueSafetyNetMs, providerName: 'sim' }),
  );
  let record = admission.next;
  const evidence: EvidenceRecord[] = [admission.evidence];
  const ledger: Message[] = [];
  const claims: Claim[] = [];
  const violations: string[] = [];
  const pending: Pending[] = [];
  let ids = 0;

  const apply = (intent: TransitionIntent) => {
    const before = record;
    const applied = applyTransition(record, intent);
    record = applied.next;
    evidence.push(applied.evidence);
    checkRecordInvariants(before);
  };

  const checkRecordInvariants = (before: NotificationRecord) => {
    if (isFinal(record)) {
      for (const field of ['dueAt', 'leaseUntil', 'leaseOwner', 'nextAttemptAt'] as const) {
        if (record[field] !== undefined) violations.push(`final ${record.state} keeps ${field}`);
      }
    } else if (record.dueAt === undefined) {
      violations.push(`non-final ${record.state} has no dueAt (lost from the sparse index)`);
    }
    if (before.state === 'dispatching' && record.state === 'dispatching') violations.push('double claim');
  };

  const lookup = (inconclusive: boolean): LookupOutcome => {
    if (inconclusive) return { kind: 'inconclusive', detail: 'provider 503' };
    const now = clock.now();
    const ref = record.provider.messageId;
    const found =
      ref !== undefined
        ? ledger.find((m) => m.id === ref)
        : ledger.find((m) => m.clientReference === clientReference(record.idempotencyKey, record.attempts));
    if (found === undefined || now < found.visibleAt) return { kind: 'absent' };
    return { kind: 'found', messageId: found.id, status: statusOf(found, now) };
  };

  const runSender = (step: Extract<Step, { kind: 'sender' }>) => {
    const now = clock.now();
    const decision = decideDispatch(record, now, policy, 'sender-model');
    if (decision.kind === 'skip') return;
    if (decision.kind === 'transition') {
      apply(decision.intent);
      return;
    }
    apply(decision.intent);
    const claim: Claim = {
      at: now,
      attempt: record.attempts,
      callDeadline: decision.callDeadline,
      leaseUntil: record.leaseUntil ?? Number.NaN,
      dispatchDeadline: record.expiresAt - policy.dispatchMarginMs,
      seq: record.version,
    };
    claims.push(claim);
    const answerAt = now + Math.floor(((decision.callDeadline - now) * step.callPoint) / 1000);
    const accept = (messageId?: string) => {
      const id = messageId ?? `SM-${++ids}`;
      ledger.push({
        id,
        clientReference: clientReference(record.idempotencyKey, record.attempts),
        acceptedAt: answerAt,
        visibleAt: answerAt + Math.floor((policy.reconcileSettleMs * step.visibilityLag) / 1000),
        finalStatus: step.finalStatus,
        finalAt: answerAt + step.finalAfterMs,
      });
      return id;
    };
    let outcome: SendOutcome | undefined;
    let outcomeAt = answerAt;
    switch (step.fault) {
      case 'ok':
        outcome = { kind: 'accepted', messageId: accept() };
        break;
      case 'timeout_before_accept':
        outcome = { kind: 'unknown', detail: 'timeout', timedOut: true };
        outcomeAt = decision.callDeadline;
        break;
      case 'timeout_after_accept':
        accept();
        outcome = { kind: 'unknown', detail: 'timeout', timedOut: true };
        outcomeAt = decision.callDeadline;
        break;
      case 'error_5xx_before_accept':
        outcome = { kind: 'unknown', detail: '503', timedOut: false };
        break;
      case 'error_5xx_after_accept':
        accept();
        outcome = { kind: 'unknown', detail: '500', timedOut: false };
        break;
      case 'ambiguous_with_id':
        outcome = { kind: 'unknown', detail: 'unparseable 200', timedOut: false, messageId: accept() };
        break;
      case 'ambiguous_with_phantom_id':
        // The provider returned an id with an error, but never kept a message: lookups by that id say absent.
        outcome = { kind: 'unknown', detail: '500 with id', timedOut: false, messageId: `PHANTOM-${++ids}` };
        break;
      case 'rate_limited':
        outcome =
          step.retryAfterMs === undefined
            ? { kind: 'not_sent_retryable', detail: '429' }
            : { kind: 'not_sent_retryable', detail: '429', retryAfterMs: step.retryAfterMs };
        break;
      case 'unavailable_retryable':
        outcome = { kind: 'not_sent_retryable', detail: 'definitely not sent' };
        break;
      case 'reject_permanent':
        outcome = { kind: 'not_sent_permanent', detail: 'invalid destination' };
        break;
      case 'crash_before_accept':
        break;
      case 'crash_after_accept':
        accept();
        break;
    }
    clock.set(Math.max(clock.now(), outcomeAt));
    if (outcome === undefined) return;
    if (step.stall) {
      pending.push({ expectedVersion: record.version, outcome });
      return;
    }
    apply(recordSendOutcome(record, outcome, clock.now(), policy));
  };

  const runFinish = () => {
    const next = pending.shift();
    // The outcome write is conditional on the version the sender claimed; a stale write is rejected.
    if (next === undefined || next.expectedVersion !== record.version) return;
    apply(recordSendOutcome(record, next.outcome, clock.now(), policy));
  };

  const runReconciler = (inconclusive: boolean) => {
    const now = clock.now();
    const step = decideReconcile(record, now, policy);
    switch (step.kind) {
      case 'skip':
        return;
      case 'transition':
        apply(step.intent);
        return;
      case 'redrive':
        record = { ...record, dueAt: step.nextDueAt };
        return;
      case 'lookup': {
        const result = applyLookup(record, lookup(inconclusive), now, policy, PROVABLE);
        if ('kind' in result) {
          if (result.dueAt <= now) violations.push('reschedule not in the future');
          record = { ...record, dueAt: result.dueAt };
        } else {
          apply(result);
        }
      }
    }
  };

  const run = (step: Step) => {
    switch (step.kind) {
      case 'advance':
        clock.advance(step.ms);
        return;
      case 'sender':
        runSender(step);
        return;
      case 'finish':
        runFinish();
        return;
      case 'reconciler':
        runReconciler(step.inconclusive);
    }
  };

  for (const step of scenario.steps) run(step);

  // Drain: stalled senders are gone (crashed); time runs on; the queue and the reconciler keep working.
  pending.length = 0;
  for (let i = 0; i < drainIterations && !isFinal(record); i += 1) {
    const step = scenario.drainSteps[i % scenario.drainSteps.length] ?? {
      kind: 'reconciler',
      inconclusive: false,
    };
    // Jump to when the queue (accepted: at nextAttemptAt) or the reconciler (dueAt) next looks, but let at
    // least a quarter second pass per round (policies with a 1 ms backoff).
    const next = record.state === 'accepted' ? (record.nextAttemptAt ?? record.dueAt) : record.dueAt;
    clock.set(Math.max(clock.now() + DRAIN_TICK_MS, next ?? clock.now()));
    if (step.kind === 'sender') runSender({ ...step, stall: false });
    runReconciler(step.kind === 'reconciler' && step.inconclusive);
  }

  return { record, evidence, ledger, claims, violations };
}

function statusOf(message: Message, now: number): ProviderStatus {
  if (message.finalStatus === 'never' || now < message.finalAt) return 'sent';
  return message.finalStatus;
}

/** Sane policies around the defaults: every timing setting varies independently. */
export const policyArb: fc.Arbitrary<DispatchPolicy> = fc
  .record({
    dispatchMarginMs: fc.integer({ min: 0, max: 10 * SECOND }),
    providerTimeoutMs: fc.integer({ min: 100, max: 5 * SECOND }),
    leaseSlackMs: fc.integer({ min: 1, max: 5 * SECOND }),
    claimWriteBudgetMs: fc.integer({ min: 0, max: 3 * SECOND }),
    reconcileSettleMs: fc.integer({ min: 0, max: 20 * SECOND }),
    backoffBaseMs: fc.integer({ min: 1, max: 5 * SECOND }),
    backoffExtraMs: fc.integer({ min: 0, max: 55 * SECOND }),
    statusHorizonMs: fc.integer({ min: SECOND, max: 120 * SECOND }),
    statusPollMs: fc.integer({ min: 500, max: 10 * SECOND }),
    queueSafetyNetMs: fc.integer({ min: SECOND, max: 60 * SECOND }),
    maxAttempts: fc.integer({ min: 1, max: 6 }),
    minSendWindowMs: fc.integer({ min: 0, max: 2 * SECOND }),
    minValidityMs: fc.integer({ min: 0, max: 6 * SECOND }),
  })
  .map(({ backoffExtraMs, ...rest }) => ({ ...rest, backoffMaxMs: rest.backoffBaseMs + backoffExtraMs }));

/** Faults whose outcome is unknown to the sender: the hard cases for "never a second send". */
export const UNKNOWN_OUTCOME_FAULTS: readonly Fault[] = [
  'timeout_before_accept',
  'timeout_after_accept',
  'error_5xx_before_accept',
  'error_5xx_after_accept',
  'ambiguous_with_id',
  'ambiguous_with_phantom_id',
  'crash_before_accept',
  'crash_after_accept',
];

export interface ScenarioOptions {
  /** The provider behaviours to draw from (default: all of them). */
  readonly faults?: readonly Fault[];
  /** One lookup in this many is inconclusive (default 4). */
  readonly inconclusiveOneIn?: number;
}

/** Random scenarios: a policy, a token life, random steps and the steps cycled while draining. */
export function scenarioArbWith(options: ScenarioOptions = {}): fc.Arbitrary<Scenario> {
  const faults = options.faults ?? FAULTS;
  const inconclusiveOneIn = options.inconclusiveOneIn ?? 4;
  const reconcilerStepArb: fc.Arbitrary<Step> = fc
    .integer({ min: 1, max: inconclusiveOneIn })
    .map((n) => ({ kind: 'reconciler' as const, inconclusive: n === 1 }));
  const senderStepArb: fc.Arbitrary<Step> = fc.record({
    kind: fc.constant('sender' as const),
    fault: fc.constantFrom(...faults),
    callPoint: fc.integer({ min: 0, max: 1000 }),
    retryAfterMs: fc.option(fc.integer({ min: 0, max: 30 * SECOND }), { nil: undefined }),
    visibilityLag: fc.integer({ min: 0, max: 1000 }),
    finalStatus: fc.constantFrom('delivered' as const, 'undelivered' as const, 'never' as const),
    finalAfterMs: fc.integer({ min: 0, max: 120 * SECOND }),
    stall: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  });
  const stepArb: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.integer({ min: 0, max: 20 * SECOND }).map((ms) => ({ kind: 'advance' as const, ms })),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 0, max: 120 * SECOND }).map((ms) => ({ kind: 'advance' as const, ms })),
    },
    { weight: 4, arbitrary: senderStepArb },
    { weight: 1, arbitrary: fc.constant({ kind: 'finish' as const }) },
    { weight: 4, arbitrary: reconcilerStepArb },
  );
  return fc.record({
    policy: policyArb,
    // Mostly long enough for several attempts, sometimes about to expire on arrival.
    lifeMs: fc.oneof(
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 10 * SECOND }) },
      { weight: 4, arbitrary: fc.integer({ min: 10 * SECOND, max: 180 * SECOND }) },
    ),
    steps: fc.array(stepArb, { maxLength: 60, size: 'medium' }),
    drainSteps: fc.array(fc.oneof(senderStepArb, reconcilerStepArb), { minLength: 1, maxLength: 12 }),
  });
}

export const scenarioArb: fc.Arbitrary<Scenario> = scenarioArbWith();
