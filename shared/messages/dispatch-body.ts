/**
 * The dispatch queue's wire contract, shared by the queue adapter that writes it and the sender
 * handler that reads it (so the handler needs no adapter). Pure: no SDK.
 */
import type { DispatchMessage } from '../ports/queue.js';

/** The body put on the queue: the key, never the payload. */
export interface DispatchMessageBody {
  readonly idempotency_key: string;
  readonly version: number;
  /** Reconcile queue only: the due time the pass read (see `DispatchMessage.dueAt`). */
  readonly due_at?: number;
}

/**
 * The body of `message` as the queues carry it (written by the SQS adapter; benchmarks feed the
 * handlers the same bytes).
 */
export function dispatchBodyOf(message: DispatchMessage): DispatchMessageBody {
  return {
    idempotency_key: message.idempotencyKey,
    version: message.version,
    ...(message.dueAt === undefined ? {} : { due_at: message.dueAt }),
  };
}

/** Parses a queue message body; undefined when it is not ours. */
export function parseDispatchBody(body: string): DispatchMessageBody | undefined {
  try {
    const parsed = JSON.parse(body) as Partial<DispatchMessageBody>;
    if (typeof parsed.idempotency_key !== 'string' || parsed.idempotency_key === '') return undefined;
    const dueAt = Number(parsed.due_at);
    return {
      idempotency_key: parsed.idempotency_key,
      version: Number(parsed.version ?? 0),
      ...(parsed.due_at !== undefined && Number.isFinite(dueAt) ? { due_at: dueAt } : {}),
    };
  } catch {
    return undefined;
  }
}
