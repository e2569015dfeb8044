import fc from 'fast-check';
import { getCountries, getExampleNumber, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { describe, expect, it } from 'vitest';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import {
  canonicalPhone,
  MAX_PHONE_CHARS,
  PHONE_FORM_MESSAGE,
  PHONE_INVALID_MESSAGE,
} from '../../../shared/http/phone.js';
import { NotificationRequestBody } from '../../../shared/http/request-schema.js';

const fingerprinter = createFingerprinter(Buffer.alloc(32, 7));

function aBody(phone: string) {
  return {
    event_id: 'evt-1',
    channel: 'sms',
    template: 'password_reset',
    destination: { phone },
    expires_at: '2026-11-29T23:10:00Z',
    params: { code: '483920' },
  };
}

/** What the API makes of a spelling: its canonical number and the fingerprints stored for it. */
function admitted(spelling: string) {
  const parsed = NotificationRequestBody.safeParse(aBody(spelling));
  if (!parsed.success) return undefined;
  const phone = parsed.data.destination.phone;
  return { phone, fingerprint: fingerprinter.destination(phone) };
}

describe('canonicalPhone: one number, one spelling', () => {
  // The issue's countries: the canonical mobile, and the spellings a caller may send for it.
  it.each([
    [
      'FR',
      '+33612345678',
      ['+330612345678', '+33 6 12 34 56 78', '+33 06 12 34 56 78', '+33 (0)6 12 34 56 78'],
    ],
    ['GB', '+447400123456', ['+4407400123456', '+44 7400 123456', '+44 (0) 7400 123456', '+44-7400-123-456']],
    [
      'DE',
      '+4915123456789',
      ['+4901512 3456789', '+49 (0)1512 3456789', '+49 1512 3456789', '+49.1512.3456789'],
    ],
    ['AU', '+61412345678', ['+610412345678', '+61 412 345 678', '+61 (0)4 1234 5678']],
    ['CN', '+8613123456789', ['+86013123456789', '+86 131 2345 6789', '+86 0 131 2345 6789']],
    ['RU', '+79123456789', ['+789123456789', '+7 8 (912) 345-67-89', '+7 912 345 67 89']],
    ['AE', '+971501234567', ['+9710501234567', '+971 50 123 4567', '+971 0 50 123 4567']],
    ['HU', '+36201234567', ['+3606201234567', '+36 06 20 123 4567', '+36 20 123 4567']],
    [
      'AR',
      '+5491123456789',
      ['+54 9 11 2345 6789', '+540111523456789', '+54 011 15-2345-6789', '+54 11 15 2345 6789'],
    ],
    [
      'US',
      '+14155550123',
      ['+1 (415) 555-0123', '+1 415 555 0123', '+1-415-555-0123', '+1.415.555.0123', '+114155550123'],
    ],
  ])('%s: every spelling of %s is that number', (_country, canonical, spellings) => {
    // Act
    const results = [canonical, ...spellings].map(canonicalPhone);
    // Assess
    for (const result of results) expect(result).toEqual({ kind: 'canonical', e164: canonical });
  });

  it("keeps a leading zero that is part of the number (Italy's fixed lines)", () => {
    expect(canonicalPhone('+39 06 1234 5678')).toEqual({ kind: 'canonical', e164: '+390612345678' });
  });

  it.each([
    ['a national form (no country code)', '0612345678', PHONE_FORM_MESSAGE],
    ['an international dialling prefix instead of +', '0033612345678', PHONE_FORM_MESSAGE],
    ['the US dialling prefix', '01133612345678', PHONE_FORM_MESSAGE],
    ['digits without +', '33612345678', PHONE_FORM_MESSAGE],
    ['an extension', '+1 415 555 0123 ext. 5', PHONE_FORM_MESSAGE],
    ['an extension (RFC 3966)', '+1 415 555 0123;ext=5', PHONE_FORM_MESSAGE],
    ['vanity letters', '+1 800 FLOWERS', PHONE_FORM_MESSAGE],
    ['full-width digits', '＋１４１５５５５０１２３', PHONE_FORM_MESSAGE],
    ['a bidi override', '\u202e+14155550123', PHONE_FORM_MESSAGE],
    ['a zero-width space', '+1415\u200b5550123', PHONE_FORM_MESSAGE],
    ['a space after +', '+ 1 415 555 0123', PHONE_FORM_MESSAGE],
    ['a separator first', '+(1) 415 555 0123', PHONE_FORM_MESSAGE],
    ['a tab', '+1\t415 555 0123', PHONE_FORM_MESSAGE],
    ['too long a spelling', `+1 415 555 0123${' '.repeat(MAX_PHONE_CHARS)}`, PHONE_FORM_MESSAGE],
    ['the empty string', '', PHONE_FORM_MESSAGE],
    ['a short number', '+1999', PHONE_INVALID_MESSAGE],
    ['a digit too many', '+141555501234', PHONE_INVALID_MESSAGE],
    ['a country code starting with 0', '+0123456789', PHONE_INVALID_MESSAGE],
    ["Mexico's abolished mobile 1", '+52 1 222 123 4567', PHONE_INVALID_MESSAGE],
  ])('refuses %s', (_what, spelling, message) => {
    expect(canonicalPhone(spelling)).toEqual({ kind: 'refused', message });
  });

  it('the schema answers a refused spelling with a field error that does not echo it', () => {
    // Act
    const parsed = NotificationRequestBody.safeParse(aBody('+330612345678 ext. 9'));
    // Assess
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['destination.phone', PHONE_FORM_MESSAGE],
    ]);
  });
});

