import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { Clock } from '../domain/clock.js';
import type { CommandImage } from '../domain/dispatch-trigger.js';
import type { DispatchQueue } from '../ports/queue.js';
import { type ChangeRecord, type ForwardReport, forwardChanges } from '../usecases/forward-stream.js';

export interface ForwarderDeps {
  readonly queue: DispatchQueue;
  readonly clock: Clock;
  /**
   * Reads one stream image as a command (the store adapter's reader, injected so the storage
   * format stays in the adapter); undefined for anything that is no command or cannot be read.
   */
  readonly readImage: (image: Record<string, unknown> | undefined) => CommandImage | undefined;
  readonly onReport?: (report: ForwardReport) => void;
}

/**
 * DynamoDB stream batch -> dispatch queue (keys only). Failed records are reported by sequence
 * number, so Lambda retries from the first failure instead of the whole batch. An image that is
 * no readable command is left out instead of failing the batch (which would stop every dispatch
 * behind it); the reconciler's safety net re-drives any accepted command the queue did not get.
 *
 * Not Powertools' `BatchProcessor`: it reports failures the same way (each failed record's
 * `SequenceNumber`), but calls a handler per record, which would turn the batch's one `enqueue`
 * (`SendMessageBatch` by ten) into one queue call per record.
 */
export function createForwarderHandler(deps: ForwarderDeps) {
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const changes: ChangeRecord[] = event.Records.flatMap((record) => {
      const id = record.dynamodb?.SequenceNumber;
      const eventName = record.eventName;
      if (!id || !eventName) return [];
      const before = deps.readImage(record.dynamodb?.OldImage);
      const after = deps.readImage(record.dynamodb?.NewImage);
      return [{ id, eventName, ...(before ? { before } : {}), ...(after ? { after } : {}) }];
    });
    const report = await forwardChanges(deps.queue, changes, deps.clock.now());
    deps.onReport?.(report);
    return { batchItemFailures: report.failedIds.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
