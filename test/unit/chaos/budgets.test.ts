import { describe, expect, it } from 'vitest';
import { checkBudgets, type PumpingObservation } from '../../../scripts/chaos/invariants.js';
import { pumpingEvents } from '../../../scripts/chaos/scenario.js';
import {
  type BudgetPolicy,
  parseCountryLimits,
  parseDestinationLimits,
} from '../../../shared/domain/budgets.js';
import type { NotificationRecord } from '../../../shared/domain/notification.js';
import { checkDestination, DEFAULT_ALLOWED_NUMBER_TYPES } from '../../../shared/http/destination.js';
import { aGoodDataset, T0 } from './fixtures.js';

const BUDGETS: BudgetPolicy = {
  destination: parseDestinationLimits('3/15m'),
  country: parseCountryLimits('FR:2/1h'),
};
const template = aGoodDataset().commands[0] as NotificationRecord;

function aCommand(key: string, fingerprint: string, createdAt = T0): NotificationRecord {
  return { ...template, idempotencyKey: key, destinationFingerprint: fingerprint, createdAt };
}

function seen(
  key: string,
  status: number,
  target: string,
  country = 'US',
  at = T0 + 100,
  sentAt = at - 50,
): PumpingObservation {
  return {
    idempotencyKey: key,
    target,
    country,
    status,
    ...(status === 429 ? { code: 'destination_rate_limited' } : {}),
    sentAt,
    at,
  };
}

/** A burst of 5 to one number: 3 admitted, 2 refused; as a correct service answers. */
function aGoodBurst() {
  const commands = ['b1', 'b2', 'b3'].map((k) => aCommand(k, 'fp1:burst'));
  const pumping = [
    ...['b1', 'b2', 'b3'].map((k) => seen(k, 202, 'burst-0')),
    seen('b1', 200, 'burst-0'),
    seen('b4', 429, 'burst-0'),
    seen('b5', 429, 'burst-0'),
  ];
  return { commands, pumping };
}

