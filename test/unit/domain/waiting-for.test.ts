import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyLookup, decideDispatch, recordSendOutcome } from '../../../shared/domain/dispatch.js';
import { applyTransition, isFinal } from '../../../shared/domain/notification.js';
import { AbsenceProof } from '../../../shared/domain/provider.js';
import { ALL_STATES, ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import { WaitKind, waitingFor } from '../../../shared/domain/waiting-for.js';
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
  reconcileSettleMs: 10 * SECOND,
  backoffBaseMs: 2 * SECOND,
  queueSafetyNetMs: MINUTE,
});

describe('waitingFor', () => {
  it('a new command waits for a sender, until the reconciler re-drives it', () => {
    // Act / Assess
    expect(waitingFor(aRecord())).toEqual({
      kind: WaitKind.senderPickup,
      until: T0 + policy.queueSafetyNetMs,
      boundedByExpiry: false,
    });
  });

  it('a refused attempt waits for its retry backoff until nextAttemptAt', () => {
    // Prepare
    const dispatching = aDispatchingRecord();
    const refused = applyTransition(
      dispatching,
      recordSendOutcome(dispatching, { kind: 'not_sent_retryable', detail: 'http_429' }, T0 + SECOND, policy),
    ).next;

    // Act / Assess
    expect(waitingFor(refused)).toEqual({
      kind: WaitKind.retryBackoff,
      until: refused.nextAttemptAt,
      boundedByExpiry: false,
    });
  });

  it('a call in flight waits until its lease runs out', () => {
    // Prepare
    const decision = decideDispatch(aRecord(), T0, policy, 'sender-a');
    if (decision.kind !== 'claim') throw new Error('expected a claim');
    const claimed = applyTransition(aRecord(), decision.intent).next;

    // Act / Assess
    expect(waitingFor(claimed)).toEqual({
      kind: WaitKind.providerCall,
      until: claimed.leaseUntil,
      boundedByExpiry: false,
    });
  });

  it('after one absent read, the second read is due at the first read plus the settle time', () => {
    // Prepare
    const unknown = anUnknownRecord({ callDeadline: T0 });
    const readAt = T0 + 2 * SECOND;
    const intent = applyLookup(unknown, { kind: 'absent' }, readAt, policy, {
      absenceProof: AbsenceProof.conditional,
    });
    if ('kind' in intent) throw new Error('expected a transition');
    const observed = applyTransition(unknown, intent).next;

    // Act / Assess
    expect(waitingFor(observed)).toEqual({
      kind: WaitKind.secondAbsenceRead,
      until: readAt + policy.reconcileSettleMs,
      boundedByExpiry: false,
    });
  });

  it('an unknown waits for the next reconcile check at dueAt', () => {
    // Act / Assess
    expect(waitingFor(anUnknownRecord({ dueAt: T0 + 4 * SECOND }))).toMatchObject({
      kind: WaitKind.reconcileCheck,
      until: T0 + 4 * SECOND,
    });
  });

  it('a sent message waits for its next status check, even past expiry (polled to its horizon)', () => {
    // Prepare
    const sent = aSentRecord({ expiresAt: T0 + SECOND, dueAt: T0 + MINUTE });

    // Act / Assess
    expect(waitingFor(sent)).toEqual({
      kind: WaitKind.statusCheck,
      until: T0 + MINUTE,
      boundedByExpiry: false,
    });
  });

  it('a wait scheduled past expiry ends at expiry', () => {
    // Prepare
    const record = aRecord({
      attempts: 1,
      lastReason: R.providerRejectedRetryable,
      updatedAt: T0,
      nextAttemptAt: T0 + 20 * MINUTE,
      expiresAt: T0 + 5 * MINUTE,
    });

    // Act / Assess
    expect(waitingFor(record)).toEqual({
      kind: WaitKind.retryBackoff,
      until: T0 + 5 * MINUTE,
      boundedByExpiry: true,
    });
  });

  it('a final command waits for nothing; every other one waits, never past expiry unless sent (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ALL_STATES),
        fc.boolean(),
        fc.integer({ min: 0, max: 20 * MINUTE }),
        fc.integer({ min: 1, max: 20 * MINUTE }),
        (state, closed, due, life) => {
          const record = aRecord({
            state,
            closed,
            dueAt: T0 + due,
            expiresAt: T0 + life,
            leaseUntil: T0 + due,
          });
          const waiting = waitingFor(record);
          if (isFinal(record)) {
            expect(waiting).toBeUndefined();
            return;
          }
          expect(waiting).toBeDefined();
          if (state !== S.sent) expect(waiting?.until).toBeLessThanOrEqual(record.expiresAt);
        },
      ),
      { seed: 24, numRuns: 500 },
    );
  });
});
