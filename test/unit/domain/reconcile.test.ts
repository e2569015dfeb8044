import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyLookup, decideReconcile, type Reschedule } from '../../../shared/domain/dispatch.js';
import {
  applyTransition,
  isFinal,
  type NotificationRecord,
  type TransitionIntent,
} from '../../../shared/domain/notification.js';
import type { LookupOutcome } from '../../../shared/domain/provider.js';
import { AbsenceProof } from '../../../shared/domain/provider.js';
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

/** A provider that can prove absence (the domain adds its own two-read rule). */
const PROVABLE = { absenceProof: AbsenceProof.conditional } as const;

const policy = aPolicy({
  dispatchMarginMs: 5 * SECOND,
  reconcileSettleMs: 10 * SECOND,
  backoffBaseMs: SECOND,
  backoffMaxMs: MINUTE,
  statusHorizonMs: 10 * MINUTE,
  statusPollMs: 5 * SECOND,
  queueSafetyNetMs: MINUTE,
});

const FOUND = (status: 'pending' | 'sent' | 'delivered' | 'undelivered'): LookupOutcome => ({
  kind: 'found',
  messageId: 'SM-77',
  status,
});
const ABSENT: LookupOutcome = { kind: 'absent' };
const INCONCLUSIVE: LookupOutcome = { kind: 'inconclusive', detail: '503' };

function asIntent(result: TransitionIntent | Reschedule): TransitionIntent {
  if ('kind' in result) throw new Error(`expected a transition, got ${JSON.stringify(result)}`);
  return result;
}

/** Applies the reconciler's verdict on `lookup` to `record` at `now`. */
function reconcile(record: NotificationRecord, lookup: LookupOutcome, now: number) {
  const intent = asIntent(applyLookup(record, lookup, now, policy, PROVABLE));
  return { intent, ...applyTransition(record, intent) };
}

describe('decideReconcile', () => {
  it('skips final records', () => {
    for (const record of [aRecord({ state: S.expired }), aSentRecord({ closed: true })]) {
      expect(decideReconcile(record, T0 + MINUTE, policy)).toEqual({ kind: 'skip', why: 'final' });
    }
  });

  it('skips records not yet due', () => {
    // Prepare
    const record = anUnknownRecord({ dueAt: T0 + 5 * SECOND });

    // Act / Assess
    expect(decideReconcile(record, T0 + 5 * SECOND - 1, policy)).toEqual({ kind: 'skip', why: 'not_due' });
    expect(decideReconcile(record, T0 + 5 * SECOND, policy)).toEqual({ kind: 'lookup' });
  });

  it('re-drives a due accepted record through the queue (never sends itself)', () => {
    // Prepare
    const record = aRecord({ dueAt: T0 + MINUTE });

    // Act
    const step = decideReconcile(record, T0 + MINUTE, policy);

    // Assess
    expect(step).toEqual({ kind: 'redrive', nextDueAt: T0 + 2 * MINUTE });
  });

  it('expires an accepted record past the dispatch deadline (reconciler actor)', () => {
    // Prepare
    const record = aRecord({ expiresAt: T0 + 30 * SECOND, dueAt: T0 });
    const deadline = T0 + 25 * SECOND;

    // Act
    const before = decideReconcile(record, deadline - 1, policy);
    const at = decideReconcile(record, deadline, policy);

    // Assess
    expect(before.kind).toBe('redrive');
    expect(at).toEqual({
      kind: 'transition',
      intent: {
        to: S.expired,
        reason: R.expiredBeforeDispatch,
        reasonDetail: 'never_claimed',
        actor: 'reconciler',
        at: deadline,
      },
    });
  });

  it('moves a dispatching record with an expired lease to dispatch_unknown, even past expiry', () => {
    // Prepare
    const record = aDispatchingRecord({
      leaseUntil: T0 + 8 * SECOND,
      dueAt: T0 + 8 * SECOND,
      expiresAt: T0 + 9 * SECOND,
    });

    // Act
    const step = decideReconcile(record, T0 + MINUTE, policy);

    // Assess
    expect(step).toMatchObject({
      kind: 'transition',
      intent: { to: S.dispatchUnknown, reason: R.leaseExpired, actor: 'reconciler' },
    });
  });

  it('leaves a dispatching record with a live lease alone', () => {
    // Prepare: due, but the lease still runs (e.g. dueAt moved earlier by storage).
    const record = aDispatchingRecord({ leaseUntil: T0 + 8 * SECOND, dueAt: T0 });

    // Act / Assess
    expect(decideReconcile(record, T0 + SECOND, policy)).toEqual({ kind: 'skip', why: 'in_flight' });
  });

  it.each([
    ['dispatch_unknown', anUnknownRecord({ dueAt: T0 })],
    ['sent', aSentRecord({ dueAt: T0 })],
  ])('asks the provider about a due %s record', (_label, record) => {
    expect(decideReconcile(record, T0, policy)).toEqual({ kind: 'lookup' });
  });
});

