/**
 * Destination and country budgets (docs/design.md#abuse-limits): how many commands may be admitted per
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

/** One window of one counter: the attribute that counts it, its budget and when it ends. */
export interface BudgetTally {
  /** `n_15m_<bucket>`: the window's length and bucket number, so a new window counts from zero. */
  readonly attribute: string;
  readonly limit: number;
  /** When this window ends: it frees up then (Retry-After). */
  readonly windowEndsAt: EpochMs;
}

/**
 * One counter item an admission increments. Windows that nest (15 minutes inside 24 hours: both
 * aligned to the epoch, one a multiple of the other) share an item, one attribute each, so the
 * default budgets cost one extra item in the admission transaction, not two.
 */
export interface BudgetCounter {
  /** `LIMIT#dst#<fingerprint>#24h#<bucket>` or `LIMIT#cc#<country>#1h#<bucket>`: never a phone number. */
  readonly key: string;
  readonly scope: 'destination' | 'country';
  readonly tallies: readonly BudgetTally[];
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
export function parseDestinationLimits(raw: string, name = 'destination limits'): RateWindow[] {
  if (raw.trim().toLowerCase() === 'off') return [];
  return entries(raw).map((entry) => parseWindow(name, entry));
}

/** Parses `COUNTRY_LIMITS` (`US:500/1h,GB:50/1h` or `100/1h` for every country; `off` or empty = none). */
export function parseCountryLimits(raw: string, name = 'country limits'): CountryLimit[] {
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
  const out = grouped(policy.destination).map((windows) =>
    counterOf('destination', `dst#${destinationFingerprint}`, windows, now),
  );
  if (country !== undefined) {
    const own = policy.country.filter((w) => w.country === country);
    const applicable = own.length > 0 ? own : policy.country.filter((w) => w.country === undefined);
    out.push(...grouped(applicable).map((windows) => counterOf('country', `cc#${country}`, windows, now)));
  }
  return out;
}

/** Windows grouped under the longest one they nest in (its length a multiple of theirs). */
function grouped(windows: readonly RateWindow[]): RateWindow[][] {
  const groups: RateWindow[][] = [];
  for (const w of [...windows].sort((a, b) => b.windowMs - a.windowMs)) {
    const home = groups.find((g) => (g[0] as RateWindow).windowMs % w.windowMs === 0);
    if (home) home.push(w);
    else groups.push([w]);
  }
  return groups;
}

function counterOf(
  scope: BudgetCounter['scope'],
  subject: string,
  windows: readonly RateWindow[],
  now: EpochMs,
): BudgetCounter {
  const head = windows[0] as RateWindow;
  const tallies = windows.map((w) => {
    const bucket = Math.floor(now / w.windowMs);
    return { attribute: `n_${w.label}_${bucket}`, limit: w.limit, windowEndsAt: (bucket + 1) * w.windowMs };
  });
  return { key: `LIMIT#${subject}#${head.label}#${Math.floor(now / head.windowMs)}`, scope, tallies };
}

/**
 * When a refused admission may succeed: the latest end among the windows that are full (`counts`
 * holds the counter's attributes as stored); every window of the counter when they are unknown.
 */
export function freesAt(
  counter: BudgetCounter,
  counts: Readonly<Record<string, unknown>> | undefined,
): EpochMs {
  const full = counter.tallies.filter(
    (t) => counts === undefined || Number(counts[t.attribute] ?? 0) >= t.limit,
  );
  return Math.max(...(full.length > 0 ? full : counter.tallies).map((t) => t.windowEndsAt));
}

/** Whole seconds from `now` until `freeAt` (at least 1): the `Retry-After` value. */
export function retryAfterSeconds(freeAt: EpochMs, now: EpochMs): number {
  return Math.max(1, Math.ceil((freeAt - now) / 1000));
}
