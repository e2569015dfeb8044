import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { Clock } from '../domain/clock.js';
import type { DispatchQueue } from '../ports/queue.js';
import { type ChangeRecord, type ForwardReport, forwardChanges } from '../usecases/forward-stream.js';

export interface ForwarderDeps {
  readonly queue: DispatchQueue;
  readonly clock: Clock;
  readonly onReport?: (report: ForwardReport) => void;
}

type Image = Record<string, AttributeValue>;

/**
 * An image the SDK cannot unmarshall is no command to forward (DynamoDB Local's stream renders an
 * empty map, as in the reconciler's cursor item, as `{}`): it is left out instead of failing the
 * whole batch, which would stop every dispatch behind it. A command image never has that shape,
 * and the reconciler's safety net re-drives any accepted command the queue did not get.
 */
function readable(
  field: 'oldImage' | 'newImage',
  image: Image,
): { [K in typeof field]?: Record<string, unknown> } {
  try {
    return { [field]: unmarshall(image) };
  } catch {
    return {};
  }
}

/**
 * DynamoDB stream batch -> dispatch queue (keys only). Failed records are reported by sequence
 * number, so Lambda retries from the first failure instead of the whole batch.
 */
export function createForwarderHandler(deps: ForwarderDeps) {
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const changes: ChangeRecord[] = event.Records.flatMap((record) => {
      const id = record.dynamodb?.SequenceNumber;
      const eventName = record.eventName;
      if (!id || !eventName) return [];
      return [
        {
          id,
          eventName,
          ...(record.dynamodb?.OldImage ? readable('oldImage', record.dynamodb.OldImage as Image) : {}),
          ...(record.dynamodb?.NewImage ? readable('newImage', record.dynamodb.NewImage as Image) : {}),
        },
      ];
    });
    const report = await forwardChanges(deps.queue, changes, deps.clock.now());
    deps.onReport?.(report);
    return { batchItemFailures: report.failedIds.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
