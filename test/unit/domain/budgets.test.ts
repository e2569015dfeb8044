import { describe, expect, it } from 'vitest';
import {
  type BudgetPolicy,
  budgetCounters,
  DEFAULT_DESTINATION_LIMITS,
  parseCountryLimits,
  parseDestinationLimits,
  retryAfterSeconds,
} from '../../../shared/domain/budgets.js';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';

const FP = 'fp1:0123456789abcdef0123456789abcdef';
const HOUR = 3_600_000;

describe('parsing DESTINATION_LIMITS and COUNTRY_LIMITS', () => {
  it('reads the default as 3 per 15 minutes and 10 per 24 hours', () => {
    expect(parseDestinationLimits(DEFAULT_DESTINATION_LIMITS)).toEqual([
      { limit: 3, windowMs: 15 * 60_000, label: '15m' },
      { limit: 10, windowMs: 24 * HOUR, label: '24h' },
    ]);
  });

  it('turns budgets off with "off" or an empty value', () => {
    expect(parseDestinationLimits('off')).toEqual([]);
    expect(parseDestinationLimits(' OFF ')).toEqual([]);
    expect(parseCountryLimits('')).toEqual([]);
  });

  it('reads per-country and catch-all country budgets', () => {
    expect(parseCountryLimits('us:500/1h, 50/1h')).toEqual([
      { limit: 500, windowMs: HOUR, label: '1h', country: 'US' },
      { limit: 50, windowMs: HOUR, label: '1h' },
    ]);
  });

  it.each(['3', '3/', '0/15m', '3/15x', '-1/1h', '3/0s', 'USA:3/1h'])(
    'rejects "%s", naming the setting',
    (raw) => {
      expect(() => parseDestinationLimits(raw)).toThrow(InvalidConfigurationError);
      expect(() => parseDestinationLimits(raw)).toThrow(/DESTINATION_LIMITS/);
    },
  );
});

describe('budget counters of an admission', () => {
  const policy: BudgetPolicy = {
    destination: parseDestinationLimits('3/15m,10/24h'),
    country: parseCountryLimits('FR:100/1h,20/1h'),
  };

  it('names one fixed-window counter per budget, by fingerprint or country only', () => {
    // Prepare
    const now = Date.UTC(2026, 11, 1, 10, 7, 30);
    // Act
    const counters = budgetCounters(policy, FP, 'FR', now);
    // Assess
    expect(counters).toEqual([
      {
        key: `LIMIT#dst#${FP}#15m#${Math.floor(now / 900_000)}`,
        scope: 'destination',
        limit: 3,
        windowEndsAt: Date.UTC(2026, 11, 1, 10, 15),
      },
      {
        key: `LIMIT#dst#${FP}#24h#${Math.floor(now / (24 * HOUR))}`,
        scope: 'destination',
        limit: 10,
        windowEndsAt: Date.UTC(2026, 11, 2),
      },
      {
        key: `LIMIT#cc#FR#1h#${Math.floor(now / HOUR)}`,
        scope: 'country',
        limit: 100,
        windowEndsAt: Date.UTC(2026, 11, 1, 11),
      },
    ]);
  });

  it('uses the catch-all country budget for a country without its own, none without a region', () => {
    const now = Date.UTC(2026, 11, 1, 10);
    expect(budgetCounters(policy, FP, 'DE', now).filter((c) => c.scope === 'country')).toMatchObject([
      { key: expect.stringContaining('LIMIT#cc#DE#1h#'), limit: 20 },
    ]);
    expect(budgetCounters(policy, FP, undefined, now).map((c) => c.scope)).toEqual([
      'destination',
      'destination',
    ]);
  });

  it('starts a new counter key when the window rolls over', () => {
    const end = Date.UTC(2026, 11, 1, 10, 15);
    const [before] = budgetCounters(policy, FP, undefined, end - 1);
    const [after] = budgetCounters(policy, FP, undefined, end);
    expect(before?.key).not.toBe(after?.key);
    expect(before?.windowEndsAt).toBe(end);
  });

  it('gives Retry-After as the whole seconds until the window ends, at least 1', () => {
    const windowEndsAt = Date.UTC(2026, 11, 1, 10, 15);
    expect(retryAfterSeconds({ windowEndsAt }, windowEndsAt - 300_000)).toBe(300);
    expect(retryAfterSeconds({ windowEndsAt }, windowEndsAt - 1_500)).toBe(2);
    expect(retryAfterSeconds({ windowEndsAt }, windowEndsAt)).toBe(1);
  });
});
