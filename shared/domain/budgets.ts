/**
 * Destination and country budgets (DESIGN.md section 9): how many commands may be admitted per
 * subject per window. Pure: parsing the settings and naming the fixed-window counters an admission
 * must increment. The store enforces them atomically with the admission write.
 */
import { InvalidConfigurationError } from './errors.js';
import type { EpochMs } from './notification.js';

/** At most `limit` admissions per `windowMs`; `label` is the setting's spelling (`15m`), used in counter keys. */
export interface RateWindow {
  readonly limit: number;
  readonly windowMs: number;
  readonly label: string;
}

/** A per-country budget; `country` absent = every country without a budget of its own. */
export interface CountryLimit extends RateWindow {
  readonly country?: string;
}

/** The budgets a deployment enforces; empty lists = off. */
export interface BudgetPolicy {
  readonly destination: readonly RateWindow[];
  readonly country: readonly CountryLimit[];
}

/** What `DESTINATION_LIMITS` defaults to. */
export const DEFAULT_DESTINATION_LIMITS = '3/15m,10/24h';

/** No budgets at all. */
export const NO_BUDGETS: BudgetPolicy = { destination: [], country: [] };

/**
 * One counter an admission increments: a fixed window of one subject. The key holds the window's
 * bucket number, so a new window starts a fresh item and the old one expires by TTL.
 */
export interface BudgetCounter {
  /** `LIMIT#dst#<fingerprint>#15m#<bucket>` or `LIMIT#cc#<country>#1h#<bucket>`: never a phone number. */
  readonly key: string;
  readonly scope: 'destination' | 'country';
  readonly limit: number;
  /** When this window ends: the counter frees up then (Retry-After) and may be deleted after. */
  readonly windowEndsAt: EpochMs;
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function parseWindow(name: string, entry: string): RateWindow {
  const match = /^(\d+)\/(\d+)(s|m|h|d)$/.exec(entry);
  const limit = Number(match?.[1]);
  const windowMs = Number(match?.[2]) * (UNIT_MS[match?.[3] ?? ''] ?? Number.NaN);
  if (!match || !Number.isInteger(limit) || limit < 1 || !(windowMs >= 1_000)) {
    throw new InvalidConfigurationError(
      `${name}: "${entry}" is not a budget like 3/15m (count/window, units s, m, h, d)`,
    );
  }
  return { limit, windowMs, label: `${match[2]}${match[3]}` };
}

const entries = (raw: string) =>
  raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);

/** Parses `DESTINATION_LIMITS` (`3/15m,10/24h`; `off` or empty = none). */
export function parseDestinationLimits(raw: string, name = 'DESTINATION_LIMITS'): RateWindow[] {
  if (raw.trim().toLowerCase() === 'off') return [];
  return entries(raw).map((entry) => parseWindow(name, entry));
}

/** Parses `COUNTRY_LIMITS` (`US:500/1h,GB:50/1h` or `100/1h` for every country; `off` or empty = none). */
export function parseCountryLimits(raw: string, name = 'COUNTRY_LIMITS'): CountryLimit[] {
  if (raw.trim().toLowerCase() === 'off') return [];
  return entries(raw).map((entry) => {
    const match = /^([A-Za-z]{2}):(.+)$/.exec(entry);
    if (!match) return parseWindow(name, entry);
    return { ...parseWindow(name, match[2] ?? ''), country: (match[1] ?? '').toUpperCase() };
  });
}

/**
 * The counters an admission to `destinationFingerprint` (in `country`, when known) must
 * increment at `now`. A country with budgets of its own uses those, others the catch-all ones.
 */
export function budgetCounters(
  policy: BudgetPolicy,
  destinationFingerprint: string,
  country: string | undefined,
  now: EpochMs,
): BudgetCounter[] {
  const counter = (scope: BudgetCounter['scope'], subject: string, window: RateWindow): BudgetCounter => {
    const bucket = Math.floor(now / window.windowMs);
    const tag = scope === 'destination' ? 'dst' : 'cc';
    return {
      key: `LIMIT#${tag}#${subject}#${window.label}#${bucket}`,
      scope,
      limit: window.limit,
      windowEndsAt: (bucket + 1) * window.windowMs,
    };
  };
  const out = policy.destination.map((w) => counter('destination', destinationFingerprint, w));
  if (country !== undefined) {
    const own = policy.country.filter((w) => w.country === country);
    const applicable = own.length > 0 ? own : policy.country.filter((w) => w.country === undefined);
    out.push(...applicable.map((w) => counter('country', country, w)));
  }
  return out;
}

/** Whole seconds from `now` until `counter`'s window frees up (at least 1): the `Retry-After` value. */
export function retryAfterSeconds(counter: Pick<BudgetCounter, 'windowEndsAt'>, now: EpochMs): number {
  return Math.max(1, Math.ceil((counter.windowEndsAt - now) / 1000));
}
