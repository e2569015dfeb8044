import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/domain/clock.js';
import { createReconcileWorkerHandler } from '../../../shared/handlers/reconcile-worker-handler.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';
import {
  countingProvider,
  keyOnShard,
  POLICY,
  plant,
  recordingQueue,
  switchableCipher,
  T0,
  unknownRecord,
} from '../../support/reconcile-fixtures.js';

function batch(keys: readonly string[]): SQSEvent {
  return {
    Records: keys.map((key, i) => ({
      messageId: `m${i}`,
      receiptHandle: `r${i}`,
      body: key === 'not-ours' ? '{"hello":1}' : JSON.stringify({ idempotency_key: key, version: 3 }),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '0',
        SenderId: 'x',
        ApproximateFirstReceiveTimestamp: '0',
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:0:reconcile',
      awsRegion: 'us-east-1',
    })),
  };
}

describe('reconcile worker handler', () => {
  it('fails only the messages that met a transient fault; poison and foreign bodies are consumed', async () => {
    // Prepare: one healthy key, one poison key, one key whose reads are throttled, one foreign body.
    const healthy = keyOnShard(0);
    const poison = keyOnShard(1);
    const throttled = keyOnShard(2);
    const store = new MemoryNotificationStore({
      beforeOperation: (operation, key) => {
        if (operation === 'get' && key === throttled) {
          const error = new Error('slow down');
          error.name = 'ThrottlingException';
          throw error;
        }
      },
    });
    const cipher = switchableCipher();
    for (const key of [healthy, poison, throttled]) await plant(store, cipher, unknownRecord(key));
    store.plantCorrupt(poison, 'unknown reason from_the_future');
    const summaries: unknown[] = [];
    const handler = createReconcileWorkerHandler({
      store,
      cipher,
      provider: countingProvider(),
      queue: recordingQueue(),
      clock: new ManualClock(T0 + 5_000),
      policy: POLICY,
      onSummary: (summary) => summaries.push(summary),
    });
    // Act
    const response = await handler(batch([healthy, poison, throttled, 'not-ours', healthy]));
    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm2' }]);
    expect(summaries).toEqual([expect.objectContaining({ examined: 3, poisoned: 1, lookups: 1, errors: 2 })]);
  });
});
