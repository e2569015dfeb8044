import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AppliedTransition,
  applyTransition,
  type NotificationRecord,
} from '../../../shared/domain/notification.js';
import {
  ALL_STATES,
  LATE_EVIDENCE_REASONS,
  type NotificationState,
  ReasonCode as R,
  type ReasonCode,
  NotificationState as S,
  TERMINAL_STATES,
  TRANSITIONS,
} from '../../../shared/domain/states.js';
import * as zeroSms from '../../../shared/domain/zero-sms.js';
import { ZeroSmsClass } from '../../../shared/domain/zero-sms.js';
import { DESTINATION_FAULTS } from '../../../shared/providers/registry.js';
import { aRecord, T0 } from './fixtures.js';

// Every provider's destination faults, as the composition root and the chaos report pass them.
const destinationVerdict = (detail: string | undefined) =>
  zeroSms.destinationVerdict(detail, DESTINATION_FAULTS);
const finalOutcomeOf = (t: zeroSms.OutcomeTransition) => zeroSms.finalOutcomeOf(t, DESTINATION_FAULTS);
const finalOutcomeOfTrail = (trail: readonly zeroSms.TrailStep[]) =>
  zeroSms.finalOutcomeOfTrail(trail, DESTINATION_FAULTS);
const outcomeOfApplied = (applied: Parameters<typeof zeroSms.outcomeOfApplied>[0]) =>
  zeroSms.outcomeOfApplied(applied, DESTINATION_FAULTS);

/** Applies `reason` from a record in `from` to `to` with the first actor the table allows. */
function applied(
  from: NotificationState,
  to: NotificationState,
  reason: ReasonCode,
  options: { reasonDetail?: string; closedBefore?: boolean } = {},
): AppliedTransition {
  const rule = TRANSITIONS.find((t) => t.from === from && t.to === to && t.reasons.includes(reason));
  if (!rule) throw new Error(`no edge ${from} -> ${to} (${reason})`);
  return applyTransition(aRecord({ state: from, closed: options.closedBefore ?? false }), {
    to,
    reason,
    actor: rule.actors[0] as NonNullable<(typeof rule.actors)[0]>,
    at: T0 + 1,
    ...(reason === R.statusHorizon ? { set: { closed: true } } : {}),
    ...(options.reasonDetail === undefined ? {} : { reasonDetail: options.reasonDetail }),
  });
}

