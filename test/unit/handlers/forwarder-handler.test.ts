import type { DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { commandImageOf } from '../../../shared/adapters/dynamodb/stream-image.js';
import { createForwarderHandler } from '../../../shared/handlers/forwarder-handler.js';
import type { DispatchMessage, DispatchQueue } from '../../../shared/ports/queue.js';
import { ManualClock } from '../../support/manual-clock.js';

/** A queue that records what it was given. */
function aRecordingQueue() {
  const sent: DispatchMessage[] = [];
  const queue: DispatchQueue = {
    async enqueue(messages) {
      sent.push(...messages.map((m) => m.message));
      return { failed: [] };
    },
  };
  return { queue, sent };
}

describe('forwarder handler', () => {
  it('forwards the commands of a batch that also holds an image it cannot read (an empty map in DynamoDB Local)', async () => {
    // Prepare
    const { queue, sent } = aRecordingQueue();
    const handler = createForwarderHandler({
      queue,
      clock: new ManualClock(Date.UTC(2026, 11, 1)),
      readImage: commandImageOf,
    });
    const event = {
      Records: [
        {
          eventName: 'MODIFY',
          dynamodb: {
            SequenceNumber: '1',
            NewImage: { pk: { S: '_control#reconciler' }, sk: { S: 'CURSOR' }, shards: {} },
          },
        },
        {
          eventName: 'INSERT',
          dynamodb: {
            SequenceNumber: '2',
            NewImage: {
              pk: { S: 'k-1' },
              sk: { S: 'CMD' },
              idempotency_key: { S: 'k-1' },
              state: { S: 'accepted' },
              version: { N: '1' },
            },
          },
        },
      ],
    } as unknown as DynamoDBStreamEvent;

    // Act
    const response = await handler(event);

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    expect(sent).toEqual([{ idempotencyKey: 'k-1', version: 1, delaySeconds: 0 }]);
  });
});
