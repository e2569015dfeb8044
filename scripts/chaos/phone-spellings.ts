/**
 * The privacy scan's phone matcher: finds a number in any of the ways it is written, not only its
 * E.164 digits. `+14155550123`, `+1 415-555-0123`, `(415) 555-0123`, `415.555.0123`,
 * `0033 6 12 34 56 78`, `06 12 34 56 78` and `+33 (0)6 12 34 56 78` are all found.
 *
 * A text is cut into runs of digit groups joined by separators (spaces, no-break spaces, hyphens
 * and dashes, dots, slashes, parentheses); every span of whole groups is looked up in one set of
 * each number's digit strings: the national significant number, the national form (trunk prefix
 * kept), each after the country code, and after the `00` and `011` dialling prefixes. A span of
 * whole groups, because that is how a number is written: digits glued to another number's digits
 * (a timestamp, an id) are not a spelling of it. Cost: a few set lookups per run, whatever the
 * number of secrets.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** Digit groups joined by separators, optionally after a `+`. */
const GROUPED_DIGITS = /\+?\d+(?:[\s\u00a0\u2010-\u2015().\-/]+\d+)*/g;
const SEPARATORS = /[^\d]+/;
/** Longest span looked at: an E.164 number after a 3-digit dialling prefix, with a trunk prefix. */
const MAX_SPAN_DIGITS = 20;

/** Every digit string `e164` is written as (see the module comment). */
export function phoneDigitSpellings(e164: string): string[] {
  const digits = e164.replace(/\D/g, '');
  const parsed = parsePhoneNumberFromString(e164);
  if (parsed === undefined) return [digits];
  const cc = parsed.countryCallingCode;
  const nsn = parsed.nationalNumber;
  const national = parsed.formatNational().replace(/\D/g, '');
  const forms = new Set([nsn, national, `${cc}${nsn}`, `${cc}${national}`, digits]);
  for (const idd of ['00', '011'])
    for (const form of [`${cc}${nsn}`, `${cc}${national}`]) forms.add(`${idd}${form}`);
  return [...forms];
}

/** A matcher telling whether a text holds any spelling of any of `phones`. */
export function createPhoneMatcher(phones: Iterable<string>): (text: string) => boolean {
  const spellings = new Set<string>();
  for (const phone of phones) for (const s of phoneDigitSpellings(phone)) spellings.add(s);
  return (text) => {
    for (const [run] of text.matchAll(GROUPED_DIGITS)) {
      const groups = run.split(SEPARATORS).filter(Boolean);
      for (let first = 0; first < groups.length; first++) {
        let span = '';
        for (let last = first; last < groups.length; last++) {
          span += groups[last];
          if (span.length > MAX_SPAN_DIGITS) break;
          if (spellings.has(span)) return true;
        }
      }
    }
    return false;
  };
}