describe('zero-SMS outcomes: which final transitions end without an SMS', () => {
  it.each([
    [S.accepted, S.expired, R.expiredBeforeDispatch, ZeroSmsClass.expiredBeforeDispatch],
    [S.accepted, S.expired, R.retryExhausted, ZeroSmsClass.retryExhausted],
    [S.dispatchUnknown, S.expired, R.unknownAtExpiry, ZeroSmsClass.unknownAtExpiry],
    [S.dispatchUnknown, S.expired, R.expiredBeforeDispatch, ZeroSmsClass.expiredBeforeDispatch],
    [S.dispatching, S.failed, R.providerRejectedPermanent, ZeroSmsClass.failed],
    [S.sent, S.undelivered, R.deliveryReceipt, ZeroSmsClass.undelivered],
    [S.sent, S.undelivered, R.statusPolled, ZeroSmsClass.undelivered],
    [S.sent, S.undelivered, R.providerNotSent, ZeroSmsClass.undelivered],
    [S.dispatchUnknown, S.undelivered, R.reconciledFound, ZeroSmsClass.undelivered],
    [S.accepted, S.undelivered, R.deliveryReceipt, ZeroSmsClass.undelivered],
  ] as const)(
    '%s -> %s (%s) is a zero-SMS outcome of class %s, paging when the destination is valid',
    (from, to, reason, expected) => {
      // Act
      const outcome = outcomeOfApplied(applied(from, to, reason));

      // Assess
      expect(outcome).toEqual({ zeroSms: { class: expected, destination: 'valid', pages: true } });
    },
  );

  it.each([
    [S.sent, S.delivered, R.deliveryReceipt],
    [S.sent, S.delivered, R.statusPolled],
    [S.dispatchUnknown, S.delivered, R.reconciledFound],
    [S.accepted, S.delivered, R.userConfirmed],
    [S.sent, S.sent, R.statusHorizon],
  ] as const)('%s -> %s (%s) is final with an SMS: never counted', (from, to, reason) => {
    expect(outcomeOfApplied(applied(from, to, reason))).toEqual({});
  });

  it.each([
    [S.expired, S.undelivered, R.deliveryReceipt],
    [S.expired, S.delivered, R.deliveryReceipt],
    [S.undelivered, S.delivered, R.userConfirmed],
    [S.expired, S.delivered, R.userConfirmed],
  ] as const)(
    'late evidence %s -> %s (%s) leaves a final state: counted already, never again',
    (from, to, reason) => {
      expect(outcomeOfApplied(applied(from, to, reason))).toBeUndefined();
    },
  );

  it('does not count a late undelivered receipt on a sent record already closed at the horizon', () => {
    expect(
      outcomeOfApplied(applied(S.sent, S.undelivered, R.deliveryReceipt, { closedBefore: true })),
    ).toBeUndefined();
  });

  it.each([
    ['twilio:21211', 'invalid_number'],
    ['twilio:21614', 'invalid_number'],
    ['twilio:21610', 'opted_out'],
    ['twilio:30005', 'invalid_number'],
    ['twilio:30006', 'invalid_number'],
    ['eum:blocked_destination:ConflictException:DESTINATION_PHONE_NUMBER_OPTED_OUT', 'opted_out'],
    ['eum:event:TEXT_INVALID', 'invalid_number'],
    ['sns:OptedOutException', 'opted_out'],
    ['twilio:30003', 'valid'],
    ['twilio:30500', 'valid'],
    ['twilio:30007', 'valid'],
    ['eum:event:TEXT_INVALID_MESSAGE', 'valid'],
    ['eum:validation:ValidationException:PRICE_OVER_THRESHOLD', 'valid'],
    ['absence_pending:canary_older_than_attempt', 'valid'],
    // A Twilio code read only from Twilio's details, never from another source.
    ['sns:21211', 'valid'],
  ] as const)('reason_detail %s: destination %s', (detail, verdict) => {
    expect(destinationVerdict(detail)).toBe(verdict);
  });

  it('counts a refusal of an invalid number apart: it never pages', () => {
    // Act
    const outcome = outcomeOfApplied(
      applied(S.dispatching, S.failed, R.providerRejectedPermanent, { reasonDetail: 'twilio:21211' }),
    );

    // Assess
    expect(outcome?.zeroSms).toEqual({ class: 'failed', destination: 'invalid_number', pages: false });
  });

  it('classifies an expiry reason a later table adds by the state it leaves', () => {
    // Prepare
    const base = { fromFinal: false, toState: S.expired, toFinal: true } as const;

    // Act
    const fromUnknown = finalOutcomeOf({
      ...base,
      fromState: S.dispatchUnknown,
      reason: 'future' as ReasonCode,
    });
    const fromAccepted = finalOutcomeOf({ ...base, fromState: S.accepted, reason: 'future' as ReasonCode });

    // Assess
    expect(fromUnknown?.zeroSms?.class).toBe('unknown_at_expiry');
    expect(fromAccepted?.zeroSms?.class).toBe('expired_before_dispatch');
  });
});

const isFinal = (r: NotificationRecord) => TERMINAL_STATES.has(r.state) || (r.state === S.sent && r.closed);

/** Details a walk may carry: valid-destination, destination faults, none. */
const DETAILS = [
  undefined,
  'twilio:21211',
  'twilio:21610',
  'twilio:30003',
  'twilio:30500',
  'eum:event:TEXT_INVALID',
];

/**
 * A random walk through the transition table from admission: each step takes one of the edges
 * the table allows from the current state (with one of its reasons and a random detail). Out of a
 * final record only late evidence is taken, as the decisions allow (nothing reopens a final record).
 * Returns every applied transition in order.
 */
