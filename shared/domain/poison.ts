import type { EpochMs } from './notification.js';

/** How poison items are moved out of the way: retried later a few times, then parked. */
export const POISON_POLICY = {
  /** After this many consecutive failures the item is parked (far due time, alarm). */
  maxRetries: 5,
  /** First retry delay; doubles per failure, capped. */
  retryBaseMs: 60_000,
  retryMaxMs: 3_600_000,
  /** A parked item comes back after this long (an operator fixes or rolls forward meanwhile). */
  parkMs: 30 * 86_400_000,
} as const;

/**
 * Where an item that could not be read or handled goes after its `poisonCount`-th consecutive
 * failure: back into the due index later (the delay doubles, capped), or parked far away once the
 * retry cap is reached. It is never deleted.
 */
export function poisonMove(
  poisonCount: number,
  now: EpochMs,
): { readonly dueAt: EpochMs; readonly parked: boolean } {
  if (poisonCount >= POISON_POLICY.maxRetries) return { dueAt: now + POISON_POLICY.parkMs, parked: true };
  const delay = POISON_POLICY.retryBaseMs * 2 ** Math.max(0, poisonCount - 1);
  return { dueAt: now + Math.min(POISON_POLICY.retryMaxMs, delay), parked: false };
}
