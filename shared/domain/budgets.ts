/**
 * Destination and country budgets (docs/abuse-limits.md#budgets): how many commands may be admitted per
 * subject per window. Pure: parsing the settings, naming the items an admission must update and
 * deciding from their contents. The store enforces them atomically with the admission write.
 *
 * A destination's budgets are sliding windows over its admission log (at most 3 in any 15
 * minutes, not 3 per clock quarter-hour); country budgets are fixed clock windows (a cost cap
 * over many numbers: a log of thousands of entries per admission would cost more than it saves).
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

/** One fixed window of one counter: the attribute that counts it, its budget and when it ends. */
export interface BudgetTally {
  /** `n_15m_<bucket>`: the window's length and bucket number, so a new window counts from zero. */
  readonly attribute: string;
  readonly limit: number;
  /** When this window ends: it frees up then (Retry-After). */
  readonly windowEndsAt: EpochMs;
}

/**
 * One fixed-window counter item an admission increments. Windows that nest (1 hour inside 24
 * hours: both aligned to the epoch, one a multiple of the other) share an item, one attribute
 * each. `kind` absent means this kind.
 */
export interface WindowCounter {
  readonly kind?: 'windows';
  /** `LIMIT#cc#<country>#1h#<bucket>`: never a phone number. */
  readonly key: string;
  readonly scope: 'destination' | 'country';
  readonly tallies: readonly BudgetTally[];
}

/**
 * One subject's admission log, newest first: the times of its latest admissions, so every
 * window is a sliding one. An admission is allowed when, for every window, fewer than `limit`
 * entries are younger than `windowMs`: the `limit`-th newest entry (index `limit - 1`) is absent
 * or at least `windowMs` old. The admission adds `at` in front. Only the first `keep` entries
 * (the largest limit) can ever matter; the list may grow to `compactAt`, then the writer rewrites
 * it to its `keep` newest (see {@link compactedLog}), so a hot number's item stays small.
 */
export interface AdmissionLog {
  readonly kind: 'log';
  /** `LIMIT#dst#<fingerprint>`: one item per number, never the number itself. */
  readonly key: string;
  readonly scope: 'destination' | 'country';
  /** The attribute holding the list of admission times (epoch ms). */
  readonly attribute: string;
  /** This admission's time: the entry it adds, and the end of every window it checks. */
  readonly at: EpochMs;
  readonly windows: readonly RateWindow[];
  readonly keep: number;
  readonly compactAt: number;
}

/** An item an admission updates: a destination's log or a country's fixed windows. */
export type BudgetCounter = WindowCounter | AdmissionLog;

/** The attribute of a destination's admission log. */
export const ADMISSION_LOG_ATTRIBUTE = 'admitted_at';

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
 * The items an admission to `destinationFingerprint` (in `country`, when known) must update at
 * `now`: the number's admission log (its sliding windows) and the country's fixed-window
 * counters. A country with budgets of its own uses those, others the catch-all ones.
 */
export function budgetCounters(
  policy: BudgetPolicy,
  destinationFingerprint: string,
  country: string | undefined,
  now: EpochMs,
): BudgetCounter[] {
  const out: BudgetCounter[] = [];
  if (policy.destination.length > 0) {
    const keep = Math.max(...policy.destination.map((w) => w.limit));
    out.push({
      kind: 'log',
      key: `LIMIT#dst#${destinationFingerprint}`,
      scope: 'destination',
      attribute: ADMISSION_LOG_ATTRIBUTE,
      at: now,
      windows: policy.destination,
      keep,
      compactAt: 2 * keep,
    });
  }
  if (country !== undefined) {
    const own = policy.country.filter((w) => w.country === country);
    const applicable = own.length > 0 ? own : policy.country.filter((w) => w.country === undefined);
    out.push(...grouped(applicable).map((windows) => counterOf('country', `cc#${country}`, windows, now)));
  }
  return out;
}

/** The admission times a stored log holds, newest first (anything else in the list is ignored). */
export function storedLog(stored: Readonly<Record<string, unknown>> | undefined, counter: AdmissionLog) {
  const value = stored?.[counter.attribute];
  return Array.isArray(value) ? value.filter((t): t is number => typeof t === 'number') : [];
}

/** The windows of `counter` that `log` leaves no room in (each with the time it frees up). */
function fullWindows(counter: AdmissionLog, log: readonly number[]) {
  return counter.windows.flatMap((w) => {
    const oldestCounted = log[w.limit - 1];
    return oldestCounted !== undefined && oldestCounted > counter.at - w.windowMs
      ? [{ window: w, freesAt: oldestCounted + w.windowMs }]
      : [];
  });
}

/** Whether `log` (newest first) leaves room for one more admission at `counter.at` in every window. */
export function logAdmits(counter: AdmissionLog, log: readonly number[]): boolean {
  return fullWindows(counter, log).length === 0;
}

/** Whether a counter item as stored (`undefined`: none yet) has room for this admission in every window. */
export function hasRoom(
  counter: BudgetCounter,
  stored: Readonly<Record<string, unknown>> | undefined,
): boolean {
  if (counter.kind === 'log') return logAdmits(counter, storedLog(stored, counter));
  return counter.tallies.every((t) => Number(stored?.[t.attribute] ?? 0) < t.limit);
}

/** The log after this admission, cut to the entries that can still matter (see {@link AdmissionLog}). */
export function compactedLog(counter: AdmissionLog, log: readonly number[]): number[] {
  return [counter.at, ...log.slice(0, counter.keep - 1)];
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
): WindowCounter {
  const head = windows[0] as RateWindow;
  const tallies = windows.map((w) => {
    const bucket = Math.floor(now / w.windowMs);
    return { attribute: `n_${w.label}_${bucket}`, limit: w.limit, windowEndsAt: (bucket + 1) * w.windowMs };
  });
  return { key: `LIMIT#${subject}#${head.label}#${Math.floor(now / head.windowMs)}`, scope, tallies };
}

/**
 * When a refused admission may succeed, from the counter item as stored (`undefined`: unknown).
 * A log frees up when the oldest entry each full window counts leaves it; fixed windows at the
 * latest end among the full ones. Unknown contents: every window's longest wait.
 */
export function freesAt(
  counter: BudgetCounter,
  stored: Readonly<Record<string, unknown>> | undefined,
): EpochMs {
  if (counter.kind === 'log') {
    const full = stored === undefined ? [] : fullWindows(counter, storedLog(stored, counter));
    if (full.length === 0) return counter.at + Math.max(...counter.windows.map((w) => w.windowMs));
    return Math.max(...full.map((f) => f.freesAt));
  }
  const full = counter.tallies.filter(
    (t) => stored === undefined || Number(stored[t.attribute] ?? 0) >= t.limit,
  );
  return Math.max(...(full.length > 0 ? full : counter.tallies).map((t) => t.windowEndsAt));
}

/** When nothing in the counter's item can matter any more (its TTL follows from this). */
export function counterExpiresAt(counter: BudgetCounter): EpochMs {
  return counter.kind === 'log'
    ? counter.at + Math.max(...counter.windows.map((w) => w.windowMs))
    : Math.max(...counter.tallies.map((t) => t.windowEndsAt));
}

/** Whole seconds from `now` until `freeAt` (at least 1): the `Retry-After` value. */
export function retryAfterSeconds(freeAt: EpochMs, now: EpochMs): number {
  return Math.max(1, Math.ceil((freeAt - now) / 1000));
}
