import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isFinal } from '../../../shared/domain/notification.js';
import {
  isTransitionAllowed,
  ReasonCode as R,
  NotificationState as S,
  TRANSITIONS,
} from '../../../shared/domain/states.js';
import { aPolicy, CODE, PHONE, SECOND } from './fixtures.js';
import {
  type Fault,
  type Scenario,
  type Step,
  scenarioArb,
  scenarioArbWith,
  simulate,
  type Trace,
  UNKNOWN_OUTCOME_FAULTS,
} from './model.js';

const RUNS = { numRuns: 1000 };

/** From dispatch_unknown, dispatching is reached only through accepted via reconciled_absent. */
function expectNoSendWhileUnknown(trace: Trace): void {
  let unknownOpen = false;
  for (const item of trace.evidence) {
    if (item.toState === S.dispatching)
      expect(unknownOpen, `claim seq ${item.seq} while unknown`).toBe(false);
    if (item.toState === S.dispatchUnknown) unknownOpen = true;
    if (item.toState === S.accepted && item.reason === R.reconciledAbsent) unknownOpen = false;
  }
}

describe('model: the domain driven by random provider outcomes and clock advances', () => {
  it('(1) never claims, nor lets the provider accept, at or after expiresAt - dispatchMarginMs', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        // Act
        const trace = simulate(scenario);

        // Assess
        for (const claim of trace.claims) {
          expect(claim.at).toBeLessThan(claim.dispatchDeadline);
          expect(claim.callDeadline).toBeLessThanOrEqual(claim.dispatchDeadline);
          expect(claim.callDeadline).toBeLessThanOrEqual(
            claim.at + scenario.policy.claimWriteBudgetMs + scenario.policy.providerTimeoutMs,
          );
          expect(claim.leaseUntil).toBeGreaterThan(claim.callDeadline);
        }
        const deadline = trace.record.expiresAt - scenario.policy.dispatchMarginMs;
        const claimEvidence = trace.evidence.filter((e) => e.toState === S.dispatching);
        expect(claimEvidence).toHaveLength(trace.claims.length);
        for (const item of claimEvidence) expect(item.at).toBeLessThan(deadline);
        for (const message of trace.ledger) expect(message.acceptedAt).toBeLessThanOrEqual(deadline);
        expect(trace.claims.length).toBeLessThanOrEqual(scenario.policy.maxAttempts);
      }),
      RUNS,
    );
  });

  it.each([
    ['any provider behaviour', scenarioArb, 1000],
    // The hard cases only (timeouts, 5xx, crashes, ids without a message), with mostly conclusive lookups.
    [
      'unknown outcomes only',
      scenarioArbWith({ faults: UNKNOWN_OUTCOME_FAULTS, inconclusiveOneIn: 8 }),
      2000,
    ],
  ] as const)(
    '(2) never sends again while an outcome is unknown (%s): at most one accepted message',
    (_l, arb, numRuns) => {
      fc.assert(
        fc.property(arb, (scenario) => {
          // Act
          const trace = simulate(scenario);

          // Assess
          expectNoSendWhileUnknown(trace);
          // And the promise itself: the provider's ledger never holds two messages for the command.
          const references = trace.ledger.map((m) => m.clientReference);
          expect(references.length, `accepted messages: ${references.join(', ')}`).toBeLessThanOrEqual(1);
        }),
        { numRuns },
      );
    },
  );

  it('(3) evidence seq is 1..n without gaps, chains from/to, follows the table, and replays to the record', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        // Act
        const { evidence, record, violations } = simulate(scenario);

        // Assess
        expect(violations).toEqual([]);
        expect(evidence.map((e) => e.seq)).toEqual(evidence.map((_, i) => i + 1));
        expect(evidence[0]?.fromState).toBeNull();
        for (let i = 1; i < evidence.length; i += 1) {
          const previous = evidence[i - 1];
          const current = evidence[i];
          expect(current?.fromState).toBe(previous?.toState);
          expect(current?.at).toBeGreaterThanOrEqual(previous?.at ?? Number.POSITIVE_INFINITY);
        }
        for (const item of evidence) {
          expect(isTransitionAllowed(item.fromState, item.toState, item.reason)).toBe(true);
          const rule = TRANSITIONS.find(
            (t) => t.from === item.fromState && t.to === item.toState && t.reasons.includes(item.reason),
          );
          expect(rule?.actors).toContain(item.actor);
          expect(item.idempotencyKey).toBe(record.idempotencyKey);
          expect(item.attempt).toBeLessThanOrEqual(record.attempts);
        }
        expect(evidence.at(-1)?.toState).toBe(record.state);
        expect(evidence.at(-1)?.seq).toBe(record.version);
        expect(evidence.at(-1)?.attempt).toBe(record.attempts);
        const json = JSON.stringify(evidence);
        expect(json).not.toContain(PHONE.slice(1));
        expect(json).not.toContain(CODE);
      }),
      RUNS,
    );
  });

  it('(4) nothing is lost: once the clock runs out, every run ends in a final state', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        // Act
        const trace = simulate(scenario);

        // Assess
        expect(isFinal(trace.record), `stuck in ${trace.record.state}`).toBe(true);
        const last = trace.evidence.at(-1);
        if (trace.record.state === S.sent) expect(last?.reason).toBe(R.statusHorizon);
        // A message the provider accepted is never reported as expired before dispatch or failed.
        if (trace.ledger.length > 0) {
          expect(trace.record.state).not.toBe(S.failed);
          expect(trace.evidence.map((e) => e.reason)).not.toContain(R.expiredBeforeDispatch);
        }
      }),
      RUNS,
    );
  });
});

