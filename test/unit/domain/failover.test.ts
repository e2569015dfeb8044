import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AttemptEnd,
  type CircuitRead,
  chooseProvider,
  failoverCandidates,
  healthSampleOf,
  type PastAttempt,
  pastAttempts,
  providerOfAttempt,
} from '../../../shared/domain/failover.js';
import type { NotificationRecord } from '../../../shared/domain/notification.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import { DESTINATION_FAULTS } from '../../../shared/providers/registry.js';
import { aRecord } from './fixtures.js';

const PROVIDERS = ['twilio', 'eum'] as const;
const closed = (provider: string): CircuitRead => ({ provider, state: 'closed' });
const open = (provider: string): CircuitRead => ({ provider, state: 'open' });
const attempt = (n: number, provider: string, end: AttemptEnd): PastAttempt => ({
  attempt: n,
  provider,
  end,
});

describe('chooseProvider: the next attempt goes elsewhere only when the previous provably did not send', () => {
  it.each([
    { name: 'first attempt: the primary', attempts: [], circuits: [], want: 'twilio' },
    {
      name: 'first attempt, primary circuit open: the secondary',
      attempts: [],
      circuits: [open('twilio'), closed('eum')],
      want: 'eum',
    },
    {
      name: 'every circuit open: the first candidate anyway',
      attempts: [],
      circuits: [open('twilio'), open('eum')],
      want: 'twilio',
    },
    {
      name: 'refused before acceptance (throttle, 5xx, connection refused): the next provider',
      attempts: [attempt(1, 'twilio', AttemptEnd.refused)],
      circuits: [],
      want: 'eum',
    },
    {
      name: 'reconciled absent: the next provider',
      attempts: [attempt(1, 'twilio', AttemptEnd.absent)],
      circuits: [],
      want: 'eum',
    },
    {
      name: "the provider's own not-sent: the next provider",
      attempts: [attempt(1, 'twilio', AttemptEnd.notSent)],
      circuits: [],
      want: 'eum',
    },
    {
      name: 'the secondary refused too: back to the primary (the list wraps)',
      attempts: [attempt(1, 'twilio', AttemptEnd.refused), attempt(2, 'eum', AttemptEnd.refused)],
      circuits: [],
      want: 'twilio',
    },
    {
      name: 'the next provider open: the same provider again',
      attempts: [attempt(1, 'twilio', AttemptEnd.refused)],
      circuits: [closed('twilio'), open('eum')],
      want: 'twilio',
    },
    {
      name: 'account refused at the primary: the secondary, and never the primary again',
      attempts: [attempt(1, 'twilio', AttemptEnd.refusedAccount), attempt(2, 'eum', AttemptEnd.refused)],
      circuits: [],
      want: 'eum',
    },
  ])('$name', ({ attempts, circuits, want }) => {
    // Act
    const choice = chooseProvider(PROVIDERS, circuits, attempts);
    // Assess
    expect(choice).toMatchObject({ kind: 'provider', provider: want });
  });

  it.each([
    {
      name: 'an unknown at the primary blocks failover',
      attempts: [attempt(1, 'twilio', AttemptEnd.mayHaveSent)],
      why: 'may_have_sent',
    },
    {
      name: 'an unknown at any earlier attempt blocks it',
      attempts: [attempt(1, 'twilio', AttemptEnd.mayHaveSent), attempt(2, 'eum', AttemptEnd.refused)],
      why: 'may_have_sent',
    },
    {
      name: 'a refusal of the destination never fails over',
      attempts: [attempt(1, 'twilio', AttemptEnd.refusedDestination)],
      why: 'destination_refused',
    },
    {
      name: 'every provider refused the account',
      attempts: [
        attempt(1, 'twilio', AttemptEnd.refusedAccount),
        attempt(2, 'eum', AttemptEnd.refusedAccount),
      ],
      why: 'no_provider_left',
    },
  ])('$name', ({ attempts, why }) => {
    // Act
    const choice = chooseProvider(PROVIDERS, [closed('twilio'), closed('eum')], attempts);
    // Assess
    expect(choice).toEqual({ kind: 'none', why });
  });

  it('one provider: the same provider, whatever its circuit (single-provider behaviour unchanged)', () => {
    // Act
    const choice = chooseProvider(['sns'], [open('sns')], [attempt(1, 'sns', AttemptEnd.refused)]);
    // Assess
    expect(choice).toEqual({ kind: 'provider', provider: 'sns', failover: false, circuitsOpen: true });
  });

  it('candidates put the failed provider last', () => {
    // Act
    const candidates = failoverCandidates(['a', 'b', 'c'], [attempt(1, 'b', AttemptEnd.refused)]);
    // Assess
    expect(candidates).toEqual({ kind: 'candidates', order: ['c', 'a', 'b'] });
  });
});

/** A provider of the property: whether it can prove absence (End User Messaging cannot). */
const CAN_PROVE: Readonly<Record<string, boolean>> = { twilio: true, eum: false, sns: false };

/** What one attempt's send did, and what the reconciler later learnt. */
type Outcome =
  | 'accepted'
  | 'refused'
  | 'refused_account'
  | 'refused_destination'
  | 'unknown_unresolved'
  | 'unknown_proven_absent'
  | 'not_sent';

