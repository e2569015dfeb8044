/**
 * Retries `check` until it stops throwing (an assertion that became true), then returns its value;
 * rethrows the last failure once `timeoutMs` has passed. For waits on a real server's timers (the
 * simulators' status schedule and callbacks), instead of a wall-clock sleep with a margin.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 5_000, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
