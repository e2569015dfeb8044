/**
 * One number, one spelling (docs/abuse-limits.md#one-number-one-spelling). The API takes a
 * number in international form and turns it into its canonical E.164 form before anything else
 * sees it: the destination rules, the budgets, the fingerprints, the sealed payload and the
 * provider's `To` all get `+33612345678`, whether the caller wrote that, `+330612345678` (the
 * national trunk prefix kept after the country code), or `+33 6 12 34 56 78`.
 *
 * What is normalised, by libphonenumber's full metadata: visual separators (E.123: spaces,
 * hyphens, dots, parentheses), a national trunk prefix after the country code (`0` in FR, GB,
 * DE, AU, CN, AE; `8` in RU; `06` in HU; `0` and the mobile `15` in AR, which becomes `9`), and
 * only where the metadata says the prefix is not part of the number (Italy's leading `0` is kept).
 * What is refused: anything ambiguous or not a number by itself. No leading `+` (a national form
 * or an `00`/`011` dialling prefix depends on where it is dialled from), letters (extensions,
 * vanity numbers), other characters (full-width digits, invisible or bidi characters), and
 * numbers libphonenumber does not consider valid.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** Longest accepted spelling: 15 digits, a trunk prefix and E.123 separators fit with room. */
export const MAX_PHONE_CHARS = 32;

/** `+`, then digits and the separators E.123 allows; nothing else (no letters: no extensions). */
const INTERNATIONAL_SPELLING = /^\+[0-9][0-9 ().-]*$/;

/** The field error for a number in another form than international. */
export const PHONE_FORM_MESSAGE =
  'must be an international number: + and the country code, then digits (spaces, hyphens, dots and parentheses allowed), such as +14155550123';
/** The field error for a number of the right form that is not a valid number. */
export const PHONE_INVALID_MESSAGE = 'is not a valid phone number';

/** The canonical E.164 form of a number, or why the spelling is refused (never echoing it). */
export type CanonicalPhone =
  | { readonly kind: 'canonical'; readonly e164: string }
  | { readonly kind: 'refused'; readonly message: string };

/**
 * The canonical E.164 form (`+` and at most 15 digits, no trunk prefix) of a number spelled in
 * international form; every spelling of one number gives the same string.
 */
export function canonicalPhone(spelling: string): CanonicalPhone {
  if (spelling.length > MAX_PHONE_CHARS || !INTERNATIONAL_SPELLING.test(spelling)) {
    return { kind: 'refused', message: PHONE_FORM_MESSAGE };
  }
  const parsed = parsePhoneNumberFromString(spelling);
  if (parsed === undefined || !parsed.isValid() || parsed.ext !== undefined) {
    return { kind: 'refused', message: PHONE_INVALID_MESSAGE };
  }
  return { kind: 'canonical', e164: parsed.number };
}
