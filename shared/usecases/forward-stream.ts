import type { EpochMs } from '../domain/notification.js';
import { NotificationState } from '../domain/states.js';
import type { DispatchMessage, DispatchQueue } from '../ports/queue.js';

/** What the forwarder needs of one stream record (already unmarshalled). */
export interface ChangeRecord {
  readonly id: string;
  readonly eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly oldImage?: Record<string, unknown>;
  readonly newImage?: Record<string, unknown>;
}

/**
 * Pure filter: a command needs a dispatch message when it is inserted as `accepted`, or
 * modified into `accepted` (a retry after backoff, or reconciled absent). Evidence items never do.
 */
export function dispatchMessageFor(change: ChangeRecord, now: EpochMs): DispatchMessage | undefined {
  const next = change.newImage;
  if (next?.sk !== 'CMD' || next.state !== NotificationState.accepted) return undefined;
  if (change.eventName === 'MODIFY') {
    const before = change.oldImage;
    if (before && before.state === NotificationState.accepted && before.version === next.version)
      return undefined;
  } else if (change.eventName !== 'INSERT') {
    return undefined;
  }
  const nextAttemptAt = typeof next.next_attempt_at === 'number' ? next.next_attempt_at : now;
  return {
    idempotencyKey: String(next.idempotency_key),
    version: Number(next.version),
    delaySeconds: Math.max(0, Math.ceil((nextAttemptAt - now) / 1000)),
  };
}

/** Result: the ids of records that could not be forwarded (for partial batch failure reporting). */
export interface ForwardReport {
  readonly forwarded: number;
  readonly ignored: number;
  readonly failedIds: readonly string[];
}

/** Forwards a stream batch to the dispatch queue, keys only. */
export async function forwardChanges(
  queue: DispatchQueue,
  changes: readonly ChangeRecord[],
  now: EpochMs,
): Promise<ForwardReport> {
  const messages = changes.flatMap((change) => {
    const message = dispatchMessageFor(change, now);
    return message ? [{ id: change.id, message }] : [];
  });
  const { failed } = messages.length ? await queue.enqueue(messages) : { failed: [] };
  return {
    forwarded: messages.length - failed.length,
    ignored: changes.length - messages.length,
    failedIds: failed,
  };
}
