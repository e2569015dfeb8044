import { describe, expect, it } from 'vitest';
import {
  type ChaosDataset,
  checkAll,
  createLeakDetector,
  type InvariantName,
  keyOfReference,
  type LedgerEntry,
  replayEvidence,
} from '../../../scripts/chaos/invariants.js';
import { aGoodDataset, CODE, PHONE, T0, URL_SECRET } from './fixtures.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** The counts of every invariant, by name. */
function counts(dataset: ChaosDataset): Record<InvariantName, number> {
  return Object.fromEntries(checkAll(dataset).map((r) => [r.name, r.count])) as Record<InvariantName, number>;
}

/** Every invariant holds except `name`, which counts `expected` problems. */
function expectOnlyFailure(dataset: ChaosDataset, name: InvariantName, expected = 1) {
  const all = counts(dataset);
  expect(all[name], `${name} should fail`).toBe(expected);
  for (const [other, count] of Object.entries(all)) if (other !== name) expect(count, other).toBe(0);
}

describe('chaos invariants', () => {
  it('accept a consistent dataset', () => {
    // Act
    const results = checkAll(aGoodDataset());
    // Assess
    expect(results.map((r) => [r.name, r.count])).toEqual([
      ['duplicates', 0],
      ['post_expiry_sends', 0],
      ['validity_beyond_expiry', 0],
      ['lost', 0],
      ['evidence', 0],
      ['ledger_mismatch', 0],
      ['admission', 0],
      ['budget', 0],
      ['event_duplicates', 0],
      ['number_budget', 0],
      ['privacy', 0],
      ['misattributed', 0],
      ['stale', 0],
      ['stuck', 0],
    ]);
  });

  describe('stuck', () => {
    /** The good dataset with `k-exp` left in `state` from `at` on, and the run observed at `observedAt`. */
    function withUndecided(observedAt: number, expiredAt?: number) {
      const good = aGoodDataset();
      const exp = good.commands.find((c) => c.idempotencyKey === 'k-exp');
      if (!exp) throw new Error('fixture: k-exp missing');
      const admission = good.evidence.filter((e) => e.idempotencyKey === 'k-exp' && e.seq === 1);
      const others = good.evidence.filter((e) => e.idempotencyKey !== 'k-exp');
      const trail =
        expiredAt === undefined
          ? admission
          : [
              ...admission,
              {
                ...(good.evidence.find(
                  (e) => e.idempotencyKey === 'k-exp' && e.seq === 2,
                ) as (typeof good.evidence)[0]),
                at: expiredAt,
              },
            ];
      const record = expiredAt === undefined ? { ...exp, state: 'accepted' as const, version: 1 } : exp;
      return {
        ...good,
        observedAt,
        commands: good.commands.map((c) => (c.idempotencyKey === 'k-exp' ? record : c)),
        evidence: [...others, ...trail],
      };
    }

    it('counts a command still undecided longer than the bound past its expiry', () => {
      // Prepare: k-exp expires at T0 + 7 s; observed 60 s later, still accepted.
      const dataset = withUndecided(T0 + 7_000 + 60_000);
      // Act
      const result = checkAll(dataset).find((r) => r.name === 'stuck');
      // Assess
      expect(result).toMatchObject({ count: 1, keys: ['k-exp'] });
    });

    it('counts a command expired only long after its expiry, from the trail', () => {
      const dataset = withUndecided(T0 + 200_000, T0 + 7_000 + 45_000);
      const result = checkAll(dataset).find((r) => r.name === 'stuck');
      expect(result?.count).toBe(1);
    });

    it('accepts a command decided within the bound, and one observed before its expiry + bound', () => {
      const onTime = withUndecided(T0 + 200_000, T0 + 7_000 + 20_000);
      const young = withUndecided(T0 + 7_000 + 10_000);
      expect(checkAll(onTime).find((r) => r.name === 'stuck')?.count).toBe(0);
      expect(checkAll(young).find((r) => r.name === 'stuck')?.count).toBe(0);
    });
  });

  it('duplicates: a second accepted message for a key', () => {
    // Prepare
    const good = aGoodDataset();
    const dataset = {
      ...good,
      ledger: [
        ...good.ledger,
        { ...good.ledger[0], id: 'SM2', client_reference: 'k-ok#2' } as (typeof good.ledger)[0],
      ],
    };
    // Act
    const result = checkAll(dataset).find((r) => r.name === 'duplicates');
    // Assess
    expect(result).toMatchObject({ count: 1, keys: ['k-ok'] });
    // The second message has no claimed attempt either: the validity check notices that too.
    expect(counts(dataset).validity_beyond_expiry).toBe(1);
  });

  it('post-expiry sends: a provider call at exactly expires_at - margin', () => {
    // Prepare: k-exp expires at T0 + 7 s, so the deadline is T0 + 2 s.
    const good = aGoodDataset();
    const dataset = {
      ...good,
      requests: [
        ...good.requests,
        {
          received_at: iso(T0 + 2_000),
          client_reference: 'k-exp#1',
          fault: 'error_5xx_before_accept',
          outcome: 'not_recorded',
        },
      ],
    };
    // Act / Assess
    expectOnlyFailure(dataset, 'post_expiry_sends');
  });

  it('post-expiry sends: the absence probe (scheduled, no reference) is no send for a command; an unscheduled send without a reference is', () => {
    // Prepare: a chaos run beside npm test (12:2x) counted a probe as "send for unknown key (none)".
    const good = aGoodDataset();
    const probe = { received_at: iso(T0 + 5_000), client_reference: null, scheduled: true, fault: null };
    const stray = { ...probe, scheduled: false };
    // Act / Assess
    expect(counts({ ...good, requests: [...good.requests, probe] }).post_expiry_sends).toBe(0);
    expectOnlyFailure({ ...good, requests: [...good.requests, stray] }, 'post_expiry_sends');
  });

  it('ledger: a probe message (no reference, scheduled or canceled) is no stray message; one that went out is', () => {
    // Prepare: chaos-short beside a chaos soak counted a canceled probe as "message for unknown key".
    const good = aGoodDataset();
    const probe = (status: string): LedgerEntry => ({
      id: `SMprobe${status}`,
      client_reference: null,
      accepted_at: iso(T0),
      status,
    });
    // Act / Assess
    const quiet = [probe('canceled'), probe('scheduled')];
    expect(counts({ ...good, ledger: [...good.ledger, ...quiet] }).ledger_mismatch).toBe(0);
    expectOnlyFailure({ ...good, ledger: [...good.ledger, probe('delivered')] }, 'ledger_mismatch');
  });

  it('post-expiry sends: a call just before the deadline is fine', () => {
    const good = aGoodDataset();
    const dataset = {
      ...good,
      requests: [
        ...good.requests,
        { received_at: iso(T0 + 1_999), client_reference: 'k-exp#1', fault: 'hang' },
      ],
    };
    expect(counts(dataset).post_expiry_sends).toBe(0);
  });

  it('validity: a message valid for longer than the token lived at its claim', () => {
    // Prepare: claimed at T0 + 100 with 10 minutes of life, so at most 599.9 s are allowed.
    const good = aGoodDataset();
    const dataset = {
      ...good,
      ledger: [{ ...good.ledger[0], validity_period_seconds: 600 } as (typeof good.ledger)[0]],
    };
    // Act / Assess
    expectOnlyFailure(dataset, 'validity_beyond_expiry');
  });

  it('lost: an admitted key that never became final', () => {
    // Prepare: k-exp stopped at admission (version 1, one evidence record): consistent, but not final.
    const good = aGoodDataset();
    const exp = good.evidence.filter((e) => e.idempotencyKey === 'k-exp');
    const stuck = {
      ...good.commands[1],
      state: 'accepted',
      version: 1,
      lastReason: 'admitted',
      updatedAt: T0,
    } as (typeof good.commands)[1];
    const dataset = {
      ...good,
      // Observed before its expiry + the stuck bound: only `lost` applies.
      observedAt: T0 + 10_000,
      commands: [good.commands[0], stuck] as typeof good.commands,
      evidence: [
        ...good.evidence.filter((e) => e.idempotencyKey !== 'k-exp'),
        exp[0],
      ] as typeof good.evidence,
    };
    // Act / Assess
    expectOnlyFailure(dataset, 'lost');
  });

  it('lost: `sent` is final only once closed', () => {
    const good = aGoodDataset();
    const sent = { ...good.commands[0], state: 'sent', closed: false } as (typeof good.commands)[0];
    expect(counts({ ...good, commands: [sent] }).lost).toBe(1);
    expect(counts({ ...good, commands: [{ ...sent, closed: true }] }).lost).toBe(0);
  });

  it('evidence: a missing record (a gap in the sequence)', () => {
    const good = aGoodDataset();
    const dataset = {
      ...good,
      evidence: good.evidence.filter((e) => !(e.idempotencyKey === 'k-ok' && e.seq === 3)),
    };
    expectOnlyFailure(dataset, 'evidence');
  });

  it('evidence: a state change recorded twice', () => {
    const good = aGoodDataset();
    const dataset = { ...good, evidence: [...good.evidence, good.evidence[1]] as typeof good.evidence };
    expectOnlyFailure(dataset, 'evidence');
  });

  it('evidence: a replay that does not reproduce the stored state', () => {
    // Prepare: the stored record says `sent` (closed), its trail says `delivered`.
    const good = aGoodDataset();
    const tampered = { ...good.commands[0], state: 'sent', closed: true } as (typeof good.commands)[0];
    const dataset = { ...good, commands: [tampered, good.commands[1]] as typeof good.commands };
    // Act / Assess
    expectOnlyFailure(dataset, 'evidence');
  });

  it('evidence: a transition the table forbids, and a record without a command', () => {
    const good = aGoodDataset();
    const forbidden = good.evidence.map((e) =>
      e.idempotencyKey === 'k-exp' && e.seq === 2 ? { ...e, actor: 'api' as const } : e,
    );
    expectOnlyFailure({ ...good, evidence: forbidden }, 'evidence');
    const orphan = { ...good.evidence[0], idempotencyKey: 'k-ghost' } as (typeof good.evidence)[0];
    expectOnlyFailure({ ...good, evidence: [...good.evidence, orphan] }, 'evidence');
  });

  it('ledger mismatch: delivered, but the provider never accepted that message', () => {
    const good = aGoodDataset();
    const dataset = { ...good, ledger: [], requests: [] };
    // The record also holds an id the provider does not have: misattributed counts it too.
    expect(counts(dataset)).toMatchObject({ ledger_mismatch: 1, misattributed: 1, stale: 0, duplicates: 0 });
  });

  it('admission: two 202s, a 409 for the winner, and a rejected event that was stored', () => {
    // Prepare
    const good = aGoodDataset();
    const twice = {
      idempotencyKey: 'k-ok',
      kind: 'normal' as const,
      responses: [
        { variant: 'original' as const, status: 202 },
        { variant: 'original' as const, status: 202 },
      ],
    };
    const winnerConflict = {
      idempotencyKey: 'k-ok',
      kind: 'normal' as const,
      responses: [
        { variant: 'original' as const, status: 202 },
        { variant: 'original' as const, status: 409 },
      ],
    };
    const storedLate = {
      idempotencyKey: 'k-exp',
      kind: 'too_late' as const,
      responses: [{ variant: 'original' as const, status: 422, code: 'already_expired' }],
    };
    // Act / Assess
    expectOnlyFailure({ ...good, admissions: [twice] }, 'admission');
    expectOnlyFailure({ ...good, admissions: [winnerConflict] }, 'admission');
    expectOnlyFailure({ ...good, admissions: [storedLate] }, 'admission');
  });

  it('admission: a 429 (destination budget spent) is fine for a key that stored nothing, never for an admitted one', () => {
    // Prepare
    const good = aGoodDataset();
    const refused = {
      idempotencyKey: 'k-refused',
      kind: 'normal' as const,
      responses: [{ variant: 'original' as const, status: 429, code: 'destination_rate_limited' }],
    };
    const refusedButStored = {
      idempotencyKey: 'k-ok',
      kind: 'normal' as const,
      responses: [
        { variant: 'original' as const, status: 202 },
        { variant: 'original' as const, status: 429, code: 'destination_rate_limited' },
      ],
    };

    // Act
    const fine = checkAll({ ...good, admissions: [refused] });

    // Assess
    expect(fine.find((r) => r.name === 'admission')?.count).toBe(0);
    expectOnlyFailure({ ...good, admissions: [refusedButStored] }, 'admission');
  });

  it('admission: responses that retried 5xx before succeeding are fine', () => {
    const good = aGoodDataset();
    const retried = {
      idempotencyKey: 'k-ok',
      kind: 'normal' as const,
      responses: [
        { variant: 'original' as const, status: 202 },
        { variant: 'original' as const, status: 599 },
      ],
    };
    expect(counts({ ...good, admissions: [retried] }).admission).toBe(0);
  });

  for (const [what, leak] of [
    ['a phone number in a log line', `{"message":"sending to ${PHONE}"}`],
    ['a phone number without its plus', `to=${PHONE.slice(1)}`],
    ['a url-encoded phone number', `To=${encodeURIComponent(PHONE)}&Body=x`],
    ['a code', `{"body":"Your code is ${CODE}."}`],
    ['a reset URL', `{"url":"${URL_SECRET}"}`],
    ['a token alone', `token=${new URL(URL_SECRET).searchParams.get('token')}`],
  ] as const) {
    it(`privacy: ${what}`, () => {
      const good = aGoodDataset();
      expectOnlyFailure({ ...good, logLines: [...good.logLines, leak] }, 'privacy');
    });
  }

  it('privacy: a secret in a stored item or an evidence record', () => {
    const good = aGoodDataset();
    expectOnlyFailure(
      { ...good, items: [...good.items, { pk: 'k-ok', sk: 'CMD', phone: PHONE }] },
      'privacy',
    );
    const leaky = { ...good.evidence[0], providerMessageId: CODE } as (typeof good.evidence)[0];
    const withLeak = { ...good, evidence: good.evidence.map((e, i) => (i === 0 ? leaky : e)) };
    expect(counts(withLeak).privacy).toBe(1);
  });

  it('privacy: matches whole secrets only (a code inside a longer number is not a code)', () => {
    // Prepare
    const detect = createLeakDetector({ phones: [PHONE], codes: [CODE], urls: [URL_SECRET] });
    // Act / Assess
    expect(detect(`ts=1${CODE}5`)).toBeUndefined();
    expect(detect(`id=SM${CODE}abc`)).toBe('code');
    expect(detect('nothing to see')).toBeUndefined();
  });
});

describe('chaos invariant helpers', () => {
  it('keyOfReference splits at the last #', () => {
    expect(keyOfReference('sms:password_reset:abc#3')).toBe('sms:password_reset:abc');
    expect(keyOfReference('no-attempt')).toBeNull();
    expect(keyOfReference(null)).toBeNull();
  });

  it('replayEvidence folds a trail into the state it implies', () => {
    const good = aGoodDataset();
    const trail = good.evidence.filter((e) => e.idempotencyKey === 'k-ok');
    expect(replayEvidence(trail)).toMatchObject({
      state: 'delivered',
      version: 4,
      attempts: 1,
      providerMessageId: 'SM1',
    });
    expect(replayEvidence([])).toBeUndefined();
  });
});