describe('applyLookup on dispatch_unknown: found', () => {
  it.each([
    ['pending', S.sent],
    ['sent', S.sent],
    ['delivered', S.delivered],
    ['undelivered', S.undelivered],
  ] as const)('found with status %s -> %s (reconciled_found), keeping the message id', (status, expected) => {
    // Prepare
    const record = anUnknownRecord({ unknownSince: T0 });
    const now = T0 + 2 * SECOND;

    // Act
    const { next, evidence } = reconcile(record, FOUND(status), now);

    // Assess
    expect(next.state).toBe(expected);
    expect(next.lastReason).toBe(R.reconciledFound);
    expect(next.provider).toEqual({ name: 'simulator', messageId: 'SM-77' });
    expect(evidence).toMatchObject({ actor: 'reconciler', providerMessageId: 'SM-77' });
    expect('unknownSince' in next).toBe(false);
    if (expected === S.sent) {
      expect(next.sentAt).toBe(now);
      expect(next.dueAt).toBe(now + policy.statusPollMs);
    } else {
      expect(isFinal(next)).toBe(true);
      expect('dueAt' in next).toBe(false);
    }
  });

  it('found wins even after expiry (the message exists: it is never re-sent)', () => {
    // Act
    const { next } = reconcile(anUnknownRecord({ expiresAt: T0 + SECOND }), FOUND('sent'), T0 + 10 * MINUTE);

    // Assess
    expect(next.state).toBe(S.sent);
  });
});

