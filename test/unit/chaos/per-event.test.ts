/**
 * The per-event and per-number invariants (issue 25 item 11): fed what a service that took a
 * second key for a second event, or a second spelling for a second number, would leave behind.
 * The per-key and per-fingerprint checks count zero there; these must not.
 */
import { describe, expect, it } from 'vitest';
import {
  type ChaosDataset,
  checkAll,
  checkBudgets,
  checkDuplicates,
  type LedgerEntry,
} from '../../../scripts/chaos/invariants.js';
import {
  checkEventDuplicates,
  checkNumberBudgets,
  type DriverEvent,
  realNumber,
} from '../../../scripts/chaos/per-event.js';
import {
  type BudgetPolicy,
  parseCountryLimits,
  parseDestinationLimits,
} from '../../../shared/domain/budgets.js';
import type { NotificationRecord } from '../../../shared/domain/notification.js';
import { aGoodDataset, T0 } from './fixtures.js';

const MINUTE = 60_000;
const FRENCH = '+33612345678';
/** One French mobile as a caller may spell it: E.164, the trunk prefix kept, separators, `(0)`. */
const FRENCH_SPELLINGS = ['+33612345678', '+330612345678', '+33 6 12 34 56 78', '+33 (0)6 12 34 56 78'];

const template = aGoodDataset().commands[0] as NotificationRecord;

function aCommand(key: string, createdAt = T0, fingerprint = 'fp1:same'): NotificationRecord {
  return {
    ...template,
    idempotencyKey: key,
    eventId: `evt-${key}`,
    destinationFingerprint: fingerprint,
    createdAt,
  };
}

function anEvent(
  eventId: string,
  keys: readonly string[],
  spellings: readonly string[] = [FRENCH],
): DriverEvent {
  return { eventId, channel: 'sms', template: 'password_reset', keys, spellings };
}

function aMessage(id: string, reference: string, status = 'delivered'): LedgerEntry {
  return { id, client_reference: reference, accepted_at: new Date(T0).toISOString(), status };
}

describe('chaos invariant event_duplicates: one SMS per (event_id, channel, template), whatever keys', () => {
  it('counts an event whose second key got its own command and its own SMS (each key has one: `duplicates` sees none)', () => {
    // Prepare: a fresh Idempotency-Key on the client's retry, taken for a new event.
    const events = [anEvent('evt-1', ['k1', 'k1.f1'])];
    const ledger = [aMessage('SM1', 'k1#1'), aMessage('SM2', 'k1.f1#1')];
    const commands = [aCommand('k1'), aCommand('k1.f1')];
    // Act
    const result = checkEventDuplicates(ledger, commands, events);
    // Assess
    expect(checkDuplicates(ledger).count).toBe(0);
    expect(result.count).toBe(2);
    expect(result.examples).toEqual([
      'k1: event evt-1/sms/password_reset has 2 provider-accepted messages under 2 key(s)',
      'k1: event evt-1/sms/password_reset has 2 commands',
    ]);
    expect(result.keys).toEqual(['k1', 'k1.f1']);
  });

  it('accepts a second key answered with the first command (one command, one SMS)', () => {
    const events = [anEvent('evt-1', ['k1', 'k1.f1', 'k1.f2'])];
    expect(checkEventDuplicates([aMessage('SM1', 'k1#1')], [aCommand('k1')], events).count).toBe(0);
  });

  it('accepts a retry after a message that never left (failed), and counts a second one that did', () => {
    const events = [anEvent('evt-1', ['k1'])];
    const retried = [aMessage('SM1', 'k1#1', 'failed'), aMessage('SM2', 'k1#2')];
    expect(checkEventDuplicates(retried, [aCommand('k1')], events).count).toBe(0);
    const twice = [aMessage('SM1', 'k1#1', 'sent'), aMessage('SM2', 'k1#2')];
    expect(checkEventDuplicates(twice, [aCommand('k1')], events).count).toBe(1);
  });

  it('counts a message or a command under a key the driver never sent', () => {
    const events = [anEvent('evt-1', ['k1'])];
    const result = checkEventDuplicates(
      [aMessage('SM9', 'other#1')],
      [aCommand('k1'), aCommand('k9')],
      events,
    );
    expect(result.count).toBe(2);
    expect(result.keys).toEqual(['other', 'k9']);
  });

  it('is part of the run verdict: the broken run fails it and only the per-key checks that share its cause', () => {
    // Prepare: the good dataset's delivered event got a second key with its own SMS.
    const good = aGoodDataset();
    const dataset: ChaosDataset = {
      ...good,
      ledger: [
        ...good.ledger,
        { ...(good.ledger[0] as LedgerEntry), id: 'SM2', client_reference: 'k-ok.f1#1' },
      ],
      events: (good.events ?? []).map((e) =>
        e.eventId === 'evt-k-ok' ? { ...e, keys: ['k-ok', 'k-ok.f1'] } : e,
      ),
    };
    // Act
    const counts = Object.fromEntries(checkAll(dataset).map((r) => [r.name, r.count]));
    // Assess
    expect(counts.event_duplicates).toBe(1);
    expect(counts.duplicates).toBe(0);
  });
});

