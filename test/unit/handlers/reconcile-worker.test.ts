import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../../shared/adapters/dynamodb/errors.js';
import { createReconcileWorkerHandler } from '../../../shared/handlers/reconcile-worker-handler.js';
import { ManualClock } from '../../support/manual-clock.js';
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

function batch(keys: readonly string[], dueAt?: number): SQSEvent {
  return {
    Records: keys.map((key, i) => ({
      messageId: `m${i}`,
      receiptHandle: `r${i}`,
      body:
        key === 'not-ours'
          ? '{"hello":1}'
          : JSON.stringify({
              idempotency_key: key,
              version: 3,
              ...(dueAt === undefined ? {} : { due_at: dueAt }),
            }),
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

/** One due unknown in an in-memory store, and a worker handler over it. */
async function aWorkerWorld() {
  const key = keyOnShard(0);
  const store = new MemoryNotificationStore();
  const cipher = switchableCipher();
  const record = unknownRecord(key);
  await plant(store, cipher, record);
  const provider = countingProvider();
  const clock = new ManualClock(T0 + 5_000);
  const handler = createReconcileWorkerHandler({
    store,
    cipher,
    provider,
    queue: recordingQueue(),
    clock,
    policy: POLICY,
  });
  return { key, store, record, provider, clock, handler };
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

  it('handles at most `concurrency` keys at once, and reports every message when all of them fail', async () => {
    // Prepare: six due keys whose reads wait a moment and then are throttled
    const keys = [0, 1, 2, 3, 4, 5].map((shard) => keyOnShard(shard));
    let inFlight = 0;
    let mostInFlight = 0;
    const store = new MemoryNotificationStore({
      beforeOperation: async (operation) => {
        if (operation !== 'get') return;
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        const error = new Error('slow down');
        error.name = 'ThrottlingException';
        throw error;
      },
    });
    const cipher = switchableCipher();
    for (const key of keys) await plant(store, cipher, unknownRecord(key));
    const handler = createReconcileWorkerHandler({
      store,
      cipher,
      provider: countingProvider(),
      queue: recordingQueue(),
      clock: new ManualClock(T0 + 5_000),
      policy: POLICY,
      concurrency: 2,
    });

    // Act
    const response = await handler(batch(keys));

    // Assess: no FullBatchFailureError; the answer names every message
    expect(mostInFlight).toBe(2);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      'm0',
      'm1',
      'm2',
      'm3',
      'm4',
      'm5',
    ]);
  });

  it('a copy enqueued by an earlier pass, reaching a worker after the item was handled, asks the provider nothing', async () => {
    // Prepare: one due unknown, enqueued by two passes with the due time they read.
    const { key, store, record, provider, clock, handler } = await aWorkerWorld();
    // Act: the first copy is handled (an inconclusive read moves its due time); the second arrives later.
    await handler(batch([key], record.dueAt));
    clock.advance(60_000);
    const second = await handler(batch([key], record.dueAt));
    // Assess: one lookup; the stale copy is consumed, not failed.
    expect(provider.lookups).toHaveLength(1);
    expect(second.batchItemFailures).toEqual([]);
    expect((await store.get(key))?.record.dueAt).not.toBe(record.dueAt);
  });

  it("a copy without a due time (an older release's message) is handled as before", async () => {
    // Prepare
    const { key, provider, clock, handler } = await aWorkerWorld();
    // Act: two passes' copies, the item due again at the second
    await handler(batch([key]));
    clock.advance(60_000);
    await handler(batch([key]));
    // Assess
    expect(provider.lookups).toHaveLength(2);
  });

  it('a throttled transaction (no $retryable, no throttling name of its own) is retried, never poisoned', async () => {
    // Prepare: the expiry write of a due, expired unknown is cancelled by throttling
    const key = keyOnShard(0);
    const store = new MemoryNotificationStore({
      beforeOperation: (operation) => {
        if (operation !== 'transition') return;
        const cancelled = new Error('Transaction cancelled [ThrottlingError, None]');
        cancelled.name = 'TransactionCanceledException';
        throw new StoreUnavailableError('transition write: DynamoDB is temporarily unavailable', {
          cause: cancelled,
        });
      },
    });
    const cipher = switchableCipher();
    const record = unknownRecord(key, { expiresInMs: 60_000 });
    await plant(store, cipher, record);
    const reports: unknown[] = [];
    const handler = createReconcileWorkerHandler({
      store,
      cipher,
      provider: countingProvider(),
      queue: recordingQueue(),
      clock: new ManualClock(record.expiresAt + 1),
      policy: POLICY,
      onItemError: (report) => reports.push(report),
    });
    // Act
    const response = await handler(batch([key]));
    // Assess: the message comes back; the item keeps its due time (no 60 s poison delay)
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
    expect(reports).toMatchObject([{ action: 'retry' }]);
    expect((await store.get(key))?.record.dueAt).toBe(record.dueAt);
  });
});
