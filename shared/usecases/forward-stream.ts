import { type CommandChange, needsDispatch } from '../domain/dispatch-trigger.js';
import type { EpochMs } from '../domain/notification.js';
import type { DispatchMessage, DispatchQueue } from '../ports/queue.js';

/** One stream record, its images already read as commands (by the store adapter's reader). */
export interface ChangeRecord extends CommandChange {
  readonly id: string;
}

/** The dispatch message a change asks for (the domain's {@link needsDispatch} rule), if any. */
export function dispatchMessageFor(change: ChangeRecord, now: EpochMs): DispatchMessage | undefined {
  const after = change.after;
  if (after === undefined || !needsDispatch(change)) return undefined;
  const nextAttemptAt = after.nextAttemptAt ?? now;
  return {
    idempotencyKey: after.idempotencyKey,
    version: after.version,
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