describe('chaos invariant number_budget: budgets per real number, canonicalized by the driver', () => {
  const budgets: BudgetPolicy = {
    destination: parseDestinationLimits('3/15m'),
    country: parseCountryLimits('FR:3/1h'),
  };

  it('counts 4 admissions to one number in 4 spellings, each with its own fingerprint (the per-fingerprint check sees 1 each)', () => {
    // Prepare: what a service that fingerprints the spelling, not the number, admits.
    const events = FRENCH_SPELLINGS.map((spelling, i) => anEvent(`evt-k${i}`, [`k${i}`], [spelling]));
    const commands = FRENCH_SPELLINGS.map((_, i) => aCommand(`k${i}`, T0 + i * MINUTE, `fp1:spelling-${i}`));
    const destinationOnly = { destination: budgets.destination, country: [] };
    // Act
    const result = checkNumberBudgets(commands, events, destinationOnly);
    // Assess
    expect(checkBudgets([], commands, destinationOnly).count).toBe(0);
    expect(result.count).toBe(1);
    expect(result.examples[0]).toBe('k0: the number of event evt-k0: 4 admitted in 15m, budget 3');
    // The number is named by its first event, never by its digits.
    for (const example of result.examples) expect(example).not.toMatch(/612345678|12 34 56 78/);
  });

  it('slides: 3 admissions at xx:14 and 1 at xx:16 are 4 in 15 minutes, though no clock quarter-hour holds more than 3', () => {
    const events = ['a', 'b', 'c', 'd'].map((k) => anEvent(`evt-${k}`, [k]));
    const quarter = Math.floor(T0 / (15 * MINUTE)) * 15 * MINUTE;
    const commands = [
      aCommand('a', quarter + 14 * MINUTE),
      aCommand('b', quarter + 14 * MINUTE + 1),
      aCommand('c', quarter + 14 * MINUTE + 2),
      aCommand('d', quarter + 16 * MINUTE),
    ];
    const destinationOnly = { destination: budgets.destination, country: [] };
    expect(checkNumberBudgets(commands, events, destinationOnly).count).toBe(1);
  });

  it('accepts a fourth admission once the first has left the window', () => {
    const events = ['a', 'b', 'c', 'd'].map((k) => anEvent(`evt-${k}`, [k]));
    const commands = [
      aCommand('a', T0),
      aCommand('b', T0 + MINUTE),
      aCommand('c', T0 + 2 * MINUTE),
      aCommand('d', T0 + 15 * MINUTE),
    ];
    const destinationOnly = { destination: budgets.destination, country: [] };
    expect(checkNumberBudgets(commands, events, destinationOnly).count).toBe(0);
  });

  it('counts a country window over budget by the country of the real numbers, in fixed clock windows', () => {
    // Prepare: 4 French numbers (one each), spelled with the trunk prefix.
    const numbers = ['+330612345671', '+330612345672', '+330612345673', '+330612345674'];
    const events = numbers.map((n, i) => anEvent(`evt-f${i}`, [`f${i}`], [n]));
    const hour = Math.floor(T0 / (60 * MINUTE)) * 60 * MINUTE;
    const inOneHour = numbers.map((_, i) => aCommand(`f${i}`, hour + 10 * MINUTE + i, `fp1:${i}`));
    const acrossTheHour = numbers.map((_, i) =>
      aCommand(`f${i}`, hour + (i < 2 ? 59 : 61) * MINUTE, `fp1:${i}`),
    );
    // Act / Assess
    const over = checkNumberBudgets(inOneHour, events, budgets);
    expect(over.count).toBe(1);
    expect(over.examples[0]).toMatch(/^f0: FR 1h window \d+: 4 admitted, budget 3$/);
    expect(checkNumberBudgets(acrossTheHour, events, budgets).count).toBe(0);
  });

  it('counts an event whose spellings are not one valid number (a driver that cannot say which number it used)', () => {
    const events = [anEvent('evt-x', ['x'], [FRENCH, '+33612345679'])];
    expect(checkNumberBudgets([aCommand('x')], events, budgets).count).toBe(1);
  });

  it('is part of the run verdict', () => {
    // Prepare: the good dataset's two commands go to one number at T0; the service fingerprinted them apart.
    const good = aGoodDataset();
    const dataset: ChaosDataset = {
      ...good,
      commands: good.commands.map((c) =>
        c.idempotencyKey === 'k-exp' ? { ...c, destinationFingerprint: 'fp1:another-spelling' } : c,
      ),
      budgets: { destination: parseDestinationLimits('1/15m'), country: [] },
    };
    // Act
    const counts = Object.fromEntries(checkAll(dataset).map((r) => [r.name, r.count]));
    // Assess
    expect(counts.number_budget).toBe(1);
    expect(counts.budget).toBe(0);
  });
});

