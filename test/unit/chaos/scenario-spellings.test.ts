/**
 * The scenario's second keys and spellings (issue 25 item 11): the driver really sends one event
 * under several keys and one number in several spellings, each of which the API takes for that
 * number; otherwise `event_duplicates` and `number_budget` would judge nothing.
 */
import { describe, expect, it } from 'vitest';
import { realNumber } from '../../../scripts/chaos/per-event.js';
import {
  DEFAULT_MIX,
  eventSpec,
  freshKey,
  numberSpellings,
  PUMP_COUNTRIES,
  phoneFor,
  pumpingEvents,
  requestBody,
  spellingFor,
} from '../../../scripts/chaos/scenario.js';
import { canonicalPhone } from '../../../shared/http/phone.js';
import { IdempotencyKeyHeader, NotificationRequestBody } from '../../../shared/http/request-schema.js';

const NUMBERS = [phoneFor(1, 0), '+33612201111', (PUMP_COUNTRIES[1]?.[1] ?? String)(1_234), '+447400001234'];

describe('chaos scenario: one number, several spellings', () => {
  it.each(NUMBERS)('every spelling of %s is that number to the API and to the driver', (e164) => {
    // Act
    const spellings = numberSpellings(e164);
    // Assess
    expect(spellings[0]).toBe(e164);
    expect(new Set(spellings).size).toBe(spellings.length);
    expect(spellings.length).toBeGreaterThanOrEqual(5);
    for (const spelling of spellings) {
      expect(canonicalPhone(spelling), spelling).toEqual({ kind: 'canonical', e164 });
      expect(realNumber(spelling)?.e164, spelling).toBe(e164);
    }
  });

  it('spells a French mobile with its national trunk prefix kept after the country code', () => {
    expect(numberSpellings('+33612201111')).toEqual(
      expect.arrayContaining(['+330612201111', '+33 06 12 20 11 11', '+33 6 12 20 11 11']),
    );
  });
});

describe('chaos scenario: second keys and spellings at a small rate', () => {
  const specs = Array.from({ length: 400 }, (_, i) => eventSpec(1, i));

  it('some events mint a fresh key per try, some spell the number otherwise, most do neither', () => {
    const fresh = specs.filter((s) => s.freshKeys === true).length;
    const respelled = specs.filter((s) => s.spellings !== undefined).length;
    expect(fresh).toBeGreaterThan(5);
    expect(fresh).toBeLessThan(60);
    expect(respelled).toBeGreaterThan(15);
    expect(respelled).toBeLessThan(100);
  });

  it('a respelled event spells its own number, in a body the API schema takes', () => {
    const spec = specs.find((s) => s.spellings !== undefined);
    if (spec === undefined) throw new Error('no respelled event');
    for (let n = 0; n < 3; n++) {
      const phone = spellingFor(spec, n);
      expect(phone).not.toBe(spec.phone);
      expect(realNumber(phone)?.e164).toBe(spec.phone);
      expect(
        NotificationRequestBody.safeParse(requestBody(spec, Date.now() + 60_000, spec.params, phone)).success,
      ).toBe(true);
    }
  });

  it('fresh keys are valid Idempotency-Keys of their event, all distinct', () => {
    const spec = specs.find((s) => s.freshKeys === true);
    if (spec === undefined) throw new Error('no fresh-key event');
    const keys = [1, 2, 3].map((n) => freshKey(spec, n));
    expect(new Set([spec.idempotencyKey, ...keys]).size).toBe(4);
    for (const key of keys) expect(IdempotencyKeyHeader.safeParse(key).success, key).toBe(true);
  });

  it('keeps every other value of an event as it was without the knobs', () => {
    const off = { ...DEFAULT_MIX, freshKeyProbability: 0, respellProbability: 0 };
    for (const [i, spec] of specs.entries()) {
      const { freshKeys: _f, spellings: _s, ...rest } = spec;
      expect(eventSpec(1, i, off)).toEqual(rest);
    }
  });
});

describe('chaos pumping: bursts to one number in every spelling', () => {
  it('spells each burst number several ways, one burst to France with its trunk prefix', () => {
    const bursts = pumpingEvents(1).filter((e) => e.group === 'burst');
    const byTarget = new Map<string, string[]>();
    for (const e of bursts)
      byTarget.set(e.target, [...(byTarget.get(e.target) ?? []), spellingFor(e.spec, 0)]);
    for (const spellings of byTarget.values()) {
      expect(new Set(spellings).size).toBeGreaterThan(3);
      expect(new Set(spellings.map((s) => realNumber(s)?.e164)).size).toBe(1);
    }
    expect(bursts.some((e) => e.country === 'FR' && spellingFor(e.spec, 0).startsWith('+330'))).toBe(true);
  });
});
