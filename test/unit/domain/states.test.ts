import { describe, expect, it } from 'vitest';
import { ForbiddenTransitionError } from '../../../shared/domain/errors.js';
import { applyTransition } from '../../../shared/domain/notification.js';
import {
  type Actor,
  ALL_REASONS,
  ALL_STATES,
  findTransition,
  isTransitionAllowed,
  LATE_EVIDENCE_REASONS,
  type NotificationState,
  ReasonCode as R,
  type ReasonCode,
  NotificationState as S,
  TERMINAL_STATES,
  TRANSITIONS,
} from '../../../shared/domain/states.js';
import { ALL_ACTORS, aRecord, T0 } from './fixtures.js';

type From = NotificationState | null;

/** What the table itself says, computed independently of findTransition. */
function tableAllows(from: From, to: NotificationState, reason: ReasonCode, actor?: Actor): boolean {
  return TRANSITIONS.some(
    (rule) =>
      rule.from === from &&
      rule.to === to &&
      rule.reasons.includes(reason) &&
      (actor === undefined || rule.actors.includes(actor)),
  );
}

/** True when applyTransition accepts the edge from a record in `from`. */
function applies(from: NotificationState, to: NotificationState, reason: ReasonCode, actor: Actor): boolean {
  try {
    applyTransition(aRecord({ state: from }), { to, reason, actor, at: T0 + 1 });
    return true;
  } catch (error) {
    if (error instanceof ForbiddenTransitionError) return false;
    throw error;
  }
}

const FROM_STATES: readonly From[] = [null, ...ALL_STATES];

describe('state vocabulary', () => {
  it('lists the eight states of docs/design.md#states and four terminal ones', () => {
    // Prepare / Act
    const states = [...ALL_STATES].sort();
    const terminal = [...TERMINAL_STATES].sort();

    // Assess
    expect(states).toEqual(
      [
        'accepted',
        'delivered',
        'dispatch_unknown',
        'dispatching',
        'expired',
        'failed',
        'sent',
        'undelivered',
      ].sort(),
    );
    expect(terminal).toEqual(['delivered', 'expired', 'failed', 'undelivered']);
  });

  it('contains every reason code the design names', () => {
    // Prepare
    const documented = [
      'admitted',
      'claimed',
      'provider_accepted',
      'provider_timeout',
      'provider_rejected_retryable',
      'provider_rejected_permanent',
      'lease_expired',
      'reconciled_found',
      'reconciled_absent',
      'reconcile_inconclusive',
      'expired_before_dispatch',
      'unknown_at_expiry',
      'delivery_receipt',
    ];

    // Act
    const missing = documented.filter((reason) => !(ALL_REASONS as readonly string[]).includes(reason));

    // Assess
    expect(missing).toEqual([]);
    expect(new Set(ALL_REASONS).size).toBe(ALL_REASONS.length);
  });

  it('lists the five actors of docs/design.md#evidence', () => {
    expect([...ALL_ACTORS].sort()).toEqual(['api', 'forwarder', 'receipt', 'reconciler', 'sender']);
  });
});