describe('applyLookup on dispatch_unknown: absent (two agreeing reads, settle apart, after the call deadline)', () => {
  const CALL_DEADLINE = T0 + 3 * SECOND;
  const unknown = (overrides: Partial<NotificationRecord> = {}) =>
    anUnknownRecord({ unknownSince: T0, attemptStartedAt: T0, callDeadline: CALL_DEADLINE, ...overrides });

  it('a first absent read after the call deadline proves nothing yet: absence_observed, due a settle time later', () => {
    // Prepare
    const now = CALL_DEADLINE + SECOND;

    // Act
    const { next, evidence } = reconcile(unknown({ checks: 0 }), ABSENT, now);

    // Assess
    expect(next.state).toBe(S.dispatchUnknown);
    expect(evidence.reason).toBe(R.absenceObserved);
    expect(next.absentSince).toBe(now);
    expect(next.dueAt).toBe(now + policy.reconcileSettleMs);
    expect(next.checks).toBe(1);
  });

  it('an absent read before the call deadline never counts (the request may still be in flight)', () => {
    // Act
    const { next, evidence } = reconcile(unknown(), ABSENT, CALL_DEADLINE - 1);

    // Assess
    expect(evidence.reason).toBe(R.reconcileInconclusive);
    expect('absentSince' in next).toBe(false);
    expect(next.dueAt).toBe(CALL_DEADLINE);
  });

  it('a second absent read one millisecond short of the settle time is still not conclusive', () => {
    // Prepare
    const absentSince = CALL_DEADLINE + SECOND;

    // Act
    const { next, evidence } = reconcile(
      unknown({ absentSince }),
      ABSENT,
      absentSince + policy.reconcileSettleMs - 1,
    );

    // Assess
    expect(next.state).toBe(S.dispatchUnknown);
    expect(evidence.reason).toBe(R.reconcileInconclusive);
    expect(next.absentSince).toBe(absentSince);
    expect(next.dueAt).toBe(absentSince + policy.reconcileSettleMs);
  });

  it('a second absent read a settle time later: accepted (reconciled_absent), a new attempt is allowed now', () => {
    // Prepare
    const absentSince = CALL_DEADLINE + SECOND;
    const record = unknown({ absentSince, checks: 3 });
    const now = absentSince + policy.reconcileSettleMs;

    // Act
    const { next, evidence } = reconcile(record, ABSENT, now);

    // Assess
    expect(next.state).toBe(S.accepted);
    expect(evidence.reason).toBe(R.reconciledAbsent);
    expect(next.nextAttemptAt).toBe(now);
    expect(next.checks).toBe(0);
    expect(next.dueAt).toBeGreaterThan(now);
    expect(next.attempts).toBe(record.attempts);
    expect('unknownSince' in next).toBe(false);
    expect('absentSince' in next).toBe(false);
  });

  it('an inconclusive read between two absent reads restarts the proof', () => {
    // Prepare
    const absentSince = CALL_DEADLINE + SECOND;

    // Act
    const broken = reconcile(unknown({ absentSince }), INCONCLUSIVE, absentSince + SECOND).next;
    const again = reconcile(broken, ABSENT, absentSince + policy.reconcileSettleMs).next;

    // Assess
    expect('absentSince' in broken).toBe(false);
    expect(again.state).toBe(S.dispatchUnknown);
    expect(again.lastReason).toBe(R.absenceObserved);
  });

  it('settled absence past the dispatch deadline: expired (expired_before_dispatch)', () => {
    // Prepare
    const absentSince = CALL_DEADLINE + SECOND;
    const record = unknown({ absentSince, expiresAt: absentSince + policy.reconcileSettleMs + SECOND });

    // Act
    const { next, evidence } = reconcile(record, ABSENT, absentSince + policy.reconcileSettleMs);

    // Assess
    expect(next.state).toBe(S.expired);
    expect(evidence.reason).toBe(R.expiredBeforeDispatch);
    expect(isFinal(next)).toBe(true);
  });

  it('records claimed before the attempt fields existed use the unknown start as the call deadline', () => {
    // Prepare
    const { unknownSince: _drop, ...rest } = anUnknownRecord({ updatedAt: T0 + 5 * SECOND });
    const record: NotificationRecord = rest;

    // Act
    const early = reconcile(record, ABSENT, T0 + 4 * SECOND).next;
    const first = reconcile(record, ABSENT, T0 + 6 * SECOND).next;

    // Assess
    expect(early.lastReason).toBe(R.reconcileInconclusive);
    expect(first.lastReason).toBe(R.absenceObserved);
  });

  it('an unproven absence after expiresAt: expired unknown_at_expiry', () => {
    // Prepare
    const record = unknown({ expiresAt: T0 + 8 * SECOND });

    // Act
    const { next, evidence } = reconcile(record, ABSENT, T0 + 9 * SECOND);

    // Assess
    expect(next.state).toBe(S.expired);
    expect(evidence.reason).toBe(R.unknownAtExpiry);
  });

  it('from a provider that cannot prove absence, absent is read as inconclusive and never re-sends', () => {
    // Prepare
    const absentSince = CALL_DEADLINE + SECOND;
    const now = absentSince + policy.reconcileSettleMs;

    // Act
    const intent = asIntent(
      applyLookup(unknown({ absentSince }), ABSENT, now, policy, { absenceProof: AbsenceProof.never }),
    );

    // Assess
    expect(intent.to).toBe(S.dispatchUnknown);
    expect(intent.reason).toBe(R.reconcileInconclusive);
  });
});

describe('applyLookup: the provider says it never handed the message to a carrier', () => {
  const NOT_SENT = (attempt?: number): LookupOutcome => ({
    kind: 'found',
    messageId: 'SM-77',
    status: 'not_sent',
    ...(attempt === undefined ? {} : { attempt }),
  });

  it('for the current attempt: accepted (provider_not_sent) at once, no settle time', () => {
    // Act
    const { next, evidence } = reconcile(anUnknownRecord({ attempts: 2 }), NOT_SENT(2), T0 + SECOND);

    // Assess
    expect(next.state).toBe(S.accepted);
    expect(evidence.reason).toBe(R.providerNotSent);
    expect(next.nextAttemptAt).toBe(T0 + SECOND);
  });

  it('for an older attempt: says nothing about the current one (inconclusive)', () => {
    // Act
    const { next, evidence } = reconcile(anUnknownRecord({ attempts: 2 }), NOT_SENT(1), T0 + SECOND);

    // Assess
    expect(next.state).toBe(S.dispatchUnknown);
    expect(evidence.reason).toBe(R.reconcileInconclusive);
  });

  it('on a sent record whose message failed before a carrier: accepted again while the token lives', () => {
    // Prepare
    const record = aSentRecord({ provider: { name: 'simulator', messageId: 'SM-77' } });

    // Act
    const { next, evidence } = reconcile(record, NOT_SENT(), T0 + SECOND);

    // Assess
    expect(next.state).toBe(S.accepted);
    expect(evidence).toMatchObject({ reason: R.providerNotSent, actor: 'reconciler' });
  });

  it('past the dispatch deadline: final (expired from unknown, undelivered from sent)', () => {
    // Prepare
    const expiresAt = T0 + 4 * SECOND;

    // Act
    const unknownVerdict = reconcile(anUnknownRecord({ expiresAt }), NOT_SENT(1), T0 + SECOND).next;
    const sentVerdict = reconcile(
      aSentRecord({ expiresAt, provider: { name: 'simulator', messageId: 'SM-77' } }),
      NOT_SENT(),
      T0 + SECOND,
    ).next;

    // Assess
    expect(unknownVerdict.state).toBe(S.expired);
    expect(sentVerdict.state).toBe(S.undelivered);
  });
});

