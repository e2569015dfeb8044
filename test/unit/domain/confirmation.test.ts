import { describe, expect, it } from 'vitest';
import { decideConfirmation } from '../../../shared/domain/confirmation.js';
import { applyTransition } from '../../../shared/domain/notification.js';
import {
  CONFIRMABLE_STATES,
  LATE_EVIDENCE_REASONS,
  type NotificationState,
  ReasonCode as R,
  type ReasonCode,
  NotificationState as S,
  TERMINAL_STATES,
  TRANSITIONS,
} from '../../../shared/domain/states.js';
import { aDispatchingRecord, anUnknownRecord, aRecord, aSentRecord, T0 } from './fixtures.js';

describe('decideConfirmation', () => {
  it.each([
    ['sent', aSentRecord()],
    ['sent (closed by the status horizon)', aSentRecord({ closed: true, lastReason: R.statusHorizon })],
    ['dispatch_unknown', anUnknownRecord()],
    ['dispatching (the call is in flight, the user has the code)', aDispatchingRecord()],
    ['delivered by a receipt', aSentRecord({ state: S.delivered, lastReason: R.deliveryReceipt })],
    ['undelivered (a carrier receipt was wrong)', aSentRecord({ state: S.undelivered })],
    ['accepted after an attempt judged absent', aRecord({ attempts: 1, lastReason: R.reconciledAbsent })],
    [
      'expired with an unknown outcome',
      aRecord({ state: S.expired, attempts: 1, lastReason: R.unknownAtExpiry }),
    ],
  ] as const)('moves %s to delivered (user_confirmed, api), and the table allows it', (_label, record) => {
    // Act
    const decision = decideConfirmation(record, T0 + 1);

    // Assess
    expect(decision).toEqual({
      kind: 'transition',
      intent: { to: S.delivered, reason: R.userConfirmed, actor: 'api', at: T0 + 1 },
    });
    if (decision.kind !== 'transition') return;
    const applied = applyTransition(record, decision.intent);
    expect(applied.next).toMatchObject({ state: S.delivered, lastReason: R.userConfirmed });
    expect(applied.next.dueAt).toBeUndefined();
    expect(applied.next.leaseUntil).toBeUndefined();
    expect(applied.evidence).toMatchObject({ reason: R.userConfirmed, actor: 'api', toState: S.delivered });
  });

  it.each([
    ['accepted, never attempted', aRecord()],
    [
      'failed (rejected permanently)',
      aRecord({ state: S.failed, attempts: 1, lastReason: R.providerRejectedPermanent }),
    ],
    ['expired before dispatch', aRecord({ state: S.expired, lastReason: R.expiredBeforeDispatch })],
    ['expired, retries exhausted', aRecord({ state: S.expired, attempts: 5, lastReason: R.retryExhausted })],
  ] as const)('refuses %s: it was never sent', (_label, record) => {
    expect(decideConfirmation(record, T0 + 1)).toEqual({ kind: 'never_sent' });
  });

  it('says already_confirmed for a record confirmed before (a repeat writes nothing)', () => {
    // Prepare
    const record = aSentRecord();
    const decision = decideConfirmation(record, T0 + 1);
    if (decision.kind !== 'transition') throw new Error('expected a transition');
    const confirmed = applyTransition(record, decision.intent).next;

    // Act
    const repeat = decideConfirmation(confirmed, T0 + 2);

    // Assess
    expect(repeat).toEqual({ kind: 'already_confirmed' });
  });
});

describe('edges out of terminal states', () => {
  it('are only late evidence into delivered/undelivered: confirmations and receipts after an unknown expired', () => {
    // Act
    const leaving = TRANSITIONS.filter((rule) => rule.from !== null && TERMINAL_STATES.has(rule.from));

    // Assess
    const described = leaving
      .flatMap((rule) =>
        rule.reasons.map((reason) => `${rule.from}->${rule.to} ${reason} ${rule.actors.join('|')}`),
      )
      .sort();
    expect(described).toEqual(
      [
        'delivered->delivered user_confirmed api',
        'undelivered->delivered user_confirmed api',
        'expired->delivered user_confirmed api',
        'expired->delivered delivery_receipt receipt',
        'expired->undelivered delivery_receipt receipt',
      ].sort(),
    );
    for (const rule of leaving) {
      expect(TERMINAL_STATES.has(rule.to), `${rule.from}->${rule.to}`).toBe(true);
      for (const reason of rule.reasons) expect(LATE_EVIDENCE_REASONS.has(reason)).toBe(true);
    }
  });

  it('user_confirmed leads only to delivered, from exactly the confirmable states', () => {
    // Act
    const confirmations = TRANSITIONS.filter((rule) =>
      (rule.reasons as readonly ReasonCode[]).includes(R.userConfirmed),
    );

    // Assess
    expect(new Set(confirmations.map((rule) => rule.to))).toEqual(new Set([S.delivered]));
    expect(confirmations.map((rule) => rule.from as NotificationState).sort()).toEqual(
      [...CONFIRMABLE_STATES].sort(),
    );
    expect(confirmations.every((rule) => rule.reasons.length === 1 && rule.actors.join() === 'api')).toBe(
      true,
    );
    expect(CONFIRMABLE_STATES).not.toContain(S.failed);
  });
});
