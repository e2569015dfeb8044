import { describe, expect, it } from 'vitest';
import { createLeakDetector } from '../../../scripts/chaos/invariants.js';
import { createPhoneMatcher, phoneDigitSpellings } from '../../../scripts/chaos/phone-spellings.js';
import { CODE, PHONE, URL_SECRET } from './fixtures.js';

const FRENCH = '+33612345678';

/** The privacy scan's detector for the fixtures' secrets and a French mobile. */
const detect = createLeakDetector({ phones: [PHONE, FRENCH], codes: [CODE], urls: [URL_SECRET] });

describe('chaos privacy scan: every spelling of a number it used (issue 25 item 12)', () => {
  it.each([
    ['E.164', 'to=+14155550123'],
    ['E.164 without +', '"to":"14155550123"'],
    ['the US national form', 'called (415) 555-0123 twice'],
    ['dashes', 'phone 415-555-0123'],
    ['dots', 'phone 415.555.0123'],
    ['spaces', 'phone 415 555 0123'],
    ['international, formatted', '"to":"+1 415-555-0123"'],
    ['international with a trunk prefix', 'to +1 1 415 555 0123'],
    ['the 011 dialling prefix', 'dialled 011 1 415 555 0123'],
    ['percent-encoded spaces', 'To=%2B1%20415%20555%200123&Body=x'],
    ['a no-break space', 'phone 415\u00a0555\u00a00123'],
    ['the French national form', 'appel 06 12 34 56 78'],
    ['French, international', '+33 6 12 34 56 78'],
    ['French, the trunk prefix kept', '+330612345678'],
    ['French, (0) written out', '+33 (0)6 12 34 56 78'],
    ['French, the 00 dialling prefix', '0033 6 12 34 56 78'],
  ])('finds %s', (_spelling, text) => {
    expect(detect(text)).toBe('phone number');
  });

  it.each([
    ['another number', 'call (415) 555-0199'],
    ['the digits glued to other digits', 'ts=17646720004155550123'],
    ['a timestamp and an id', '{"at":1764672000123,"seq":4,"id":"SM4155550124"}'],
    ['a date', '2026-12-02 10:15:00'],
    ['a part of the number only', '555-0123'],
  ])('does not flag %s', (_what, text) => {
    expect(detect(text)).toBeUndefined();
  });

  it('spells a number in each of its forms, once', () => {
    expect(phoneDigitSpellings(FRENCH).sort()).toEqual(
      [
        '612345678',
        '0612345678',
        '33612345678',
        '330612345678',
        '0033612345678',
        '00330612345678',
        '01133612345678',
        '011330612345678',
      ].sort(),
    );
  });

  it('a matcher for no numbers finds nothing', () => {
    expect(createPhoneMatcher([])('(415) 555-0123')).toBe(false);
  });
});