describe('chaos budget invariant', () => {
  it('accepts a burst admitted exactly within budget, with replays and justified refusals', () => {
    const { commands, pumping } = aGoodBurst();
    expect(checkBudgets(pumping, commands, BUDGETS)).toMatchObject({ count: 0 });
  });

  it('counts a destination window holding more than its budget', () => {
    // Prepare
    const { commands, pumping } = aGoodBurst();
    // Act
    const result = checkBudgets(pumping, [...commands, aCommand('b4', 'fp1:burst')], BUDGETS);
    // Assess: over budget, and b4 was answered 429 although stored.
    expect(result.count).toBe(2);
    expect(result.examples.join('\n')).toMatch(/4 admitted, budget 3/);
  });

  it('counts a 429 while the destination still had room, and a 5xx after retries', () => {
    // Prepare
    const commands = [aCommand('b1', 'fp1:burst')];
    const pumping = [seen('b1', 202, 'burst-0'), seen('b2', 429, 'burst-0'), seen('b3', 503, 'burst-0')];
    // Act
    const result = checkBudgets(pumping, commands, BUDGETS);
    // Assess
    expect(result.examples).toEqual([
      'b2: 429 for burst-0 while its windows had room',
      "b3: 503 after the client's retries",
    ]);
  });

  it('accepts a burst refused in a window that ended before its slow answers came', () => {
    // Prepare: sent 1 s before 3 admissions are 15 minutes old, the refusal answered 3 s after
    // (an overloaded run answers bursts 3-20 s late).
    const admitted = T0;
    const freed = admitted + 900_000;
    const sentAt = freed - 1_000;
    const commands = ['b1', 'b2', 'b3'].map((k) => aCommand(k, 'fp1:burst', admitted));
    const pumping = [
      ...['b1', 'b2', 'b3'].map((k) => seen(k, 202, 'burst-0', 'US', admitted + 100, admitted)),
      seen('b4', 429, 'burst-0', 'US', freed + 3_000, sentAt),
    ];
    // Act
    const result = checkBudgets(pumping, commands, BUDGETS);
    // Assess: decided while the window was full; sent once the three were 15 minutes old, unjustified.
    expect(result.examples).toEqual([]);
    const sentWhenFree = pumping.map((p) => (p.idempotencyKey === 'b4' ? { ...p, sentAt: freed } : p));
    expect(checkBudgets(sentWhenFree, commands, BUDGETS).examples).toEqual([
      'b4: 429 for burst-0 while its windows had room',
    ]);
  });

  it('judges destination windows as sliding: 4 admitted across a clock quarter-hour is over budget', () => {
    // Prepare: 3 admitted a minute before a quarter-hour, a 4th a minute after it.
    const quarter = (Math.floor(T0 / 900_000) + 1) * 900_000;
    const commands = [
      ...['b1', 'b2', 'b3'].map((k) => aCommand(k, 'fp1:burst', quarter - 60_000)),
      aCommand('b4', 'fp1:burst', quarter + 60_000),
    ];
    const pumping = ['b1', 'b2', 'b3', 'b4'].map((k) => seen(k, 202, 'burst-0', 'US', quarter + 60_100));
    // Act
    const result = checkBudgets(pumping, commands, BUDGETS);
    // Assess
    expect(result.examples).toEqual(['destination window 15m: 4 admitted, budget 3']);
    // A refusal there was justified.
    const refused = [...pumping.slice(0, 3), { ...seen('b4', 429, 'burst-0', 'US', quarter + 60_100) }];
    expect(checkBudgets(refused, commands.slice(0, 3), BUDGETS).examples).toEqual([]);
  });

  it('judges a country wave by the country budget, and lets a new window admit again', () => {
    // Prepare: 2 admitted in one hour, a third refused; the next hour admits again.
    const hour = 3_600_000;
    const start = Math.floor(T0 / hour) * hour;
    const commands = [
      aCommand('w1', 'fp1:a', start + 1),
      aCommand('w2', 'fp1:b', start + 2),
      aCommand('w4', 'fp1:d', start + hour + 1),
    ];
    const pumping = [
      seen('w1', 202, 'wave-FR-1', 'FR', start + 10),
      seen('w2', 202, 'wave-FR-2', 'FR', start + 20),
      seen('w3', 429, 'wave-FR-3', 'FR', start + 30),
      seen('w4', 202, 'wave-FR-4', 'FR', start + hour + 10),
    ];
    // Act / Assess
    expect(checkBudgets(pumping, commands, BUDGETS).count).toBe(0);
    const overspent = [...commands, aCommand('w3', 'fp1:c', start + 3)];
    const result = checkBudgets(
      pumping.map((p) => (p.idempotencyKey === 'w3' ? { ...p, status: 202 } : p)),
      overspent,
      BUDGETS,
    );
    expect(result.examples).toEqual(['country window FR 1h: 3 admitted, budget 2']);
  });
});

describe('pumping scenario', () => {
  it('aims bursts at a few numbers and waves at many numbers of a few countries, all sendable', () => {
    // Act
    const events = pumpingEvents(7);
    // Assess
    const bursts = events.filter((e) => e.group === 'burst');
    const waves = events.filter((e) => e.group === 'wave');
    expect(new Set(bursts.map((e) => e.spec.phone)).size).toBe(3);
    expect(bursts.every((e) => e.spec.duplicates === 2)).toBe(true);
    expect(new Set(waves.map((e) => e.country))).toEqual(new Set(['FR', 'DE', 'GB']));
    expect(new Set(waves.map((e) => e.spec.phone)).size).toBe(waves.length);
    for (const e of events) {
      const verdict = checkDestination(e.spec.phone, {
        allowedNumberTypes: DEFAULT_ALLOWED_NUMBER_TYPES,
        allowedCountries: [],
        allowedPrefixes: [],
      });
      expect(verdict, e.target).toMatchObject({ kind: 'allowed', country: e.country });
    }
    expect(new Set(events.map((e) => e.spec.idempotencyKey)).size).toBe(events.length);
    expect(pumpingEvents(7)).toEqual(events);
  });
});
