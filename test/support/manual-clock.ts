import type { Clock } from '../../shared/domain/clock.js';
import type { EpochMs } from '../../shared/domain/notification.js';

interface Timer {
  readonly at: EpochMs;
  readonly task: () => void;
}

/**
 * A clock that only moves when told: for unit and model-based tests (a test seam, so not in shared/).
 * Its timers (`setTimer`, the simulators' `SimulatorClock`) fire while it moves past them, in time
 * order, each with the clock at its own due time; never on the wall clock, never synchronously.
 */
export class ManualClock implements Clock {
  private readonly timers: Timer[] = [];

  constructor(private current: EpochMs = Date.UTC(2026, 10, 29, 12, 0, 0)) {}

  now(): EpochMs {
    return this.current;
  }

  /** Moves time forward by `ms`, firing every timer due on the way (`advance(0)` fires those due now). */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.timers.reduce<Timer | undefined>(
        (first, timer) =>
          timer.at <= target && (first === undefined || timer.at < first.at) ? timer : first,
        undefined,
      );
      if (due === undefined) break;
      this.timers.splice(this.timers.indexOf(due), 1);
      this.current = Math.max(this.current, due.at);
      due.task();
    }
    this.current = target;
  }

  /** Jumps to `at`; forward, it fires the timers on the way as {@link advance} does. */
  set(at: EpochMs): void {
    if (at >= this.current) this.advance(at - this.current);
    else this.current = at;
  }

  /** Runs `task` once the clock has moved `delayMs` on; returns a function that cancels it. */
  setTimer(task: () => void, delayMs: number): () => void {
    const timer: Timer = { at: this.current + Math.max(0, delayMs), task };
    this.timers.push(timer);
    return () => {
      const index = this.timers.indexOf(timer);
      if (index !== -1) this.timers.splice(index, 1);
    };
  }

  /** How many timers wait for the clock to reach them. */
  pendingTimers(): number {
    return this.timers.length;
  }
}