function walk(choices: readonly number[]): AppliedTransition[] {
  let record: NotificationRecord = aRecord();
  const out: AppliedTransition[] = [];
  let at = T0;
  for (const choice of choices) {
    const final = isFinal(record);
    const edges = TRANSITIONS.filter((t) => t.from === record.state).flatMap((t) =>
      t.reasons
        .filter((reason) => !final || LATE_EVIDENCE_REASONS.has(reason))
        .map((reason) => ({ rule: t, reason })),
    );
    if (edges.length === 0) break;
    const edge = edges[choice % edges.length] as (typeof edges)[number];
    const detail = DETAILS[Math.floor(choice / edges.length) % DETAILS.length];
    at += 1_000;
    const step = applyTransition(record, {
      to: edge.rule.to,
      reason: edge.reason,
      actor: edge.rule.actors[0] as NonNullable<(typeof edge.rule.actors)[0]>,
      at,
      ...(edge.reason === R.statusHorizon ? { set: { closed: true } } : {}),
      ...(detail === undefined ? {} : { reasonDetail: detail }),
    });
    out.push(step);
    record = step.next;
  }
  return out;
}

describe('zero-SMS outcomes over any path through the state table (property)', () => {
  const walks = fc.array(fc.nat({ max: 10_000 }), { minLength: 1, maxLength: 30 });

  it('counts a command at most once, exactly when it first becomes final without an SMS', () => {
    fc.assert(
      fc.property(walks, (choices) => {
        // Act
        const steps = walk(choices);
        const counted = steps.filter((s) => outcomeOfApplied(s)?.zeroSms !== undefined);
        const firstFinal = steps.find((s) => isFinal(s.next));

        // Assess
        expect(counted.length).toBeLessThanOrEqual(1);
        const zeroEnd =
          firstFinal !== undefined &&
          ([S.expired, S.failed, S.undelivered] as NotificationState[]).includes(firstFinal.next.state);
        expect(counted.length).toBe(zeroEnd ? 1 : 0);
        if (counted[0]) expect(counted[0]).toBe(firstFinal);
      }),
      { seed: 20, numRuns: 1_000 },
    );
  });

  it('never counts a command that first became final after a message the provider accepted (delivered, or sent closed)', () => {
    fc.assert(
      fc.property(walks, (choices) => {
        // Act
        const steps = walk(choices);
        const firstFinal = steps.find((s) => isFinal(s.next));
        fc.pre(
          firstFinal !== undefined &&
            (firstFinal.next.state === S.delivered || firstFinal.next.state === S.sent),
        );

        // Assess
        for (const s of steps) expect(outcomeOfApplied(s)?.zeroSms).toBeUndefined();
      }),
      { seed: 21, numRuns: 1_000 },
    );
  });

  it('reads the same outcome from the evidence trail as from the applied transitions (what chaos counts)', () => {
    fc.assert(
      fc.property(walks, (choices) => {
        // Prepare
        const steps = walk(choices);
        const trail = steps.map((s) => s.evidence);

        // Act
        const fromTrail = finalOutcomeOfTrail(trail);
        const fromApplied = steps.flatMap((s) => {
          const o = outcomeOfApplied(s);
          return o === undefined ? [] : [{ at: s.evidence.at, outcome: o }];
        })[0];

        // Assess
        expect(fromTrail).toEqual(fromApplied);
      }),
      { seed: 22, numRuns: 1_000 },
    );
  });

  it('covers every state of the table in the walks', () => {
    // A walk generator that missed a state would make the properties above vacuous there.
    const seen = new Set<NotificationState>();
    fc.assert(
      fc.property(walks, (choices) => {
        for (const s of walk(choices)) seen.add(s.next.state);
      }),
      { seed: 23, numRuns: 1_000 },
    );
    expect([...seen].sort()).toEqual([...ALL_STATES].sort());
  });
});
