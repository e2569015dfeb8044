import type { EpochMs } from './notification.js';

/** The only source of "now" for code that decides. Tests pass a controllable one. */
export interface Clock {
  now(): EpochMs;
}

/** Wall-clock time. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told: for unit and model-based tests. */
export class ManualClock implements Clock {
  constructor(private current: EpochMs = Date.UTC(2026, 10, 29, 12, 0, 0)) {}
  now(): EpochMs {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(at: EpochMs): void {
    this.current = at;
  }
}
