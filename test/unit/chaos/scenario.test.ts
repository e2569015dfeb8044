import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { describe, expect, it } from 'vitest';
import { hashSeed, Rng, unitFor } from '../../../scripts/chaos/prng.js';
import {
  crashes,
  DEFAULT_MIX,
  eventSpec,
  faultPhase,
  phoneFor,
  RESET_HOST,
  requestBody,
  secretsOf,
} from '../../../scripts/chaos/scenario.js';
import { NotificationRequestBody } from '../../../shared/http/request-schema.js';

describe('chaos prng', () => {
  it('is reproducible per seed and differs between seeds', () => {
    // Prepare
    const a = new Rng(1, 'x');
    const b = new Rng(1, 'x');
    const c = new Rng(2, 'x');
    // Act
    const seqA = Array.from({ length: 5 }, () => a.next());
    const seqB = Array.from({ length: 5 }, () => b.next());
    const seqC = Array.from({ length: 5 }, () => c.next());
    // Assess
    expect(seqA).toEqual(seqB);
    expect(seqA).not.toEqual(seqC);
    expect(seqA.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('draws integers in range and roughly uniform units', () => {
    const rng = new Rng(7);
    const ints = Array.from({ length: 2_000 }, () => rng.int(1, 6));
    expect(Math.min(...ints)).toBe(1);
    expect(Math.max(...ints)).toBe(6);
    const mean = Array.from({ length: 4_000 }, (_, i) => unitFor(3, i)).reduce((s, x) => s + x, 0) / 4_000;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
    expect(hashSeed('a', 1)).not.toBe(hashSeed('a', '1'));
  });
});

describe('chaos scenario', () => {
  it('generates the same events for the same seed, and valid requests', () => {
    // Act
    const events = Array.from({ length: 300 }, (_, i) => eventSpec(1, i));
    // Assess
    expect(events).toEqual(Array.from({ length: 300 }, (_, i) => eventSpec(1, i)));
    for (const spec of events.filter((e) => e.kind !== 'too_late')) {
      const parsed = NotificationRequestBody.safeParse(requestBody(spec, Date.now() + spec.lifeMs));
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    }
  });

  it('covers every kind of event and every duplicate count from 1 to 10', () => {
    const events = Array.from({ length: 2_000 }, (_, i) => eventSpec(9, i));
    expect(new Set(events.map((e) => e.kind))).toEqual(new Set(['normal', 'short_life', 'too_late']));
    expect(new Set(events.map((e) => e.duplicates))).toEqual(new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
    expect(events.some((e) => e.conflictParams !== undefined)).toBe(true);
    expect(events.some((e) => e.headerKey !== undefined)).toBe(true);
    expect(events.some((e) => e.headerKey === undefined)).toBe(true);
    expect(events.some((e) => e.extraSqsDelaysMs.length > 0)).toBe(true);
    const short = events.filter((e) => e.kind === 'short_life');
    expect(short.every((e) => e.lifeMs >= 6_000 && e.lifeMs <= 9_000)).toBe(true);
    expect(events.filter((e) => e.kind === 'too_late').every((e) => e.lifeMs < 5_000)).toBe(true);
  });

  it('gives every event a distinct, valid phone number and secrets the privacy scan can recognise', () => {
    const phones = Array.from({ length: 1_000 }, (_, i) => phoneFor(4, i));
    expect(new Set(phones).size).toBe(1_000);
    expect(phones.every((p) => parsePhoneNumberFromString(p)?.isValid())).toBe(true);
    const spec = Array.from({ length: 50 }, (_, i) => eventSpec(4, i)).find((e) => e.conflictParams);
    expect(spec).toBeDefined();
    const secrets = secretsOf(spec as NonNullable<typeof spec>);
    expect(secrets).toHaveLength(3);
    expect(
      secrets.every((s) => /^\+1415\d{7}$/.test(s) || /^9\d{9}$/.test(s) || s.includes(RESET_HOST)),
    ).toBe(true);
  });

  it('rotates through every simulator fault mode and quiet phases', () => {
    const modes = new Set(Array.from({ length: 300 }, (_, i) => faultPhase(1, i).mode));
    expect(modes).toEqual(
      new Set([
        null,
        'timeout_before_accept',
        'timeout_after_accept',
        'error_5xx_before_accept',
        'error_5xx_after_accept',
        'rate_limited',
        'reject_permanent',
        'hang',
      ]),
    );
    expect(faultPhase(1, 5)).toEqual(faultPhase(1, 5));
  });

  it('decides crashes per key, step and occurrence, independent of interleaving', () => {
    const p = DEFAULT_MIX.crashProbability;
    expect(crashes(1, 'k', 'after_claim', 1, p)).toBe(crashes(1, 'k', 'after_claim', 1, p));
    const rate =
      Array.from({ length: 20_000 }, (_, i) => crashes(1, `k${i}`, 'before_claim', 1, 0.1)).filter(Boolean)
        .length / 20_000;
    expect(rate).toBeGreaterThan(0.08);
    expect(rate).toBeLessThan(0.12);
  });
});
