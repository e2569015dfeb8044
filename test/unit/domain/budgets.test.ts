import { describe, expect, it } from 'vitest';
import {
  type BudgetPolicy,
  budgetCounters,
  DEFAULT_DESTINATION_LIMITS,
  freesAt,
  parseCountryLimits,
  parseDestinationLimits,
  retryAfterSeconds,
} from '../../../shared/domain/budgets.js';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import { readSetting, SETTINGS, settingsEnv } from '../../../shared/settings.js';

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
      // Read as a setting, the error names the variable (shared/settings.ts passes it).
      expect(() => readSetting(settingsEnv({ destinationLimits: raw }), SETTINGS.destinationLimits)).toThrow(
        /^DESTINATION_LIMITS: /,
      );
    },
  );
});

describe('budget counters of an admission', () => {
  const policy: BudgetPolicy = {
    destination: parseDestinationLimits('3/15m,10/24h'),
    country: parseCountryLimits('FR:100/1h,20/1h'),
  };

  it('counts nesting windows in one item per subject, by fingerprint or country only', () => {
    // Prepare
    const now = Date.UTC(2026, 11, 1, 10, 7, 30);
    const day = Math.floor(now / (24 * HOUR));
    const quarter = Math.floor(now / 900_000);
    // Act
    const counters = budgetCounters(policy, FP, 'FR', now);
    // Assess
    expect(counters).toEqual([
      {
        key: `LIMIT#dst#${FP}#24h#${day}`,
        scope: 'destination',
        tallies: [
          { attribute: `n_24h_${day}`, limit: 10, windowEndsAt: Date.UTC(2026, 11, 2) },
          { attribute: `n_15m_${quarter}`, limit: 3, windowEndsAt: Date.UTC(2026, 11, 1, 10, 15) },
        ],
      },
      {
        key: `LIMIT#cc#FR#1h#${Math.floor(now / HOUR)}`,
        scope: 'country',
        tallies: [
          {
            attribute: `n_1h_${Math.floor(now / HOUR)}`,
            limit: 100,
            windowEndsAt: Date.UTC(2026, 11, 1, 11),
          },
        ],
      },
    ]);
  });

  it('keeps windows that do not nest in items of their own', () => {
    const counters = budgetCounters(
      { destination: parseDestinationLimits('2/7m,5/1h'), country: [] },
      FP,
      undefined,
      Date.UTC(2026, 11, 1, 10),
    );
    expect(counters.map((c) => c.tallies.length)).toEqual([1, 1]);
    expect(counters.map((c) => c.key.split('#')[3])).toEqual(['1h', '7m']);
  });

  it('uses the catch-all country budget for a country without its own, none without a region', () => {
    const now = Date.UTC(2026, 11, 1, 10);
    expect(budgetCounters(policy, FP, 'DE', now).filter((c) => c.scope === 'country')).toMatchObject([
      { key: expect.stringContaining('LIMIT#cc#DE#1h#'), tallies: [{ limit: 20 }] },
    ]);
    expect(budgetCounters(policy, FP, undefined, now).map((c) => c.scope)).toEqual(['destination']);
  });

  it('names a new tally when a window rolls over', () => {
    const end = Date.UTC(2026, 11, 1, 10, 15);
    const before = budgetCounters(policy, FP, undefined, end - 1)[0];
    const after = budgetCounters(policy, FP, undefined, end)[0];
    expect(before?.key).toBe(after?.key);
    expect(before?.tallies[1]?.attribute).not.toBe(after?.tallies[1]?.attribute);
    expect(before?.tallies[1]?.windowEndsAt).toBe(end);
  });

  it('frees a counter when its latest full window ends; Retry-After counts whole seconds to then', () => {
    // Prepare
    const now = Date.UTC(2026, 11, 1, 10, 10);
    const [counter] = budgetCounters(policy, FP, undefined, now);
    if (!counter) throw new Error('expected a counter');
    const [day, quarter] = counter.tallies.map((t) => t.attribute) as [string, string];
    // Act / Assess
    expect(freesAt(counter, { [day]: 5, [quarter]: 3 })).toBe(Date.UTC(2026, 11, 1, 10, 15));
    expect(freesAt(counter, { [day]: 10, [quarter]: 3 })).toBe(Date.UTC(2026, 11, 2));
    expect(freesAt(counter, undefined)).toBe(Date.UTC(2026, 11, 2));
    expect(retryAfterSeconds(Date.UTC(2026, 11, 1, 10, 15), now)).toBe(300);
    expect(retryAfterSeconds(now + 1_500, now)).toBe(2);
    expect(retryAfterSeconds(now, now)).toBe(1);
  });
});