describe('the transition table is well formed', () => {
  it('uses only known states, reasons and actors, and never leaves a terminal state', () => {
    // Prepare
    const problems: string[] = [];

    // Act
    for (const rule of TRANSITIONS) {
      const label = `${rule.from} -> ${rule.to}`;
      if (rule.from !== null && !ALL_STATES.includes(rule.from)) problems.push(`${label}: unknown from`);
      if (!ALL_STATES.includes(rule.to)) problems.push(`${label}: unknown to`);
      if (rule.reasons.length === 0) problems.push(`${label}: no reasons`);
      if (rule.actors.length === 0) problems.push(`${label}: no actors`);
      for (const reason of rule.reasons)
        if (!ALL_REASONS.includes(reason)) problems.push(`${label}: ${reason}`);
      for (const actor of rule.actors) if (!ALL_ACTORS.includes(actor)) problems.push(`${label}: ${actor}`);
      // Late evidence (confirmation.test.ts) is the one way out of a terminal state, into another one.
      const late =
        rule.reasons.every((reason) => LATE_EVIDENCE_REASONS.has(reason)) && TERMINAL_STATES.has(rule.to);
      if (rule.from !== null && TERMINAL_STATES.has(rule.from) && !late)
        problems.push(`${label}: leaves a terminal state`);
    }

    // Assess
    expect(problems).toEqual([]);
  });

  it('has at most one rule per (from, to, reason), so findTransition is unambiguous', () => {
    // Prepare
    const seen = new Map<string, number>();

    // Act
    for (const rule of TRANSITIONS) {
      for (const reason of rule.reasons) {
        const key = `${rule.from}|${rule.to}|${reason}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    }

    // Assess
    expect([...seen].filter(([, count]) => count > 1)).toEqual([]);
  });

  it('only admission starts from null, and admission is api -> accepted (admitted)', () => {
    // Act
    const fromNull = TRANSITIONS.filter((rule) => rule.from === null);

    // Assess
    expect(fromNull).toEqual([{ from: null, to: S.accepted, reasons: [R.admitted], actors: ['api'] }]);
  });
});

describe('isTransitionAllowed and applyTransition agree with the table for every combination', () => {
  it.each(FROM_STATES.map((from) => [String(from), from] as const))(
    'from %s: every (to, reason, actor)',
    (_label, from) => {
      // Prepare
      const mismatches: string[] = [];
      let allowedCount = 0;

      // Act
      for (const to of ALL_STATES) {
        for (const reason of ALL_REASONS) {
          const expectedByReason = tableAllows(from, to, reason);
          if (isTransitionAllowed(from, to, reason) !== expectedByReason) {
            mismatches.push(`isTransitionAllowed(${from}, ${to}, ${reason}) should be ${expectedByReason}`);
          }
          if ((findTransition(from, to, reason) !== undefined) !== expectedByReason) {
            mismatches.push(`findTransition(${from}, ${to}, ${reason})`);
          }
          for (const actor of ALL_ACTORS) {
            const expected = tableAllows(from, to, reason, actor);
            if (expected) allowedCount += 1;
            // Admission (from null) is built by admit(); a stored record is never in state null.
            if (from !== null && applies(from, to, reason, actor) !== expected) {
              mismatches.push(`applyTransition ${from} -> ${to} (${reason}, ${actor}) should be ${expected}`);
            }
          }
        }
      }

      // Assess
      expect(mismatches).toEqual([]);
      const tableCount = TRANSITIONS.filter((rule) => rule.from === from).reduce(
        (sum, rule) => sum + rule.reasons.length * rule.actors.length,
        0,
      );
      expect(allowedCount).toBe(tableCount);
    },
  );

  it('accepts every edge the table lists, with every listed reason and actor', () => {
    // Prepare
    const refused: string[] = [];
    let edges = 0;

    // Act
    for (const rule of TRANSITIONS) {
      for (const reason of rule.reasons) {
        for (const actor of rule.actors) {
          edges += 1;
          if (!isTransitionAllowed(rule.from, rule.to, reason))
            refused.push(`${rule.from}->${rule.to} ${reason}`);
          if (rule.from !== null && !applies(rule.from, rule.to, reason, actor)) {
            refused.push(`apply ${rule.from}->${rule.to} ${reason} ${actor}`);
          }
        }
      }
    }

    // Assess
    expect(refused).toEqual([]);
    expect(edges).toBeGreaterThan(20);
  });
});

describe('key forbidden edges (hand-written from docs/design.md#states)', () => {
  const everyReasonAndActor = ALL_REASONS.flatMap((reason) =>
    ALL_ACTORS.map((actor) => [reason, actor] as const),
  );

  it.each([S.delivered, S.undelivered, S.failed, S.expired])(
    'nothing leaves %s (but late evidence)',
    (terminal) => {
      // Prepare
      const escapes: string[] = [];

      // Act
      for (const to of ALL_STATES) {
        for (const [reason, actor] of everyReasonAndActor) {
          if (LATE_EVIDENCE_REASONS.has(reason) && TERMINAL_STATES.has(to)) continue;
          if (isTransitionAllowed(terminal, to, reason) || applies(terminal, to, reason, actor)) {
            escapes.push(`${to} ${reason} ${actor}`);
          }
        }
      }

      // Assess
      expect(escapes).toEqual([]);
    },
  );

  it.each([
    {
      from: S.dispatchUnknown,
      to: S.dispatching,
      why: 'an unknown send is never followed directly by another',
    },
    {
      from: S.dispatching,
      to: S.expired,
      why: 'a call may be in flight: it must pass through dispatch_unknown',
    },
    { from: S.sent, to: S.dispatching, why: 'an accepted message is never re-sent' },
    { from: S.sent, to: S.dispatchUnknown, why: 'a known outcome never becomes unknown' },
    { from: S.accepted, to: S.accepted, why: 'rescheduling is not a transition' },
    { from: S.accepted, to: S.dispatchUnknown, why: 'unknown only after a call' },
    { from: S.dispatching, to: S.dispatching, why: 'no double claim' },
  ])('$from -> $to is forbidden for every reason and actor ($why)', ({ from, to }) => {
    // Act
    const allowed = everyReasonAndActor.filter(
      ([reason, actor]) => isTransitionAllowed(from, to, reason) || applies(from, to, reason, actor),
    );

    // Assess
    expect(allowed).toEqual([]);
  });

  it('dispatch_unknown returns to accepted only on proven absence or the provider saying it never sent', () => {
    // Act
    const allowed = everyReasonAndActor.filter(([reason, actor]) =>
      applies(S.dispatchUnknown, S.accepted, reason, actor),
    );

    // Assess
    expect(allowed).toEqual([
      [R.reconciledAbsent, 'reconciler'],
      [R.providerNotSent, 'reconciler'],
      [R.providerNotSent, 'receipt'],
    ]);
  });

  it.each([S.dispatchUnknown, S.sent])(
    '%s becomes failed only when the provider says it never sent, for good (reconciler or receipt)',
    (from) => {
      // Act
      const allowed = everyReasonAndActor.filter(([reason, actor]) => applies(from, S.failed, reason, actor));

      // Assess: a Twilio `failed` with a "not sent, permanent" code (30450, 30002, 21408)
      expect(allowed).toEqual([
        [R.providerNotSent, 'reconciler'],
        [R.providerNotSent, 'receipt'],
      ]);
    },
  );

  it('accepted becomes sent only on a provider receipt (the message of an earlier attempt exists)', () => {
    // Act
    const allowed = everyReasonAndActor.filter(([reason, actor]) =>
      applies(S.accepted, S.sent, reason, actor),
    );

    // Assess
    expect(allowed).toEqual([[R.deliveryReceipt, 'receipt']]);
  });

  it('a sent message goes back to accepted only when the provider says it never reached a carrier', () => {
    // Act
    const allowed = everyReasonAndActor.filter(([reason, actor]) =>
      applies(S.sent, S.accepted, reason, actor),
    );

    // Assess
    expect(allowed).toEqual([
      [R.providerNotSent, 'reconciler'],
      [R.providerNotSent, 'receipt'],
    ]);
  });

  it('only the sender claims, and only from accepted', () => {
    // Act
    const claims = FROM_STATES.flatMap((from) =>
      everyReasonAndActor
        .filter(([reason]) => isTransitionAllowed(from, S.dispatching, reason))
        .filter(([reason, actor]) => from !== null && applies(from, S.dispatching, reason, actor))
        .map(([reason, actor]) => `${from} ${reason} ${actor}`),
    );

    // Assess
    expect(claims).toEqual(['accepted claimed sender']);
  });

  it('the api can only admit, and record a user confirmation', () => {
    // Act
    const apiEdges = TRANSITIONS.filter(
      (rule) => rule.actors.includes('api') && !rule.reasons.includes(R.userConfirmed),
    );

    // Assess
    expect(apiEdges.map((rule) => `${rule.from}->${rule.to}`)).toEqual(['null->accepted']);
  });
});

describe('edges the design requires are allowed', () => {
  it.each([
    [S.accepted, S.dispatching, R.claimed, 'sender'],
    [S.dispatching, S.sent, R.providerAccepted, 'sender'],
    [S.dispatching, S.accepted, R.providerRejectedRetryable, 'sender'],
    [S.dispatching, S.failed, R.providerRejectedPermanent, 'sender'],
    [S.dispatching, S.dispatchUnknown, R.providerTimeout, 'sender'],
    [S.dispatching, S.dispatchUnknown, R.leaseExpired, 'sender'],
    [S.dispatching, S.dispatchUnknown, R.leaseExpired, 'reconciler'],
    [S.dispatchUnknown, S.sent, R.reconciledFound, 'reconciler'],
    [S.dispatchUnknown, S.delivered, R.reconciledFound, 'reconciler'],
    [S.dispatchUnknown, S.undelivered, R.reconciledFound, 'reconciler'],
    [S.dispatchUnknown, S.accepted, R.reconciledAbsent, 'reconciler'],
    [S.dispatchUnknown, S.dispatchUnknown, R.reconcileInconclusive, 'reconciler'],
    [S.dispatchUnknown, S.expired, R.unknownAtExpiry, 'reconciler'],
    [S.accepted, S.expired, R.expiredBeforeDispatch, 'sender'],
    [S.accepted, S.expired, R.expiredBeforeDispatch, 'reconciler'],
    [S.sent, S.delivered, R.deliveryReceipt, 'receipt'],
    [S.sent, S.undelivered, R.deliveryReceipt, 'receipt'],
    [S.sent, S.delivered, R.statusPolled, 'reconciler'],
    [S.sent, S.sent, R.statusHorizon, 'reconciler'],
  ] as const)('%s -> %s (%s, %s)', (from, to, reason, actor) => {
    // Act
    const ok = applies(from, to, reason, actor);

    // Assess
    expect(ok).toBe(true);
    expect(isTransitionAllowed(from, to, reason)).toBe(true);
  });

  it('every non-terminal state can reach a terminal state (nothing is stuck by construction)', () => {
    // Prepare
    const canFinish = new Set<NotificationState>(TERMINAL_STATES);

    // Act: backwards reachability over the table.
    let grew = true;
    while (grew) {
      grew = false;
      for (const rule of TRANSITIONS) {
        if (rule.from !== null && !canFinish.has(rule.from) && canFinish.has(rule.to)) {
          canFinish.add(rule.from);
          grew = true;
        }
      }
    }

    // Assess
    expect([...canFinish].sort()).toEqual([...ALL_STATES].sort());
  });
});
