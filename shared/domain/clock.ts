import type { EpochMs } from './notification.js';

/** The only source of "now" for code that decides. Tests pass a controllable one. */
export interface Clock {
  now(): EpochMs;
}

/** Wall-clock time. */
export const systemClock: Clock = { now: () => Date.now() };
