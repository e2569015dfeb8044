/**
 * The sender's clock against an authoritative one (docs/design.md#clock-skew). "Never after
 * `expires_at`" is decided on the sender's clock; a sender clock that runs slow would start a call
 * after the token died. The store's answers carry the time of the store's server (the HTTP `Date`
 * header of every DynamoDB response, whole seconds), so before each provider attempt the sender
 * compares its clock with the latest of them. Pure: the samples come in, the verdict goes out.
 */
import type { EpochMs } from './notification.js';
import { DomainDetail } from './reason-detail.js';

/**
 * Largest clock skew the sender tolerates, either way. The call is kept `leaseSlackMs / 2` (2.5 s
 * by default) inside its lease, which the reconciler reads on its own clock: a sender skewed by
 * less than that still ends its call inside the lease as others see it. Beyond it nothing is sent.
 */
export const MAX_CLOCK_SKEW_MS = 2_000;

/**
 * The `Date` header's resolution (RFC 9110 sections 5.6.7, 6.6.1: whole seconds). Taken as truncated;
 * a server that rounds stamps at most 0.5 s ahead, which can only make a correct clock look 0.5 s
 * slow, far inside the bound, and leaves the later-clock "now" later still.
 */
export const SERVER_DATE_RESOLUTION_MS = 1_000;

/** A sample older than this (on the sender's clock) says nothing: the clock may have been stepped since. */
export const MAX_SAMPLE_AGE_MS = 60_000;

/**
 * How long a tight sample is preferred to looser, later ones. Under load a slow answer (a claim
 * write that waited seconds) bounds our clock only to within its round trip, and the "now" taken
 * from it runs that much ahead: enough to give every claim back unused (chaos beside a loaded test
 * run). A quicker answer from a few seconds earlier bounds the same clock far better; clocks drift by
 * microseconds over this span, and a step shows as samples that disagree (see {@link preferSample}).
 */
export const SAMPLE_HOLD_MS = 30_000;

/** One answer of the authoritative clock, with when the request left and the answer came on ours. */
export interface ServerTimeSample {
  /** The answer's `Date`, whole seconds: the server's clock at some instant while it answered. */
  readonly serverDate: EpochMs;
  /** Our clock just before the request left. */
  readonly sentAt: EpochMs;
  /** Our clock when the answer came back. */
  readonly receivedAt: EpochMs;
}

/**
 * How far our clock is ahead of the server's (negative: behind), as an interval: the server
 * stamped its answer between our `sentAt` and `receivedAt`, and its stamp is truncated to the
 * second, so the server's clock read `[serverDate, serverDate + 1 s)` at an instant at which ours
 * read `[sentAt, receivedAt]`.
 */
export interface SkewInterval {
  readonly lowMs: number;
  readonly highMs: number;
}

/** What the sender may do with its clock, and the "now" it must use for deadlines. */
export type ClockCheck =
  | { readonly kind: 'unchecked'; readonly why: 'no_sample' | 'stale_sample'; readonly now: EpochMs }
  | { readonly kind: 'within_bound'; readonly skew: SkewInterval; readonly now: EpochMs }
  | {
      readonly kind: 'beyond_bound';
      readonly skew: SkewInterval;
      readonly now: EpochMs;
      /** `clock_skew:behind:<s>` or `clock_skew:ahead:<s>`: the skew's certain part, whole seconds. */
      readonly detail: string;
    };

/** The skew interval a sample proves (see {@link SkewInterval}). */
export function skewOf(sample: ServerTimeSample): SkewInterval {
  return {
    lowMs: sample.sentAt - (sample.serverDate + SERVER_DATE_RESOLUTION_MS),
    highMs: sample.receivedAt - sample.serverDate,
  };
}

/**
 * The sample to keep, of the one kept and the one that just came: the one that bounds our clock
 * tighter (the shorter round trip), unless the kept one is older than `holdMs` or the two disagree
 * (their skew intervals do not overlap: a clock was stepped), when the one that came back last wins.
 */
export function preferSample(
  kept: ServerTimeSample | undefined,
  next: ServerTimeSample,
  holdMs: number = SAMPLE_HOLD_MS,
): ServerTimeSample {
  if (kept === undefined) return next;
  const [older, newer] = next.receivedAt >= kept.receivedAt ? [kept, next] : [next, kept];
  const a = skewOf(older);
  const b = skewOf(newer);
  const disagree = b.lowMs > a.highMs || b.highMs < a.lowMs;
  if (disagree || newer.receivedAt - older.receivedAt > holdMs) return newer;
  return spreadOf(next) <= spreadOf(kept) ? next : kept;
}

/** A sample's round trip on our clock: how loosely it bounds the skew. */
const spreadOf = (sample: ServerTimeSample): number => sample.receivedAt - sample.sentAt;

/**
 * The verdict on our clock at `localNow`, given the best recent server sample ({@link preferSample}).
 *
 * `now` is the later of the two clocks: our own reading, or the latest instant the server's clock
 * can read now (its stamp plus the resolution plus the time since our request left). Deadlines
 * compared with it are never passed unnoticed, whichever clock is wrong; a correct clock pays at
 * most the resolution plus one round trip.
 *
 * `beyond_bound` only when the whole interval lies beyond `maxSkewMs`: the resolution and the
 * round trip never make a correct clock look skewed.
 */
export function checkClock(
  sample: ServerTimeSample | undefined,
  localNow: EpochMs,
  maxSkewMs: number = MAX_CLOCK_SKEW_MS,
): ClockCheck {
  if (sample === undefined) return { kind: 'unchecked', why: 'no_sample', now: localNow };
  if (localNow - sample.receivedAt > MAX_SAMPLE_AGE_MS || localNow < sample.sentAt) {
    return { kind: 'unchecked', why: 'stale_sample', now: localNow };
  }
  const skew = skewOf(sample);
  const now = Math.max(localNow, localNow - skew.lowMs);
  if (skew.highMs < -maxSkewMs) {
    return {
      kind: 'beyond_bound',
      skew,
      now,
      detail: `${DomainDetail.clockSkew}:behind:${seconds(-skew.highMs)}`,
    };
  }
  if (skew.lowMs > maxSkewMs) {
    return {
      kind: 'beyond_bound',
      skew,
      now,
      detail: `${DomainDetail.clockSkew}:ahead:${seconds(skew.lowMs)}`,
    };
  }
  return { kind: 'within_bound', skew, now };
}

/** Whole seconds, capped to what a `reason_detail` admits (at most 5 digits). */
const seconds = (ms: number): number => Math.min(99_999, Math.floor(ms / 1000));
