import { describe, expect, it } from 'vitest';
import {
  ADMISSION_LOG_ATTRIBUTE,
  type BudgetPolicy,
  budgetCounters,
  compactedLog,
  counterExpiresAt,
  DEFAULT_DESTINATION_LIMITS,
  freesAt,
  logAdmits,
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
  const MINUTE = 60_000;
  /** The destination's log counter of an admission at `now`. */
  const logAt = (now: number) => {
    const [counter] = budgetCounters(policy, FP, undefined, now);
    if (counter?.kind !== 'log') throw new Error('expected the destination log');
    return counter;
  };

  it('keeps one admission log per number (every window of it) and fixed windows per country', () => {
    // Prepare
    const now = Date.UTC(2026, 11, 1, 10, 7, 30);
    // Act
    const counters = budgetCounters(policy, FP, 'FR', now);
    // Assess
    expect(counters).toEqual([
      {
        kind: 'log',
        key: `LIMIT#dst#${FP}`,
        scope: 'destination',
        attribute: ADMISSION_LOG_ATTRIBUTE,
        at: now,
        windows: policy.destination,
        keep: 10,
        compactAt: 20,
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

  it('keeps country windows that do not nest in items of their own', () => {
    const counters = budgetCounters(
      { destination: [], country: parseCountryLimits('2/7m,5/1h') },
      FP,
      'DE',
      Date.UTC(2026, 11, 1, 10),
    );
    expect(counters.map((c) => (c.kind === 'log' ? 0 : c.tallies.length))).toEqual([1, 1]);
    expect(counters.map((c) => c.key.split('#')[3])).toEqual(['1h', '7m']);
  });

  it('uses the catch-all country budget for a country without its own, none without a region', () => {
    const now = Date.UTC(2026, 11, 1, 10);
    expect(budgetCounters(policy, FP, 'DE', now).filter((c) => c.scope === 'country')).toMatchObject([
      { key: expect.stringContaining('LIMIT#cc#DE#1h#'), tallies: [{ limit: 20 }] },
    ]);
    expect(budgetCounters(policy, FP, undefined, now).map((c) => c.scope)).toEqual(['destination']);
  });

  it('slides: 3 admissions just before a clock quarter-hour leave no room just after it', () => {
    // Prepare: 3 admissions at 10:14 (newest first), the next attempt at 10:16.
    const boundary = Date.UTC(2026, 11, 1, 10, 15);
    const log = [boundary - MINUTE + 2, boundary - MINUTE + 1, boundary - MINUTE];
    const later = logAt(boundary + MINUTE);
    // Act / Assess: a fixed window admitted it (a new quarter); the sliding one waits for 10:29.
    expect(logAdmits(later, log)).toBe(false);
    expect(freesAt(later, { [ADMISSION_LOG_ATTRIBUTE]: log })).toBe(boundary + 14 * MINUTE);
    expect(logAdmits(logAt(boundary + 14 * MINUTE - 1), log)).toBe(false);
    expect(logAdmits(logAt(boundary + 14 * MINUTE), log)).toBe(true);
  });

  it('counts every window over one log: the day frees up when its oldest counted entry is 24 h old', () => {
    // Prepare: 10 admissions an hour apart, the newest at 09:00.
    const nine = Date.UTC(2026, 11, 1, 9);
    const log = Array.from({ length: 10 }, (_, i) => nine - i * HOUR);
    const at10 = logAt(Date.UTC(2026, 11, 1, 10));
    // Act / Assess: the 15 minutes have room, the day does not until 24 h after the 10th newest.
    expect(logAdmits(at10, log)).toBe(false);
    expect(freesAt(at10, { [ADMISSION_LOG_ATTRIBUTE]: log })).toBe(nine - 9 * HOUR + 24 * HOUR);
    expect(logAdmits(at10, log.slice(0, 9))).toBe(true);
  });

  it('keeps only the entries that can still matter when it rewrites a log', () => {
    const counter = logAt(Date.UTC(2026, 11, 1, 10));
    const long = Array.from({ length: 20 }, (_, i) => counter.at - (i + 1) * HOUR * 3);
    expect(compactedLog(counter, long)).toEqual([counter.at, ...long.slice(0, 9)]);
    expect(compactedLog(counter, [])).toEqual([counter.at]);
  });

  it('frees a log counter at its longest window when its contents are unknown; TTL after that', () => {
    const counter = logAt(Date.UTC(2026, 11, 1, 10));
    expect(freesAt(counter, undefined)).toBe(counter.at + 24 * HOUR);
    expect(counterExpiresAt(counter)).toBe(counter.at + 24 * HOUR);
  });

  it('frees a fixed-window counter when its latest full window ends; Retry-After counts whole seconds to then', () => {
    // Prepare
    const now = Date.UTC(2026, 11, 1, 10, 10);
    const [counter] = budgetCounters(
      { destination: [], country: parseCountryLimits('10/24h,3/15m') },
      FP,
      'FR',
      now,
    );
    if (!counter || counter.kind === 'log') throw new Error('expected a window counter');
    const [day, quarter] = counter.tallies.map((t) => t.attribute) as [string, string];
    // Act / Assess
    expect(freesAt(counter, { [day]: 5, [quarter]: 3 })).toBe(Date.UTC(2026, 11, 1, 10, 15));
    expect(freesAt(counter, { [day]: 10, [quarter]: 3 })).toBe(Date.UTC(2026, 11, 2));
    expect(freesAt(counter, undefined)).toBe(Date.UTC(2026, 11, 2));
    expect(counterExpiresAt(counter)).toBe(Date.UTC(2026, 11, 2));
    expect(retryAfterSeconds(Date.UTC(2026, 11, 1, 10, 15), now)).toBe(300);
    expect(retryAfterSeconds(now + 1_500, now)).toBe(2);
    expect(retryAfterSeconds(now, now)).toBe(1);
  });
});
