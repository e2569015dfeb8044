/**
 * Retries `check` until it stops throwing (an assertion that became true), then returns its value;
 * rethrows the last failure once `timeoutMs` has passed. For waits on a real server's timers (the
 * simulators' status schedule and callbacks), instead of a wall-clock sleep with a margin. The
 * timeout is a hang guard, not a budget (docs/testing.md#hang-guards): a passing wait returns as
 * soon as its check holds, so the guard can be long enough for a loaded machine.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 60_000, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
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
