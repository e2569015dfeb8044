import type { Clock } from '../../shared/domain/clock.js';
import type { EpochMs } from '../../shared/domain/notification.js';

/** A clock that only moves when told: for unit and model-based tests (a test seam, so not in shared/). */
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