describe('model: hand-picked scenarios', () => {
  const policy = aPolicy({ reconcileSettleMs: 10 * SECOND, dispatchMarginMs: 5 * SECOND, maxAttempts: 5 });
  const send = (fault: Fault, stall = false): Step => ({
    kind: 'sender',
    fault,
    callPoint: 500,
    retryAfterMs: undefined,
    visibilityLag: 0,
    finalStatus: 'never',
    finalAfterMs: 0,
    stall,
  });
  const advance = (ms: number): Step => ({ kind: 'advance', ms });
  const reconcile: Step = { kind: 'reconciler', inconclusive: false };
  const scenario = (steps: Step[]): Scenario => ({
    policy,
    lifeMs: 10 * 60 * SECOND,
    steps,
    drainSteps: [reconcile],
  });

  it('timeout after accept is found by client reference and never re-sent', () => {
    // Prepare
    const steps = [send('timeout_after_accept'), advance(11 * SECOND), reconcile, send('ok')];

    // Act
    const trace = simulate(scenario(steps));

    // Assess
    expect(trace.ledger).toHaveLength(1);
    expect(trace.evidence.map((e) => e.reason)).toEqual([
      R.admitted,
      R.claimed,
      R.providerTimeout,
      R.reconciledFound,
      R.statusHorizon,
    ]);
  });

  it('timeout before accept is re-sent only after two absent reads a settle time apart', () => {
    // Prepare
    const steps = [
      send('timeout_before_accept'),
      advance(SECOND),
      reconcile,
      send('ok'),
      advance(10 * SECOND),
    ];
    steps.push(reconcile, send('ok'));

    // Act
    const trace = simulate(scenario(steps));

    // Assess
    expect(trace.ledger).toHaveLength(1);
    expect(trace.evidence.map((e) => e.reason).slice(0, 7)).toEqual([
      R.admitted,
      R.claimed,
      R.providerTimeout,
      R.absenceObserved,
      R.reconciledAbsent,
      R.claimed,
      R.providerAccepted,
    ]);
  });

  it('an ambiguous id that turns out absent does not hide the next attempt’s message (no double send)', () => {
    // Prepare: attempt 1 returns a phantom id; attempt 2 times out after the provider accepted it.
    const steps = [
      send('ambiguous_with_phantom_id'),
      advance(11 * SECOND),
      reconcile,
      advance(11 * SECOND),
      reconcile,
      send('timeout_after_accept'),
      advance(11 * SECOND),
      reconcile,
      send('ok'),
    ];

    // Act
    const trace = simulate(scenario(steps));

    // Assess
    expect(trace.ledger).toHaveLength(1);
    expect(trace.evidence.map((e) => e.reason).slice(0, 8)).toEqual([
      R.admitted,
      R.claimed,
      R.providerAmbiguous,
      R.absenceObserved,
      R.reconciledAbsent,
      R.claimed,
      R.providerTimeout,
      R.reconciledFound,
    ]);
  });

  it('a crash after accept is caught by the lease, reconciled as found, and never re-sent', () => {
    // Prepare
    const steps = [
      send('crash_after_accept'),
      advance(20 * SECOND),
      send('ok'),
      reconcile,
      send('ok'),
      reconcile,
    ];

    // Act
    const trace = simulate(scenario(steps));

    // Assess
    expect(trace.ledger).toHaveLength(1);
    expect(trace.evidence.map((e) => e.reason).slice(0, 4)).toEqual([
      R.admitted,
      R.claimed,
      R.leaseExpired,
      R.reconciledFound,
    ]);
  });

  it('a stale sender write after the lease was taken over is rejected by the version check', () => {
    // Prepare: the sender stalls, the lease expires, the reconciler takes over, then the write arrives.
    const steps = [send('ok', true), advance(20 * SECOND), reconcile, { kind: 'finish' } as const];

    // Act
    const trace = simulate(scenario(steps));

    // Assess
    expect(trace.evidence.map((e) => e.reason).slice(0, 4)).toEqual([
      R.admitted,
      R.claimed,
      R.leaseExpired,
      R.reconciledFound,
    ]);
    expect(trace.evidence.map((e) => e.reason)).not.toContain(R.providerAccepted);
    expect(trace.ledger).toHaveLength(1);
  });
});