describe('realNumber: the driver canonicalizes on its own', () => {
  it.each(FRENCH_SPELLINGS)('%s is +33612345678 in FR', (spelling) => {
    expect(realNumber(spelling)).toEqual({ e164: FRENCH, country: 'FR' });
  });

  it('refuses what is no valid number', () => {
    expect(realNumber('+3361234')).toBeUndefined();
  });
});

describe('chaos invariant admission with several keys per event', () => {
  it('takes a 2xx as stored when the command is under another of the event’s keys (the fresh key won the race)', () => {
    // Prepare: the event's own key stored nothing; its retry's fresh key was admitted, the rest replayed.
    const good = aGoodDataset();
    const dataset: ChaosDataset = {
      ...good,
      admissions: [
        {
          idempotencyKey: 'k-first',
          keys: ['k-first', 'k-ok'],
          kind: 'normal',
          responses: [
            { variant: 'original', status: 202 },
            { variant: 'original', status: 200 },
          ],
        },
      ],
      events: (good.events ?? []).map((e) =>
        e.eventId === 'evt-k-ok' ? { ...e, keys: ['k-first', 'k-ok'] } : e,
      ),
    };
    // Act
    const admission = checkAll(dataset).find((r) => r.name === 'admission');
    // Assess
    expect(admission?.count).toBe(0);
  });

  it('counts two 202s for one event under two keys', () => {
    const good = aGoodDataset();
    const dataset: ChaosDataset = {
      ...good,
      admissions: [
        {
          idempotencyKey: 'k-ok',
          keys: ['k-ok', 'k-ok.f1'],
          kind: 'normal',
          responses: [
            { variant: 'original', status: 202 },
            { variant: 'original', status: 202 },
          ],
        },
      ],
    };
    expect(checkAll(dataset).find((r) => r.name === 'admission')?.count).toBe(1);
  });
});