/** Every region's example mobile, as the metadata gives it. */
const EXAMPLES = getCountries().flatMap((region) => {
  const example = getExampleNumber(region, examples);
  return example ? [example] : [];
});

/** A valid number near a region's example: its last digits replaced (kept when still valid). */
const aValidNumber = fc
  .tuple(fc.constantFrom(...EXAMPLES), fc.integer({ min: 0, max: 9999 }))
  .map(([example, tail]) => {
    const digits = example.number.slice(0, -4) + String(tail).padStart(4, '0');
    return parsePhoneNumberFromString(digits);
  })
  .filter((n) => n?.isValid() === true && n.number.length <= 16)
  .map((n) => n as NonNullable<typeof n>);

const SEPARATORS = ['', '', '', ' ', '-', '.', ' (', ') '] as const;

/** `+`, then the digits of `text` with a random E.123 separator after each digit. */
function respaced(text: string, picks: readonly number[]): string {
  const digits = text.replace(/\D/g, '');
  const spaced = [...digits]
    .map((d, i) => `${d}${i < digits.length - 1 ? SEPARATORS[(picks[i] ?? 0) % SEPARATORS.length] : ''}`)
    .join('');
  return `+${spaced}`;
}

describe('canonicalPhone properties (fast-check, every region)', () => {
  it('every spelling of one number maps to one canonical form and one fingerprint', () => {
    fc.assert(
      fc.property(aValidNumber, fc.array(fc.nat(), { minLength: 20, maxLength: 20 }), (number, picks) => {
        // Prepare: the E.164 form, the international format, the national format after the country
        // code (trunk prefix kept), and the digits of each with random separators.
        const national = `+${number.countryCallingCode} ${number.formatNational()}`;
        const spellings = [
          number.number,
          number.formatInternational(),
          national,
          respaced(number.number, picks),
          `+${number.countryCallingCode}${respaced(national.slice(1 + number.countryCallingCode.length), picks).slice(1)}`,
        ].filter((s) => s.length <= MAX_PHONE_CHARS);
        // Act
        const results = spellings.map(admitted);
        // Assess
        const expected = { phone: number.number, fingerprint: fingerprinter.destination(number.number) };
        for (const result of results) expect(result).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('the canonical form is a fixed point: canonicalising it again changes nothing', () => {
    fc.assert(
      fc.property(aValidNumber, (number) => {
        expect(canonicalPhone(number.number)).toEqual({ kind: 'canonical', e164: number.number });
      }),
    );
  });

  it('never throws, and anything accepted is E.164 (+ and at most 15 digits) and valid', () => {
    const unit = fc.constantFrom(...'+0123456789 ().-x#*;=ext\u00a0\u200b０');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit, maxLength: 40 }), fc.string({ maxLength: 40 })), (spelling) => {
        const result = canonicalPhone(spelling);
        if (result.kind === 'canonical') {
          expect(result.e164).toMatch(/^\+[1-9]\d{6,14}$/);
          expect(parsePhoneNumberFromString(result.e164)?.isValid()).toBe(true);
          expect(spelling).toMatch(/^\+[0-9][0-9 ().-]*$/);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