describe('failover property', () => {
  it('across any sequence of outcomes, a second provider is never chosen while an earlier attempt may have sent', () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray(['twilio', 'eum', 'sns'], { minLength: 1 }),
        fc.array(
          fc.record({
            outcome: fc.constantFrom<Outcome>(
              'accepted',
              'refused',
              'refused_account',
              'refused_destination',
              'unknown_unresolved',
              'unknown_proven_absent',
              'not_sent',
            ),
            circuits: fc.array(
              fc.constantFrom('closed', 'open', 'half_open') as fc.Arbitrary<CircuitRead['state']>,
              {
                minLength: 3,
                maxLength: 3,
              },
            ),
          }),
          { maxLength: 8 },
        ),
        (providers, steps) => {
          const attempts: PastAttempt[] = [];
          // Ground truth: whether any attempt so far may have put an SMS out.
          let mayHaveSent = false;
          for (const [i, step] of steps.entries()) {
            const circuits = providers.map((provider, j) => ({
              provider,
              state: step.circuits[j] ?? 'closed',
            }));
            const choice = chooseProvider(providers, circuits, attempts);
            const previous = attempts.at(-1);
            if (choice.kind === 'none') {
              // Nothing chosen: right only when something was (or may have been) sent, or refused for good.
              expect(
                mayHaveSent ||
                  attempts.some(
                    (a) =>
                      a.end !== AttemptEnd.refused &&
                      a.end !== AttemptEnd.absent &&
                      a.end !== AttemptEnd.notSent,
                  ),
              ).toBe(true);
              return;
            }
            // Any attempt at all, and a fortiori at another provider, only when nothing may have been sent.
            expect(mayHaveSent).toBe(false);
            if (previous !== undefined && choice.provider !== previous.provider) {
              expect([
                AttemptEnd.refused,
                AttemptEnd.absent,
                AttemptEnd.notSent,
                AttemptEnd.refusedAccount,
              ]).toContain(previous.end);
            }
            expect(providers).toContain(choice.provider);
            expect(
              attempts.filter((a) => a.end === AttemptEnd.refusedAccount).map((a) => a.provider),
            ).not.toContain(choice.provider);
            const outcome: Outcome =
              step.outcome === 'unknown_proven_absent' && !CAN_PROVE[choice.provider]
                ? 'unknown_unresolved'
                : step.outcome;
            const end: AttemptEnd = {
              accepted: AttemptEnd.mayHaveSent,
              refused: AttemptEnd.refused,
              refused_account: AttemptEnd.refusedAccount,
              refused_destination: AttemptEnd.refusedDestination,
              unknown_unresolved: AttemptEnd.mayHaveSent,
              unknown_proven_absent: AttemptEnd.absent,
              not_sent: AttemptEnd.notSent,
            }[outcome];
            mayHaveSent ||= end === AttemptEnd.mayHaveSent;
            attempts.push({ attempt: i + 1, provider: choice.provider, end });
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('reading the record', () => {
  const base = (over: Partial<NotificationRecord>): NotificationRecord => aRecord(over);

  it('a record without attempt providers sent every attempt through its provider', () => {
    // Prepare
    const record = base({ attempts: 2, provider: { name: 'sns' } });
    // Act / Assess
    expect(providerOfAttempt(record, 1)).toBe('sns');
    expect(providerOfAttempt(record, 2)).toBe('sns');
  });

  it.each([
    { reason: R.providerRejectedRetryable, end: AttemptEnd.refused },
    { reason: R.reconciledAbsent, end: AttemptEnd.absent },
    { reason: R.providerNotSent, end: AttemptEnd.notSent },
    { reason: R.callNotStarted, end: AttemptEnd.notSent },
  ])(
    'an accepted record after $reason: its last attempt ended $end, each at its own provider',
    ({ reason, end }) => {
      // Prepare
      const record = base({
        state: S.accepted,
        attempts: 2,
        lastReason: reason,
        provider: { name: 'eum' },
        attemptProviders: [
          { attempt: 1, provider: 'twilio' },
          { attempt: 2, provider: 'eum' },
        ],
      });
      // Act
      const past = pastAttempts(record);
      // Assess
      expect(past).toEqual([attempt(1, 'twilio', AttemptEnd.notSent), attempt(2, 'eum', end)]);
    },
  );

  it('any other state: every attempt may have sent', () => {
    // Prepare
    const record = base({ state: S.dispatchUnknown, attempts: 1, lastReason: R.providerTimeout });
    // Act / Assess
    expect(pastAttempts(record)).toEqual([attempt(1, record.provider.name, AttemptEnd.mayHaveSent)]);
  });
});

describe('healthSampleOf', () => {
  it.each([
    { outcome: { kind: 'accepted', messageId: 'SM1' }, sample: 'ok' },
    { outcome: { kind: 'not_sent_retryable', detail: 'http_429' }, sample: 'error' },
    { outcome: { kind: 'unknown', detail: 'timeout', timedOut: true }, sample: 'unknown' },
    { outcome: { kind: 'not_sent_permanent', detail: 'twilio:21211' }, sample: 'ok' },
    { outcome: { kind: 'not_sent_permanent', detail: 'twilio:20003' }, sample: 'error' },
  ] as const)('$outcome.kind $outcome.detail: $sample', ({ outcome, sample }) => {
    // Act / Assess
    expect(healthSampleOf('twilio', outcome, DESTINATION_FAULTS)).toBe(sample);
  });
});
