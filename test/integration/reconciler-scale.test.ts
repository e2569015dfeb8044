/**
 * Issue 12 regressions against DynamoDB Local: fair passes over the sharded due index (with the
 * cursor item), the oldest-due figure per shard, and poison items that must not stop a pass.
 */
import {
  type AttributeValue,
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import { commandItem } from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import type { NotificationRecord } from '../../shared/domain/notification.js';
import { POISON_POLICY } from '../../shared/domain/poison.js';
import { sealPayload } from '../../shared/usecases/payload-seal.js';
import { reconcileDue } from '../../shared/usecases/reconcile-due.js';
import { TEST_CODE, TEST_PHONE, uniqueName } from '../support/fixtures.js';
import { ManualClock } from '../support/manual-clock.js';
import {
  countingProvider,
  keyOnShard,
  POLICY,
  recordingQueue,
  switchableCipher,
  T0,
  unknownRecord,
} from '../support/reconcile-fixtures.js';

let client: DynamoDBClient;

beforeAll(() => {
  client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(() => client.destroy());

async function aTable() {
  const tableName = uniqueName('reconcile-scale');
  await ensureTable(client, tableName);
  return { tableName, store: new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 }) };
}

/** Writes records as command items, 25 per BatchWriteItem. */
async function load(tableName: string, records: readonly NotificationRecord[]) {
  const cipher = switchableCipher();
  const items: Record<string, AttributeValue>[] = [];
  for (const record of records) {
    const sealed = await sealPayload(cipher, record.idempotencyKey, {
      phone: TEST_PHONE,
      params: { code: TEST_CODE },
    });
    items.push(
      marshall(commandItem(record, sealed, 400), { removeUndefinedValues: true }) as Record<
        string,
        AttributeValue
      >,
    );
  }
  for (let i = 0; i < items.length; i += 25) {
    let pending = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (pending.length) {
      const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: pending } }));
      pending = (out.UnprocessedItems?.[tableName] ?? []) as typeof pending;
    }
  }
  return cipher;
}

describe('reconciler passes over DynamoDB Local', () => {
  it('with 520 due items in shard 0, shards 1-3 are served in the first pass, shard 0 advances, nothing is queued twice', async () => {
    // Prepare: 520 unknowns in shard 0 (older), 5 in each other shard (newer); passes of 100.
    const { tableName, store } = await aTable();
    const deep = Array.from({ length: 520 }, (_, i) =>
      unknownRecord(keyOnShard(0, 'deep'), { dueAt: T0 + i }),
    );
    const shallow = [1, 2, 3].flatMap((shard) =>
      Array.from({ length: 5 }, () => unknownRecord(keyOnShard(shard, 'shallow'), { dueAt: T0 + 1_000 })),
    );
    const cipher = await load(tableName, [...deep, ...shallow]);
    const reconcileQueue = recordingQueue();
    const deps = {
      store,
      cipher,
      provider: countingProvider(),
      queue: recordingQueue(),
      reconcileQueue,
      clock: new ManualClock(T0 + 10_000),
      policy: POLICY,
      maxItems: 100,
      maxRounds: 1,
    };
    // Act: three fan-out passes (nobody consumes the queue, so the index does not change).
    const passes = [];
    for (let i = 0; i < 3; i++) {
      reconcileQueue.messages.length = 0;
      const summary = await reconcileDue(deps);
      passes.push({ summary, keys: new Set(reconcileQueue.messages.map((m) => m.idempotencyKey)) });
    }
    // Assess: the first pass reached every shallow key's shard; later passes read on after what
    // they queued (the copies wait in the queue) instead of repeating; shard 0 moved on.
    expect(passes[0]?.summary.shardEntries.slice(1, 4)).toEqual([5, 5, 5]);
    for (const record of shallow) expect(passes[0]?.keys).toContain(record.idempotencyKey);
    for (const pass of passes.slice(1)) {
      for (const record of shallow) expect(pass.keys).not.toContain(record.idempotencyKey);
      expect(pass.summary.examined).toBe(100);
    }
    for (const pass of passes) expect(pass.summary.examined).toBeLessThanOrEqual(100);
    const deepSeen = passes.map((p) =>
      deep.filter((r) => p.keys.has(r.idempotencyKey)).map((r) => r.idempotencyKey),
    );
    expect(new Set(deepSeen.flat()).size).toBe(deepSeen.flat().length);
    expect(passes.map((p) => p.summary.oldestDueLagMs)).toEqual([10_000, 10_000, 10_000]);
  });

  it('an item with an unknown reason code in the due index no longer makes the pass throw', async () => {
    // Prepare: one healthy unknown and one written by a "newer release" (unknown reason code).
    const { tableName, store } = await aTable();
    const healthy = unknownRecord(keyOnShard(1));
    const poison = unknownRecord(keyOnShard(1));
    const cipher = await load(tableName, [healthy]);
    const item = commandItem(poison, 'aes1.sealed', 400);
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: marshall({ ...item, last_reason: 'reconciled_by_v3' }, { removeUndefinedValues: true }),
      }),
    );
    const errors: unknown[] = [];
    const deps = {
      store,
      cipher,
      provider: countingProvider(),
      queue: recordingQueue(),
      clock: new ManualClock(T0 + 10_000),
      policy: POLICY,
      onItemError: (report: unknown) => errors.push(report),
    };
    // Act
    const summary = await reconcileDue(deps);
    // Assess: the pass completed, the healthy item was looked up, the poison one counted and moved.
    expect(summary).toMatchObject({ poisoned: 1, lookups: 1 });
    const raw = await client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: marshall({ [TableSchema.partitionKey]: poison.idempotencyKey, [TableSchema.sortKey]: 'CMD' }),
      }),
    );
    expect(raw.Item?.poison_count?.N).toBe('1');
    expect(Number(raw.Item?.due_at?.N)).toBe(T0 + 10_000 + POISON_POLICY.retryBaseMs);
    expect(raw.Item?.last_reason?.S).toBe('reconciled_by_v3');
    expect(errors).toEqual([
      expect.objectContaining({
        idempotencyKey: poison.idempotencyKey,
        cause: expect.objectContaining({ code: 'corrupt_item' }),
      }),
    ]);
    // And a second pass does not look at it again before its retry time.
    const again = await reconcileDue(deps);
    expect(again.poisoned).toBe(0);
    // The operator listing skips it instead of failing.
    const listing = await store.due(T0 + 10_000 + POISON_POLICY.retryBaseMs, 100);
    expect(listing.items.map((r) => r.idempotencyKey)).not.toContain(poison.idempotencyKey);
  });

  it('keeps the cursor in one control item outside every index', async () => {
    // Prepare
    const { tableName, store } = await aTable();
    // Act
    const first = await store.writeReconcileCursor(0, { '0': 'abc' });
    const lost = await store.writeReconcileCursor(0, { '0': 'def' });
    const read = await store.readReconcileCursor();
    // Assess
    expect([first, lost]).toEqual([true, false]);
    expect(read).toEqual({ version: 1, shards: { '0': 'abc' } });
    expect(await store.oldestDue(0, T0)).toBeUndefined();
    void tableName;
  });
});
