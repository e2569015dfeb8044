import { describe, expect, it } from 'vitest';
import { DomainError, ForbiddenTransitionError } from '../../../shared/domain/errors.js';
import { admit, applyTransition, type EvidenceRecord, isFinal } from '../../../shared/domain/notification.js';
import {
  ALL_STATES,
  type NotificationState,
  ReasonCode as R,
  type ReasonCode,
  NotificationState as S,
  TERMINAL_STATES,
  TRANSITIONS,
} from '../../../shared/domain/states.js';
import {
  aDispatchingRecord,
  anAdmissionInput,
  aRecord,
  aRecordWithEverySchedulingField,
  aRequest,
  aSentRecord,
  CODE,
  PHONE,
  RESET_URL,
  SECOND,
  T0,
} from './fixtures.js';

/** The fields docs/design.md#evidence allows on an evidence record (camelCase). */
const EVIDENCE_FIELDS = new Set([
  'idempotencyKey',
  'eventId',
  'seq',
  'at',
  'fromState',
  'toState',
  'attempt',
  'reason',
  'actor',
  'provider',
  'providerMessageId',
  'destinationFingerprint',
]);

function expectNoSensitiveData(value: unknown): void {
  const json = JSON.stringify(value);
  for (const secret of [PHONE, PHONE.slice(1), CODE, RESET_URL, 's3cr3t-t0ken']) {
    expect(json).not.toContain(secret);
  }
}

describe('admit', () => {
  it('builds version 1 in accepted with the admission evidence as seq 1', () => {
    // Prepare
    const input = anAdmissionInput({ now: T0, safetyNetAt: T0 + 60 * SECOND });

    // Act
    const { next, evidence } = admit(input);

    // Assess
    expect(next).toMatchObject({
      state: S.accepted,
      version: 1,
      attempts: 0,
      createdAt: T0,
      updatedAt: T0,
      expiresAt: input.request.expiresAt,
      idempotencyKey: input.request.idempotencyKey,
      eventId: input.request.eventId,
      destinationFingerprint: input.destinationFingerprint,
      payloadFingerprint: input.payloadFingerprint,
      provider: { name: input.providerName },
      lastReason: R.admitted,
      nextAttemptAt: T0,
      dueAt: T0 + 60 * SECOND,
      checks: 0,
      closed: false,
    });
    expect(evidence).toEqual({
      idempotencyKey: input.request.idempotencyKey,
      eventId: input.request.eventId,
      seq: 1,
      at: T0,
      fromState: null,
      toState: S.accepted,
      attempt: 0,
      reason: R.admitted,
      actor: 'api',
      provider: input.providerName,
      destinationFingerprint: input.destinationFingerprint,
    });
  });

  it('stores no sensitive field of the request in the record or the evidence', () => {
    // Prepare
    const input = anAdmissionInput({
      request: aRequest({ sensitive: { phone: PHONE, params: { code: CODE, reset_url: RESET_URL } } }),
    });

    // Act
    const admission = admit(input);

    // Assess
    expectNoSensitiveData(admission);
    expect(Object.keys(admission.next)).not.toContain('sensitive');
  });
});

