/** A request to dispatch one command: the key only, never the payload. */
export interface DispatchMessage {
  readonly idempotencyKey: string;
  /** The record version that caused the message (diagnostics only; the sender re-reads). */
  readonly version: number;
  /** Delay before the sender should see it (retry backoff), in whole seconds, 0-900. */
  readonly delaySeconds: number;
  /**
   * Reconcile queue only: the due time the scheduled pass read. A worker skips the message when the
   * item's due time has changed since (it was handled meanwhile), so a key enqueued by several
   * passes before a worker reached it costs one strong read per extra copy, never a second lookup.
   */
  readonly dueAt?: number;
}

/** The result of sending a batch: ids of the messages that could not be enqueued. */
export interface EnqueueResult {
  readonly failed: readonly string[];
}

/** The dispatch queue as the forwarder and reconciler see it. */
export interface DispatchQueue {
  /** Enqueues messages keyed by caller-chosen ids (for partial failure reporting). */
  enqueue(
    messages: ReadonlyArray<{ readonly id: string; readonly message: DispatchMessage }>,
  ): Promise<EnqueueResult>;
  /**
   * About how many messages wait or are in flight (SQS's approximate counts); undefined when the
   * queue cannot say. The reconciler's pass reads it to tell a backlog from a missed entry.
   */
  backlog?(): Promise<number | undefined>;
}
