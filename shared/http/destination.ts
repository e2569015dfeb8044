/**
 * Which destinations a deployment sends to (docs/design.md#abuse-limits): number types from libphonenumber's
 * full ("max") metadata, so premium rate, shared cost and the like are told apart from mobiles,
 * and countries by the number's region, not its dialling prefix (`+1` spans the whole NANP).
 */
import { type NumberType, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { InvalidConfigurationError } from '../domain/errors.js';

/** Every type libphonenumber can report, plus `UNKNOWN` for a number it cannot classify. */
export const NUMBER_TYPES = [
  'MOBILE',
  'FIXED_LINE',
  'FIXED_LINE_OR_MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
  'UNKNOWN',
] as const;
export type DestinationNumberType = (typeof NUMBER_TYPES)[number];

/** What `ALLOWED_NUMBER_TYPES` defaults to: numbers that can receive an SMS and cost the normal rate. */
export const DEFAULT_ALLOWED_NUMBER_TYPES: readonly DestinationNumberType[] = [
  'MOBILE',
  'FIXED_LINE_OR_MOBILE',
];

/** The destination rules of a deployment. An empty list allows everything of that kind. */
export interface DestinationPolicy {
  /** Number types sent to; a number of another type is refused. */
  readonly allowedNumberTypes: readonly DestinationNumberType[];
  /** ISO 3166 alpha-2 region codes; empty = any region. */
  readonly allowedCountries: readonly string[];
  /** The legacy E.164 prefix allow-list (`ALLOWED_DESTINATION_PREFIXES`); empty = any. */
  readonly allowedPrefixes: readonly string[];
}

/** Allows every valid number: what a deployment without destination rules does. */
export const ANY_DESTINATION: DestinationPolicy = {
  allowedNumberTypes: [],
  allowedCountries: [],
  allowedPrefixes: [],
};

/** Why a destination is refused (no number in it: safe to log and to count). */
export type RefusalReason = 'number_type' | 'country' | 'non_geographic' | 'prefix';

/** The verdict on a destination; `country` is the number's region (counted per country by budgets). */
export type DestinationVerdict =
  | { readonly kind: 'allowed'; readonly country: string | undefined; readonly type: DestinationNumberType }
  | {
      readonly kind: 'not_allowed';
      readonly reason: RefusalReason;
      readonly type: DestinationNumberType;
      readonly country: string | undefined;
    };

/** Region and type of an E.164 number; `country` is undefined for non-geographic (satellite, +800...) numbers. */
export function classifyNumber(e164: string): { country: string | undefined; type: DestinationNumberType } {
  const parsed = parsePhoneNumberFromString(e164);
  const type: NumberType = parsed?.isValid() ? parsed.getType() : undefined;
  return { country: parsed?.country, type: (type ?? 'UNKNOWN') as DestinationNumberType };
}

/** Checks a (syntactically valid) E.164 number against the policy. */
export function checkDestination(e164: string, policy: DestinationPolicy): DestinationVerdict {
  const { country, type } = classifyNumber(e164);
  const refuse = (reason: RefusalReason): DestinationVerdict => ({
    kind: 'not_allowed',
    reason,
    type,
    country,
  });
  if (policy.allowedPrefixes.length > 0 && !policy.allowedPrefixes.some((p) => e164.startsWith(p))) {
    return refuse('prefix');
  }
  if (policy.allowedNumberTypes.length > 0) {
    // Satellite and other non-geographic numbers (+870, +881, +882, ...) are billed at premium rates.
    if (country === undefined) return refuse('non_geographic');
    if (!policy.allowedNumberTypes.includes(type)) return refuse('number_type');
  }
  if (
    policy.allowedCountries.length > 0 &&
    (country === undefined || !policy.allowedCountries.includes(country))
  ) {
    return refuse('country');
  }
  return { kind: 'allowed', country, type };
}

/** Parses `ALLOWED_NUMBER_TYPES` (comma-separated; `any` = every type). */
export function parseNumberTypes(raw: string, name = 'number types'): DestinationNumberType[] {
  const items = raw
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  if (items.length === 1 && items[0] === 'ANY') return [];
  for (const item of items) {
    if (!(NUMBER_TYPES as readonly string[]).includes(item)) {
      throw new InvalidConfigurationError(
        `${name}: "${item}" is not one of ${NUMBER_TYPES.join(', ')} or any`,
      );
    }
  }
  return items as DestinationNumberType[];
}

/** Parses `ALLOWED_DESTINATION_COUNTRIES` (ISO 3166 alpha-2, comma-separated; empty = any). */
export function parseCountries(raw: string, name = 'destination countries'): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  for (const item of items) {
    if (!/^[A-Z]{2}$/.test(item))
      throw new InvalidConfigurationError(`${name}: "${item}" is not a region code like US`);
  }
  return items;
}
