/**
 * The provider circuit's rules, pure (issue 23 item 3, docs/providers/failover.md#circuit): what
 * the last window of sends says about a provider, when its circuit opens, when a probe is due,
 * and what a probe's sample does. The store keeps one circuit per provider, shared by every
 * sender (`adapters/dynamodb/provider-health.ts`); nothing here reads a clock.
 */
import type { EpochMs } from './notification.js';

/**
 * A circuit's state: `closed` sends normally; `open` sends nothing (the sender moves to the next
 * provider, which is safe: nothing left); `half_open` lets one probe send through to see whether
 * the provider is back.
 */
export type CircuitState = 'closed' | 'open' | 'half_open';

/** What one send told us about the provider's health (never about the destination). */
export type HealthSample =
  /** Accepted, or refused for a reason about the destination: the provider works. */
  | 'ok'
  /** Refused before acceptance for a reason about the provider (5xx, throttle, connection refused). */
  | 'error'
  /** The call's outcome is unknown (a timeout after the request left). */
  | 'unknown';

/** The circuit's thresholds (the `CIRCUIT_*` settings of `shared/settings.ts`). */
export interface CircuitSettings {
  /** The sliding window the rates are taken over. */
  readonly windowMs: number;
  /** No circuit opens on fewer samples than this in the window. */
  readonly minSamples: number;
  /** Opens when errors exceed this share of the window's samples (0-1). */
  readonly errorRate: number;
  /** Opens when unknown outcomes exceed this share of the window's samples (0-1). */
  readonly unknownRate: number;
  /** An open circuit lets a probe through after this long; an unanswered probe is replaced after it. */
  readonly probePeriodMs: number;
}

/**
 * Fixed buckets the window is cut into: the window slides one bucket at a time, so a sample
 * leaves it between `windowMs - windowMs / BUCKETS` and `windowMs` after it was taken. Ten keeps
 * the stored item small (one counter triple per bucket) and the slide within a tenth of the window.
 */
export const CIRCUIT_BUCKETS = 10;

/** The counts of one bucket, which holds the samples taken from `start` for one bucket's length. */
export interface CircuitBucket {
  readonly start: EpochMs;
  readonly ok: number;
  readonly error: number;
  readonly unknown: number;
}

/** One provider's circuit as stored. */
export interface Circuit {
  readonly state: CircuitState;
  /** Open since (`open`), or since the probe was let through (`half_open`); absent when closed. */
  readonly since?: EpochMs;
  /**
   * The circuit's last close (0: never): only buckets that started after it count, so the window
   * starts afresh, at the cost of the samples in the rest of the bucket it closed in.
   */
  readonly countFrom: EpochMs;
  /** The ring of buckets, at most {@link CIRCUIT_BUCKETS}; stale ones are ignored. */
  readonly buckets: readonly CircuitBucket[];
  /** Bumped by every state change: state changes are guarded by it, so concurrent senders agree. */
  readonly version: number;
}

/** A provider nobody recorded anything for yet. */
export const CLOSED_CIRCUIT: Circuit = { state: 'closed', countFrom: 0, buckets: [], version: 0 };

/** One bucket's length. */
export function bucketLengthMs(settings: CircuitSettings): number {
  return Math.max(1, Math.ceil(settings.windowMs / CIRCUIT_BUCKETS));
}

/** Where a sample taken at `at` is counted: the bucket's start and its slot in the ring. */
export function bucketOf(
  at: EpochMs,
  settings: CircuitSettings,
): { readonly start: EpochMs; readonly slot: number } {
  const length = bucketLengthMs(settings);
  const index = Math.floor(at / length);
  return { start: index * length, slot: ((index % CIRCUIT_BUCKETS) + CIRCUIT_BUCKETS) % CIRCUIT_BUCKETS };
}

/** The samples of the window that ends at `now`. */
export interface WindowTotals {
  readonly ok: number;
  readonly error: number;
  readonly unknown: number;
  readonly total: number;
}

/**
 * The window's counts at `now`: the buckets of the last {@link CIRCUIT_BUCKETS} bucket lengths,
 * `now`'s own included, that started after the circuit's last close.
 */
export function windowTotals(circuit: Circuit, now: EpochMs, settings: CircuitSettings): WindowTotals {
  const current = bucketOf(now, settings).start;
  const oldest = current - (CIRCUIT_BUCKETS - 1) * bucketLengthMs(settings);
  let ok = 0;
  let error = 0;
  let unknown = 0;
  for (const bucket of circuit.buckets) {
    if (bucket.start < oldest || bucket.start > current || bucket.start <= circuit.countFrom) continue;
    ok += bucket.ok;
    error += bucket.error;
    unknown += bucket.unknown;
  }
  return { ok, error, unknown, total: ok + error + unknown };
}

