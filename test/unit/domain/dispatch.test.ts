import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideDispatch, recordSendOutcome } from '../../../shared/domain/dispatch.js';
import { applyTransition, isFinal, type NotificationRecord } from '../../../shared/domain/notification.js';
import { backoffMs, dispatchDeadline } from '../../../shared/domain/policy.js';
import type { SendOutcome } from '../../../shared/domain/provider.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import {
  aDispatchingRecord,
  anUnknownRecord,
  aPolicy,
  aRecord,
  aSentRecord,
  MINUTE,
  SECOND,
  T0,
} from './fixtures.js';

const policy = aPolicy({
  dispatchMarginMs: 5 * SECOND,
  providerTimeoutMs: 3 * SECOND,
  leaseSlackMs: 5 * SECOND,
  minSendWindowMs: SECOND,
  maxAttempts: 5,
  backoffBaseMs: SECOND,
  backoffMaxMs: MINUTE,
});

/** Claims `record` at `now` through the domain's own decision, as the sender does. */
function claimed(record: NotificationRecord, now: number): NotificationRecord {
  const decision = decideDispatch(record, now, policy, 'sender-a');
  if (decision.kind !== 'claim') throw new Error(`expected a claim, got ${JSON.stringify(decision)}`);
  return applyTransition(record, decision.intent).next;
}

describe('decideDispatch: nothing to send', () => {
  it.each([
    ['delivered', aRecord({ state: S.delivered })],
    ['undelivered', aRecord({ state: S.undelivered })],
    ['failed', aRecord({ state: S.failed })],
    ['expired', aRecord({ state: S.expired })],
    ['sent and closed', aSentRecord({ closed: true })],
  ])('skips a final record (%s)', (_label, record) => {
    // Act
    const decision = decideDispatch(record, T0, policy, 'sender-a');

    // Assess
    expect(decision).toEqual({ kind: 'skip', why: 'final' });
  });

  it('skips a sent record (never a second send)', () => {
    expect(decideDispatch(aSentRecord(), T0 + SECOND, policy, 'sender-a')).toEqual({
      kind: 'skip',
      why: 'sent',
    });
  });

  it('skips dispatch_unknown, whatever the time: only the reconciler may resolve it', () => {
    fc.assert(
      fc.property(fc.integer({ min: -MINUTE, max: 60 * MINUTE }), (offset) => {
        // Act
        const decision = decideDispatch(anUnknownRecord(), T0 + offset, policy, 'sender-a');

        // Assess
        expect(decision).toEqual({ kind: 'skip', why: 'awaiting_reconciliation' });
      }),
      { numRuns: 200 },
    );
  });

  it('skips dispatching while the lease is held (in flight)', () => {
    // Prepare
    const record = aDispatchingRecord({ leaseUntil: T0 + 8 * SECOND });

    // Act
    const justBefore = decideDispatch(record, T0 + 8 * SECOND - 1, policy, 'sender-b');

    // Assess
    expect(justBefore).toEqual({ kind: 'skip', why: 'in_flight' });
  });

  it('skips accepted when the backoff has not elapsed', () => {
    // Prepare
    const record = aRecord({ attempts: 1, nextAttemptAt: T0 + 10 * SECOND });

    // Act
    const decision = decideDispatch(record, T0 + 10 * SECOND - 1, policy, 'sender-a');

    // Assess
    expect(decision).toEqual({ kind: 'skip', why: 'not_yet_due' });
  });
});

describe('decideDispatch: expired lease', () => {
  it('moves dispatching to dispatch_unknown (lease_expired) once leaseUntil is reached, never to expired', () => {
    // Prepare
    const record = aDispatchingRecord({ leaseUntil: T0 + 8 * SECOND, expiresAt: T0 + 9 * SECOND });
    const now = T0 + 8 * SECOND;

    // Act
    const decision = decideDispatch(record, now, policy, 'sender-b');

    // Assess
    expect(decision.kind).toBe('transition');
    if (decision.kind !== 'transition') return;
    expect(decision.intent).toMatchObject({
      to: S.dispatchUnknown,
      reason: R.leaseExpired,
      actor: 'sender',
      at: now,
    });
    const { next } = applyTransition(record, decision.intent);
    expect(next.state).toBe(S.dispatchUnknown);
    expect(next.unknownSince).toBe(T0 + 8 * SECOND);
    expect(next.checks).toBe(0);
    expect(next.dueAt).toBeGreaterThan(now);
    expect('leaseUntil' in next).toBe(false);
    expect('leaseOwner' in next).toBe(false);
  });

  it('lets the reconciler be the actor of the lease expiry', () => {
    // Act
    const decision = decideDispatch(aDispatchingRecord(), T0 + MINUTE, policy, 'r', 'reconciler');

    // Assess
    expect(decision).toMatchObject({
      kind: 'transition',
      intent: { reason: R.leaseExpired, actor: 'reconciler' },
    });
  });
});

