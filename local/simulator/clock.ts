/**
 * The simulators' source of time: "now" for timestamps, status progression and list lag, and
 * timers for the status callbacks. The real clock is the default; tests pass one that moves only
 * when told (test/support/manual-clock.ts), so a status change or a callback happens exactly when
 * the test advances time, never after a wall-clock sleep.
 */
export interface SimulatorClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Runs `task` once `delayMs` have passed by this clock, never synchronously; returns a function
   * that cancels it (a no-op once it ran).
   */
  setTimer(task: () => void, delayMs: number): () => void;
}

/** Wall-clock time and Node timers, unreferenced: a pending callback never keeps the process alive. */
export const realClock: SimulatorClock = {
  now: () => Date.now(),
  setTimer(task, delayMs) {
    const timer = setTimeout(task, delayMs);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