describe('applyTransition', () => {
  it('bumps the version by one, stamps updatedAt and lastReason, and keeps identity fields', () => {
    // Prepare
    const record = aRecord({ version: 7, updatedAt: T0 });

    // Act
    const { previous, next } = applyTransition(record, {
      to: S.dispatching,
      reason: R.claimed,
      actor: 'sender',
      at: T0 + 5 * SECOND,
      set: { attempts: 1, leaseUntil: T0 + 13 * SECOND, leaseOwner: 'sender-a' },
    });

    // Assess
    expect(previous).toBe(record);
    expect(next.version).toBe(8);
    expect(next.state).toBe(S.dispatching);
    expect(next.updatedAt).toBe(T0 + 5 * SECOND);
    expect(next.lastReason).toBe(R.claimed);
    expect(next.createdAt).toBe(record.createdAt);
    expect(next.idempotencyKey).toBe(record.idempotencyKey);
    expect(next.expiresAt).toBe(record.expiresAt);
    expect(next.attempts).toBe(1);
    expect(next.leaseUntil).toBe(T0 + 13 * SECOND);
    expect(next.leaseOwner).toBe('sender-a');
  });

  it('writes evidence with seq = new version and from/to/reason/actor/attempt/fingerprint/provider', () => {
    // Prepare
    const record = aDispatchingRecord({ version: 4, attempts: 2, destinationFingerprint: 'fp1:abc' });

    // Act
    const { next, evidence } = applyTransition(record, {
      to: S.sent,
      reason: R.providerAccepted,
      actor: 'sender',
      at: T0 + 2 * SECOND,
      set: { provider: { name: 'simulator', messageId: 'SM-42' }, sentAt: T0 + 2 * SECOND },
    });

    // Assess
    expect(evidence).toEqual({
      idempotencyKey: record.idempotencyKey,
      eventId: record.eventId,
      seq: 5,
      at: T0 + 2 * SECOND,
      fromState: S.dispatching,
      toState: S.sent,
      attempt: 2,
      reason: R.providerAccepted,
      actor: 'sender',
      provider: 'simulator',
      providerMessageId: 'SM-42',
      destinationFingerprint: 'fp1:abc',
    });
    expect(evidence.seq).toBe(next.version);
  });

  it('omits providerMessageId from evidence when no message id is known', () => {
    // Act
    const { evidence } = applyTransition(aRecord(), {
      to: S.dispatching,
      reason: R.claimed,
      actor: 'sender',
      at: T0,
    });

    // Assess
    expect(Object.keys(evidence)).not.toContain('providerMessageId');
  });

  it('evidence carries only the fields of docs/design.md#evidence, never sensitive data', () => {
    // Prepare: a record admitted from a request full of secrets, then driven along every edge kind.
    const { next: admitted } = admit(
      anAdmissionInput({
        request: aRequest({ sensitive: { phone: PHONE, params: { code: CODE, reset_url: RESET_URL } } }),
      }),
    );
    const evidence: EvidenceRecord[] = [];

    // Act
    let record = admitted;
    for (const [to, reason, actor] of [
      [S.dispatching, R.claimed, 'sender'],
      [S.dispatchUnknown, R.providerTimeout, 'sender'],
      [S.dispatchUnknown, R.reconcileInconclusive, 'reconciler'],
      [S.sent, R.reconciledFound, 'reconciler'],
      [S.delivered, R.statusPolled, 'reconciler'],
    ] as const) {
      const applied = applyTransition(record, { to, reason, actor, at: record.updatedAt + SECOND });
      evidence.push(applied.evidence);
      record = applied.next;
    }

    // Assess
    for (const item of evidence) {
      expect(Object.keys(item).filter((key) => !EVIDENCE_FIELDS.has(key))).toEqual([]);
      expectNoSensitiveData(item);
    }
    expectNoSensitiveData(record);
  });

  it('applies `set` and `remove` without mutating the input record', () => {
    // Prepare
    const record = Object.freeze(aRecordWithEverySchedulingField(S.dispatching));
    const snapshot = structuredClone(record);

    // Act
    const { next } = applyTransition(record, {
      to: S.dispatchUnknown,
      reason: R.providerTimeout,
      actor: 'sender',
      at: T0 + SECOND,
      set: { unknownSince: T0 + SECOND, checks: 0, dueAt: T0 + 2 * SECOND },
      remove: ['leaseUntil', 'leaseOwner'],
    });

    // Assess
    expect(record).toEqual(snapshot);
    expect(next.unknownSince).toBe(T0 + SECOND);
    expect(next.dueAt).toBe(T0 + 2 * SECOND);
    expect('leaseUntil' in next).toBe(false);
    expect('leaseOwner' in next).toBe(false);
  });

  const terminalEdges = TRANSITIONS.flatMap((rule) =>
    rule.from !== null && TERMINAL_STATES.has(rule.to)
      ? [[rule.from, rule.to, rule.reasons[0] as ReasonCode, rule.actors[0] as 'sender'] as const]
      : [],
  );

  it.each(terminalEdges)(
    '%s -> %s (%s) drops dueAt, the lease and nextAttemptAt',
    (from, to, reason, actor) => {
      // Prepare
      const record = aRecordWithEverySchedulingField(from);

      // Act
      const { next } = applyTransition(record, {
        to,
        reason,
        actor,
        at: T0 + SECOND,
        set: { dueAt: T0 + 9 * SECOND, leaseUntil: T0 + 9 * SECOND },
      });

      // Assess
      expect(isFinal(next)).toBe(true);
      for (const field of ['dueAt', 'leaseUntil', 'leaseOwner', 'nextAttemptAt']) {
        expect(field in next, field).toBe(false);
      }
    },
  );

  it('closing a sent record at the status horizon makes it final and drops dueAt', () => {
    // Prepare
    const record = aSentRecord({ dueAt: T0 + 5 * SECOND });

    // Act
    const { next, evidence } = applyTransition(record, {
      to: S.sent,
      reason: R.statusHorizon,
      actor: 'reconciler',
      at: T0 + 600 * SECOND,
      set: { closed: true },
    });

    // Assess
    expect(next.closed).toBe(true);
    expect(isFinal(next)).toBe(true);
    expect('dueAt' in next).toBe(false);
    expect(evidence).toMatchObject({ fromState: S.sent, toState: S.sent, reason: R.statusHorizon });
  });

  it('keeps dueAt on non-final transitions (the sparse index needs it)', () => {
    // Act
    const { next } = applyTransition(aRecord(), {
      to: S.dispatching,
      reason: R.claimed,
      actor: 'sender',
      at: T0,
      set: { dueAt: T0 + 8 * SECOND, leaseUntil: T0 + 8 * SECOND },
    });

    // Assess
    expect(next.dueAt).toBe(T0 + 8 * SECOND);
    expect(isFinal(next)).toBe(false);
  });

  it('throws ForbiddenTransitionError (code forbidden_transition) for an edge the table forbids', () => {
    // Prepare
    const record = aRecord({ state: S.delivered });

    // Act
    const act = () =>
      applyTransition(record, { to: S.dispatching, reason: R.claimed, actor: 'sender', at: T0 });

    // Assess
    expect(act).toThrow(ForbiddenTransitionError);
    try {
      act();
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({
        code: 'forbidden_transition',
        name: 'ForbiddenTransitionError',
        from: S.delivered,
        to: S.dispatching,
        reason: R.claimed,
      });
      expect((error as Error).message).toContain('delivered -> dispatching');
    }
  });

  it('throws when the edge is allowed but not for that actor', () => {
    // Prepare
    const record = aRecord();

    // Act
    const act = () =>
      applyTransition(record, { to: S.dispatching, reason: R.claimed, actor: 'reconciler', at: T0 });

    // Assess
    expect(act).toThrow(expect.objectContaining({ code: 'forbidden_transition' }));
  });

  it('throws when the edge exists but with another reason', () => {
    // Act
    const act = () =>
      applyTransition(aDispatchingRecord(), {
        to: S.sent,
        reason: R.reconciledFound,
        actor: 'sender',
        at: T0,
      });

    // Assess
    expect(act).toThrow(ForbiddenTransitionError);
  });
});

describe('isFinal', () => {
  it.each(ALL_STATES.flatMap((state) => [[state, false] as const, [state, true] as const]))(
    '%s (closed=%s)',
    (state: NotificationState, closed: boolean) => {
      // Prepare
      const expected = TERMINAL_STATES.has(state) || (state === S.sent && closed);

      // Act
      const result = isFinal({ state, closed });

      // Assess
      expect(result).toBe(expected);
    },
  );

  it('treats sent as final only after the status horizon closed it', () => {
    expect(isFinal({ state: S.sent, closed: false })).toBe(false);
    expect(isFinal({ state: S.sent, closed: true })).toBe(true);
    expect(isFinal({ state: S.dispatchUnknown, closed: true })).toBe(false);
  });
});