describe('decideDispatch: accepted', () => {
  it('expires (expired_before_dispatch) at expiresAt - margin - minSendWindow', () => {
    // Prepare
    const record = aRecord({ expiresAt: T0 + MINUTE });
    const lastMoment = T0 + MINUTE - policy.dispatchMarginMs - policy.minSendWindowMs;

    // Act
    const atLimit = decideDispatch(record, lastMoment, policy, 'sender-a');
    const justBefore = decideDispatch(record, lastMoment - 1, policy, 'sender-a');

    // Assess
    expect(atLimit).toEqual({
      kind: 'transition',
      intent: {
        to: S.expired,
        reason: R.expiredBeforeDispatch,
        reasonDetail: 'never_claimed',
        actor: 'sender',
        at: lastMoment,
      },
    });
    expect(justBefore.kind).toBe('claim');
  });

  it('expires past the deadline even when the backoff is not over', () => {
    // Prepare
    const record = aRecord({ expiresAt: T0 + 10 * SECOND, nextAttemptAt: T0 + MINUTE });

    // Act
    const decision = decideDispatch(record, T0 + 5 * SECOND, policy, 'sender-a');

    // Assess
    expect(decision).toMatchObject({
      kind: 'transition',
      intent: { to: S.expired, reason: R.expiredBeforeDispatch },
    });
  });

  it('expires with retry_exhausted when maxAttempts is reached', () => {
    // Prepare
    const record = aRecord({ attempts: policy.maxAttempts });

    // Act
    const decision = decideDispatch(record, T0, policy, 'sender-a');

    // Assess
    expect(decision).toEqual({
      kind: 'transition',
      intent: {
        to: S.expired,
        reason: R.retryExhausted,
        reasonDetail: 'max_attempts',
        actor: 'sender',
        at: T0,
      },
    });
    if (decision.kind === 'transition')
      expect(isFinal(applyTransition(record, decision.intent).next)).toBe(true);
  });

  it('claims with attempt + 1, a lease beyond the call deadline, and the lease as the reconciler due time', () => {
    // Prepare
    const record = aRecord({
      attempts: 2,
      nextAttemptAt: T0,
      unknownSince: T0 - MINUTE,
      expiresAt: T0 + 10 * MINUTE,
    });

    // Act
    const decision = decideDispatch(record, T0, policy, 'sender-a');

    // Assess
    expect(decision.kind).toBe('claim');
    if (decision.kind !== 'claim') return;
    expect(decision.callDeadline).toBe(T0 + policy.claimWriteBudgetMs + policy.providerTimeoutMs);
    expect(decision.intent).toMatchObject({ to: S.dispatching, reason: R.claimed, actor: 'sender', at: T0 });
    const { next, evidence } = applyTransition(record, decision.intent);
    expect(next.attempts).toBe(3);
    expect(evidence.attempt).toBe(3);
    expect(next.leaseOwner).toBe('sender-a');
    expect(next.leaseUntil).toBe(decision.callDeadline + policy.leaseSlackMs);
    expect(next.dueAt).toBe(next.leaseUntil);
    expect('nextAttemptAt' in next).toBe(false);
    expect('unknownSince' in next).toBe(false);
  });

  it('bounds the call deadline by the dispatch deadline when the token is about to expire', () => {
    // Prepare: 2.5 s left before the deadline, less than the provider timeout.
    const record = aRecord({ expiresAt: T0 + policy.dispatchMarginMs + 2_500 });

    // Act
    const decision = decideDispatch(record, T0, policy, 'sender-a');

    // Assess
    expect(decision.kind).toBe('claim');
    if (decision.kind !== 'claim') return;
    expect(decision.callDeadline).toBe(T0 + 2_500);
  });

  it('for any time and expiry, a claim starts before the deadline and its call ends inside deadline and lease', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 * MINUTE }),
        fc.integer({ min: -MINUTE, max: 30 * MINUTE }),
        fc.integer({ min: 0, max: 6 }),
        (life, offset, attempts) => {
          // Prepare
          const record = aRecord({ expiresAt: T0 + life, attempts, nextAttemptAt: T0 });
          const now = T0 + offset;
          const deadline = record.expiresAt - policy.dispatchMarginMs;

          // Act
          const decision = decideDispatch(record, now, policy, 'sender-a');

          // Assess
          if (decision.kind !== 'claim') return;
          const { next } = applyTransition(record, decision.intent);
          expect(now).toBeLessThan(deadline - policy.minSendWindowMs + 1);
          expect(decision.callDeadline).toBeLessThanOrEqual(deadline);
          expect(decision.callDeadline).toBeLessThanOrEqual(
            now + policy.claimWriteBudgetMs + policy.providerTimeoutMs,
          );
          expect(decision.callDeadline).toBeGreaterThan(now);
          expect(next.leaseUntil).toBeGreaterThan(decision.callDeadline);
          expect(next.attempts).toBeLessThanOrEqual(policy.maxAttempts);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('claims a fresh attempt without the previous attempt’s provider message id', () => {
    // Prepare: attempt 1 came back ambiguous with an id; the reconciler established it is absent.
    const record = aRecord({
      attempts: 1,
      version: 5,
      lastReason: R.reconciledAbsent,
      provider: { name: 'simulator', messageId: 'SM-attempt-1' },
    });

    // Act
    const decision = decideDispatch(record, T0, policy, 'sender-a');

    // Assess: the record's message id must belong to the current attempt (the reconciler looks it up).
    expect(decision.kind).toBe('claim');
    if (decision.kind !== 'claim') return;
    const { next, evidence } = applyTransition(record, decision.intent);
    expect(next.attempts).toBe(2);
    expect(next.provider).toEqual({ name: 'simulator' });
    expect(evidence.providerMessageId).toBeUndefined();
  });
});