describe('applyLookup on dispatch_unknown: inconclusive', () => {
  it.each([
    [0, 1],
    [1, 2],
    [2, 4],
    [3, 8],
  ])('after %i checks waits %i s (backoff) and counts the check', (checks, waitSeconds) => {
    // Prepare
    const record = anUnknownRecord({ checks, expiresAt: T0 + 30 * MINUTE });
    const now = T0 + MINUTE;

    // Act
    const { next, evidence } = reconcile(record, INCONCLUSIVE, now);

    // Assess
    expect(next.state).toBe(S.dispatchUnknown);
    expect(evidence.reason).toBe(R.reconcileInconclusive);
    expect(next.checks).toBe(checks + 1);
    expect(next.dueAt).toBe(now + waitSeconds * SECOND);
    expect(next.unknownSince).toBe(record.unknownSince);
  });

  it('never schedules the next check after expiresAt (so expiry is noticed on time)', () => {
    // Prepare
    const record = anUnknownRecord({ checks: 10, expiresAt: T0 + 20 * SECOND });

    // Act
    const { next } = reconcile(record, INCONCLUSIVE, T0 + 15 * SECOND);

    // Assess
    expect(next.dueAt).toBe(T0 + 20 * SECOND);
  });

  it('between the dispatch deadline and expiresAt: still waits (a found message may yet appear)', () => {
    // Prepare
    const record = anUnknownRecord({ expiresAt: T0 + MINUTE });

    // Act
    const { next } = reconcile(record, INCONCLUSIVE, T0 + MINUTE - 2 * SECOND);

    // Assess
    expect(next.state).toBe(S.dispatchUnknown);
  });

  it('at or after expiresAt: expired (unknown_at_expiry), final', () => {
    // Prepare
    const record = anUnknownRecord({ expiresAt: T0 + MINUTE });

    // Act
    const atExpiry = reconcile(record, INCONCLUSIVE, T0 + MINUTE);
    const later = reconcile(record, INCONCLUSIVE, T0 + 2 * MINUTE);

    // Assess
    for (const { next, evidence } of [atExpiry, later]) {
      expect(next.state).toBe(S.expired);
      expect(evidence.reason).toBe(R.unknownAtExpiry);
      expect(isFinal(next)).toBe(true);
      expect('dueAt' in next).toBe(false);
    }
  });

  it('for any unknown record and lookup, the verdict is a table edge and a non-final result is due later', () => {
    // Prepare
    const lookup = fc.oneof(
      fc.constantFrom<LookupOutcome>(ABSENT, INCONCLUSIVE),
      fc.constantFrom('pending', 'sent', 'delivered', 'undelivered').map(FOUND),
    );

    // Act / Assess
    fc.assert(
      fc.property(
        lookup,
        fc.integer({ min: 0, max: 20 * MINUTE }),
        fc.integer({ min: 0, max: 30 * MINUTE }),
        fc.nat(30),
        fc.option(fc.integer({ min: 0, max: 10 * MINUTE })),
        (answer, life, elapsed, checks, absentAfter) => {
          const record = anUnknownRecord({
            unknownSince: T0,
            expiresAt: T0 + life,
            checks,
            ...(absentAfter === null ? {} : { absentSince: T0 + absentAfter }),
          });
          const now = T0 + elapsed;
          const { next } = reconcile(record, answer, now);
          if (!isFinal(next)) expect(next.dueAt).toBeGreaterThan(now);
          if (next.state === S.accepted) {
            expect(answer.kind).toBe('absent');
            expect(record.absentSince).toBeDefined();
            expect(now - (record.absentSince ?? now)).toBeGreaterThanOrEqual(policy.reconcileSettleMs);
            expect(now).toBeLessThan(record.expiresAt - policy.dispatchMarginMs);
          }
          if (now >= record.expiresAt && answer.kind !== 'found') expect(next.state).toBe(S.expired);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('applyLookup on sent: status polling', () => {
  it.each([
    ['delivered', S.delivered],
    ['undelivered', S.undelivered],
  ] as const)('found %s -> %s (status_polled), final', (status, expected) => {
    // Act
    const { next, evidence } = reconcile(aSentRecord(), FOUND(status), T0 + 10 * SECOND);

    // Assess
    expect(next.state).toBe(expected);
    expect(evidence.reason).toBe(R.statusPolled);
    expect(isFinal(next)).toBe(true);
    expect('dueAt' in next).toBe(false);
  });

  it.each<[string, LookupOutcome]>([
    ['pending', FOUND('pending')],
    ['sent', FOUND('sent')],
    ['absent', ABSENT],
    ['inconclusive', INCONCLUSIVE],
  ])('%s before the horizon -> reschedule the next poll (no transition)', (_label, lookup) => {
    // Prepare
    const now = T0 + MINUTE;

    // Act
    const result = applyLookup(aSentRecord({ sentAt: T0 }), lookup, now, policy, PROVABLE);

    // Assess: a minute old, the next poll waits half its age
    expect(result).toEqual({ kind: 'reschedule', dueAt: now + 30 * SECOND });
  });

  it('a young message is polled at the first interval; older ones back off with their age', () => {
    // Prepare
    const record = aSentRecord({ sentAt: T0 });

    // Act
    const young = applyLookup(record, FOUND('sent'), T0 + 2 * SECOND, policy, PROVABLE);
    const older = applyLookup(record, FOUND('sent'), T0 + 4 * MINUTE, policy, PROVABLE);

    // Assess
    expect(young).toEqual({ kind: 'reschedule', dueAt: T0 + 2 * SECOND + policy.statusPollMs });
    expect(older).toEqual({ kind: 'reschedule', dueAt: T0 + 6 * MINUTE });
  });

  it('the last poll is due at the horizon, never after it', () => {
    // Prepare
    const record = aSentRecord({ sentAt: T0 });
    const now = T0 + policy.statusHorizonMs - 10 * SECOND;

    // Act
    const result = applyLookup(record, FOUND('sent'), now, policy, PROVABLE);

    // Assess
    expect(result).toEqual({ kind: 'reschedule', dueAt: T0 + policy.statusHorizonMs });
  });

  it('polls a message that never settles about log1.5(horizon / first interval) times, not horizon / interval', () => {
    // Prepare
    const record = aSentRecord({ sentAt: T0 });
    let now = T0 + policy.statusPollMs;
    let polls = 0;

    // Act: follow the schedule to the horizon
    for (;;) {
      polls++;
      const next = applyLookup(record, FOUND('sent'), now, policy, PROVABLE);
      if (!('kind' in next)) break;
      now = next.dueAt;
    }

    // Assess
    const bound = Math.ceil(Math.log(policy.statusHorizonMs / policy.statusPollMs) / Math.log(1.5)) + 2;
    expect(polls).toBeLessThanOrEqual(bound);
    expect(polls).toBeLessThan(policy.statusHorizonMs / policy.statusPollMs / 4);
  });

  it('no final status by the horizon -> sent closed (status_horizon), final', () => {
    // Prepare
    const record = aSentRecord({ sentAt: T0 });
    const horizon = T0 + policy.statusHorizonMs;

    // Act
    const before = applyLookup(record, FOUND('sent'), horizon - 1, policy, PROVABLE);
    const { next, evidence } = reconcile(record, FOUND('sent'), horizon);

    // Assess
    expect(before).toMatchObject({ kind: 'reschedule' });
    expect(next.state).toBe(S.sent);
    expect(next.closed).toBe(true);
    expect(evidence.reason).toBe(R.statusHorizon);
    expect(isFinal(next)).toBe(true);
    expect('dueAt' in next).toBe(false);
    expect(decideReconcile(next, horizon + MINUTE, policy)).toEqual({ kind: 'skip', why: 'final' });
  });

  it('a delivered status still wins after the horizon', () => {
    // Act
    const { next } = reconcile(
      aSentRecord({ sentAt: T0 }),
      FOUND('delivered'),
      T0 + 2 * policy.statusHorizonMs,
    );

    // Assess
    expect(next.state).toBe(S.delivered);
  });
});