/** Why a window opens a circuit: too many errors, too many unknown outcomes, or neither. */
export function tripReason(
  totals: WindowTotals,
  settings: CircuitSettings,
): 'error_rate' | 'unknown_rate' | undefined {
  if (totals.total < settings.minSamples || totals.total === 0) return undefined;
  if (totals.error / totals.total > settings.errorRate) return 'error_rate';
  if (totals.unknown / totals.total > settings.unknownRate) return 'unknown_rate';
  return undefined;
}

/** A state change one sample or one probe asks for; applied by the store under the circuit's version. */
export type CircuitChange =
  | {
      readonly to: 'open';
      readonly since: EpochMs;
      readonly reason: 'error_rate' | 'unknown_rate' | 'probe_failed';
    }
  | { readonly to: 'closed'; readonly countFrom: EpochMs; readonly reason: 'probe_succeeded' }
  | { readonly to: 'half_open'; readonly since: EpochMs; readonly reason: 'probe_due' };

/**
 * What a sample taken at `now` does to `circuit`, which already counts it (the store adds it to
 * its bucket first and decides on what it read back):
 * - closed: opens when the window, with `minSamples` at least, is over either rate;
 * - half-open (a probe is out): `ok` closes, and the window starts afresh; anything else re-opens;
 * - open: nothing (sends that started before it opened still report back).
 */
export function afterSample(
  circuit: Circuit,
  sample: HealthSample,
  now: EpochMs,
  settings: CircuitSettings,
): CircuitChange | undefined {
  switch (circuit.state) {
    case 'closed': {
      const reason = tripReason(windowTotals(circuit, now, settings), settings);
      return reason === undefined ? undefined : { to: 'open', since: now, reason };
    }
    case 'half_open':
      return sample === 'ok'
        ? { to: 'closed', countFrom: now, reason: 'probe_succeeded' }
        : { to: 'open', since: now, reason: 'probe_failed' };
    case 'open':
      return undefined;
  }
}

/**
 * Whether a probe may be let through at `now`: the circuit has been open for the probe period, or
 * a probe was let through that long ago and never reported back (its sender died or timed out
 * without a sample), so another sender may try.
 */
export function probeDue(circuit: Circuit, now: EpochMs, settings: CircuitSettings): boolean {
  if (circuit.state === 'closed') return false;
  return now >= (circuit.since ?? 0) + settings.probePeriodMs;
}

/** The change that lets one probe through (the sender whose guarded write wins sends it). */
export function letProbeThrough(
  circuit: Circuit,
  now: EpochMs,
  settings: CircuitSettings,
): CircuitChange | undefined {
  return probeDue(circuit, now, settings) ? { to: 'half_open', since: now, reason: 'probe_due' } : undefined;
}

/**
 * The state an observer (status command, console, metric) reports at `now`: `half_open` once a
 * probe is due or out, as the circuit is then waiting on one probe, not refusing for good.
 */
export function observedState(circuit: Circuit, now: EpochMs, settings: CircuitSettings): CircuitState {
  if (circuit.state === 'open' && probeDue(circuit, now, settings)) return 'half_open';
  return circuit.state;
}

/**
 * The state a sender acts on at `now`, for a circuit it did not just let a probe through on:
 * closed sends; anything else does not (an open circuit, or a probe another sender holds). Only
 * the sender whose guarded write applied {@link letProbeThrough} sees `half_open`, once.
 */
export function senderState(circuit: Circuit): CircuitState {
  return circuit.state === 'closed' ? 'closed' : 'open';
}

/** `circuit` with `change` applied (the store's write, for implementations that keep it in memory). */
export function applyChange(circuit: Circuit, change: CircuitChange): Circuit {
  const version = circuit.version + 1;
  if (change.to === 'closed') {
    return { state: 'closed', countFrom: change.countFrom, buckets: circuit.buckets, version };
  }
  return {
    state: change.to,
    since: change.since,
    countFrom: circuit.countFrom,
    buckets: circuit.buckets,
    version,
  };
}

/** `circuit` with one sample counted in `now`'s bucket (a stale bucket in that slot starts afresh). */
export function withSample(
  circuit: Circuit,
  sample: HealthSample,
  now: EpochMs,
  settings: CircuitSettings,
): Circuit {
  const { start } = bucketOf(now, settings);
  const slotOf = (b: CircuitBucket) => bucketOf(b.start, settings).slot;
  const { slot } = bucketOf(now, settings);
  const existing = circuit.buckets.find((b) => slotOf(b) === slot);
  // A sample older than its slot's bucket (a clock behind another sender's) is dropped.
  if (existing !== undefined && existing.start > start) return circuit;
  const base =
    existing !== undefined && existing.start === start ? existing : { start, ok: 0, error: 0, unknown: 0 };
  const bucket = { ...base, [sample]: base[sample] + 1 };
  return { ...circuit, buckets: [...circuit.buckets.filter((b) => slotOf(b) !== slot), bucket] };
}