describe('recordSendOutcome', () => {
  const claimAt = T0;
  const outcomeAt = T0 + 2 * SECOND;

  function record(outcome: SendOutcome, base: NotificationRecord = aRecord()): NotificationRecord {
    const inFlight = claimed(base, claimAt);
    return applyTransition(inFlight, recordSendOutcome(inFlight, outcome, outcomeAt, policy)).next;
  }

  it('accepted -> sent, keeps the message id, starts the status horizon and the poll schedule', () => {
    // Act
    const next = record({ kind: 'accepted', messageId: 'SM-123' });

    // Assess
    expect(next.state).toBe(S.sent);
    expect(next.lastReason).toBe(R.providerAccepted);
    expect(next.provider).toEqual({ name: 'simulator', messageId: 'SM-123' });
    expect(next.sentAt).toBe(outcomeAt);
    expect(next.dueAt).toBe(outcomeAt + policy.statusPollMs);
    expect(next.closed).toBe(false);
    expect('leaseUntil' in next).toBe(false);
    expect('leaseOwner' in next).toBe(false);
  });

  it('unknown (timed out, no id) -> dispatch_unknown provider_timeout, settle clock started', () => {
    // Act
    const next = record({ kind: 'unknown', detail: 'timeout', timedOut: true });

    // Assess
    expect(next.state).toBe(S.dispatchUnknown);
    expect(next.lastReason).toBe(R.providerTimeout);
    expect(next.provider).toEqual({ name: 'simulator' });
    expect(next.unknownSince).toBe(outcomeAt);
    expect(next.checks).toBe(0);
    expect(next.dueAt).toBeGreaterThan(outcomeAt);
    expect('leaseUntil' in next).toBe(false);
  });

  it('unknown (ambiguous, with id) -> dispatch_unknown provider_ambiguous, keeps the id', () => {
    // Act
    const next = record({ kind: 'unknown', detail: '500 after accept', timedOut: false, messageId: 'SM-9' });

    // Assess
    expect(next.state).toBe(S.dispatchUnknown);
    expect(next.lastReason).toBe(R.providerAmbiguous);
    expect(next.provider).toEqual({ name: 'simulator', messageId: 'SM-9' });
  });

  it('not_sent_permanent -> failed, final, nothing scheduled', () => {
    // Act
    const next = record({ kind: 'not_sent_permanent', detail: 'invalid destination' });

    // Assess
    expect(next.state).toBe(S.failed);
    expect(next.lastReason).toBe(R.providerRejectedPermanent);
    expect(isFinal(next)).toBe(true);
    expect('dueAt' in next).toBe(false);
    expect('leaseUntil' in next).toBe(false);
  });

  it.each([1, 2, 3, 4])(
    'not_sent_retryable after attempt %i -> accepted with exponential backoff',
    (attempts) => {
      // Prepare
      const base = aRecord({ attempts: attempts - 1 });

      // Act
      const next = record({ kind: 'not_sent_retryable', detail: '503' }, base);

      // Assess
      const wait = backoffMs(attempts, policy);
      expect(next.state).toBe(S.accepted);
      expect(next.attempts).toBe(attempts);
      expect(next.lastReason).toBe(R.providerRejectedRetryable);
      expect(next.nextAttemptAt).toBe(outcomeAt + wait);
      expect(next.dueAt).toBeGreaterThan(next.nextAttemptAt ?? Number.POSITIVE_INFINITY);
      expect('leaseUntil' in next).toBe(false);
      expect('leaseOwner' in next).toBe(false);
      expect(decideDispatch(next, outcomeAt + wait - 1, policy, 's')).toEqual({
        kind: 'skip',
        why: 'not_yet_due',
      });
      expect(decideDispatch(next, outcomeAt + wait, policy, 's').kind).toBe('claim');
    },
  );

  it('backoff grows with the attempt number', () => {
    // Act
    const first = record({ kind: 'not_sent_retryable', detail: '503' }, aRecord({ attempts: 0 }));
    const third = record({ kind: 'not_sent_retryable', detail: '503' }, aRecord({ attempts: 2 }));

    // Assess
    expect((third.nextAttemptAt ?? 0) - outcomeAt).toBeGreaterThan((first.nextAttemptAt ?? 0) - outcomeAt);
  });

  it('not_sent_retryable past the dispatch deadline is due now, never in the past', () => {
    // Prepare: the answer comes a minute after the dispatch deadline (a slow provider, a stalled sender).
    const inFlight = claimed(aRecord(), claimAt);
    const answerAt = dispatchDeadline(inFlight, policy) + MINUTE;

    // Act
    const { next } = applyTransition(
      inFlight,
      recordSendOutcome(inFlight, { kind: 'not_sent_retryable', detail: '503' }, answerAt, policy),
    );

    // Assess: a due time behind the present could sit behind a reconciler pass's cursor.
    expect(next.dueAt).toBe(answerAt);
  });

  it('not_sent_retryable honours a longer Retry-After', () => {
    // Act
    const next = record({ kind: 'not_sent_retryable', detail: '429', retryAfterMs: 30 * SECOND });

    // Assess
    expect(next.nextAttemptAt).toBe(outcomeAt + 30 * SECOND);
  });

  it('not_sent_retryable never waits less than the backoff, even with a short Retry-After', () => {
    // Act
    const next = record(
      { kind: 'not_sent_retryable', detail: '429', retryAfterMs: 1 },
      aRecord({ attempts: 3 }),
    );

    // Assess
    expect(next.nextAttemptAt).toBe(outcomeAt + backoffMs(4, policy));
  });

  it('every outcome is a transition the table allows from dispatching (never throws)', () => {
    // Prepare
    const outcome: fc.Arbitrary<SendOutcome> = fc.oneof(
      fc.record({ kind: fc.constant('accepted' as const), messageId: fc.string({ minLength: 1 }) }),
      fc.record(
        {
          kind: fc.constant('not_sent_retryable' as const),
          detail: fc.string(),
          retryAfterMs: fc.nat(MINUTE),
        },
        { requiredKeys: ['kind', 'detail'] },
      ),
      fc.record({ kind: fc.constant('not_sent_permanent' as const), detail: fc.string() }),
      fc.record(
        {
          kind: fc.constant('unknown' as const),
          detail: fc.string(),
          timedOut: fc.boolean(),
          messageId: fc.string(),
        },
        { requiredKeys: ['kind', 'detail', 'timedOut'] },
      ),
    );

    // Act / Assess
    fc.assert(
      // Answers up to 15 minutes late: well past the 10-minute token's dispatch deadline.
      fc.property(outcome, fc.nat(15 * MINUTE), (sendOutcome, delay) => {
        const inFlight = claimed(aRecord(), T0);
        const { next, evidence } = applyTransition(
          inFlight,
          recordSendOutcome(inFlight, sendOutcome, T0 + delay, policy),
        );
        expect(evidence.fromState).toBe(S.dispatching);
        expect(next.version).toBe(inFlight.version + 1);
        expect(next.leaseUntil).toBeUndefined();
        expect(isFinal(next) || next.dueAt !== undefined).toBe(true);
        // Never due in the past: the reconciler reads on after its cursor.
        if (next.dueAt !== undefined) expect(next.dueAt).toBeGreaterThanOrEqual(T0 + delay);
      }),
      { numRuns: 1000 },
    );
  });
});
