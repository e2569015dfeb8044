import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import {
  CIRCUIT_VIEW_CACHE_MS,
  circuitItemKey,
  createDynamoProviderHealth,
} from '../../shared/adapters/dynamodb/provider-health.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import { commandImageOf } from '../../shared/adapters/dynamodb/stream-image.js';
import { uniqueName } from '../support/fixtures.js';
import {
  CONTRACT_CIRCUIT_SETTINGS,
  describeProviderHealthContract,
} from '../support/provider-health-contract.js';

let client: DynamoDBClient;
let tableName: string;

beforeAll(async () => {
  client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  tableName = uniqueName('health');
  await ensureTable(client, tableName);
});
afterAll(() => {
  client.destroy();
});

/** A container: its own adapter (and cache) over the one table. */
function container(role: 'sender' | 'observer', faults: unknown[] = []) {
  let changes = 0;
  const health = createDynamoProviderHealth({
    client,
    tableName,
    settings: CONTRACT_CIRCUIT_SETTINGS,
    role,
    onChange: () => {
      changes += 1;
    },
    onFault: ({ error }) => {
      faults.push(error);
    },
  });
  return { health, changes: () => changes };
}

describeProviderHealthContract('DynamoDB (DynamoDB Local)', () => ({
  container,
  cacheMs: CIRCUIT_VIEW_CACHE_MS,
}));

describe('DynamoDB provider health', () => {
  const T0 = Date.UTC(2026, 11, 2, 13, 0, 0);

  it('reuses what it read for less than the cache time, then reads again', async () => {
    // Prepare
    const provider = uniqueName('cached');
    const reader = container('sender').health;
    expect((await reader.view([provider], T0))[0]?.state).toBe('closed');
    await Promise.all(
      Array.from({ length: 10 }, () => container('sender').health.record(provider, 'error', T0)),
    );
    // Act
    const within = (await reader.view([provider], T0 + CIRCUIT_VIEW_CACHE_MS - 1))[0]?.state;
    const after = (await reader.view([provider], T0 + CIRCUIT_VIEW_CACHE_MS))[0]?.state;
    // Assess
    expect([within, after]).toEqual(['closed', 'open']);
  });

  it('keeps the circuit in a control item no index and no stream consumer takes for a command', async () => {
    // Prepare
    const provider = uniqueName('item');
    const store = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
    // Act
    await container('sender').health.record(provider, 'ok', T0);
    const due = await store.due(T0 + 86_400_000, 100);
    const item = await client.send(
      new GetItemCommand({ TableName: tableName, Key: marshall(circuitItemKey(provider)) }),
    );
    // Assess
    expect(due.items).toEqual([]);
    expect(item.Item).toBeDefined();
    expect(
      Object.keys(item.Item ?? {}).some((name) => name.startsWith('due_') || name.startsWith('gsi_')),
    ).toBe(false);
    expect(commandImageOf(item.Item)).toBeUndefined();
  });

  it('a sender records and views without throwing when the table is gone (logs the fault, drops the sample, reads closed)', async () => {
    // Prepare
    const faults: unknown[] = [];
    const broken = createDynamoProviderHealth({
      client,
      tableName: uniqueName('missing'),
      settings: CONTRACT_CIRCUIT_SETTINGS,
      role: 'sender',
      onFault: ({ error }) => {
        faults.push(error);
      },
    });
    // Act
    await broken.record('twilio', 'error', T0);
    const views = await broken.view(['twilio'], T0);
    // Assess
    expect(views).toEqual([{ provider: 'twilio', state: 'closed' }]);
    expect(faults).toHaveLength(2);
  });

  it("fails an observer's view when the circuit cannot be read (closed would be a guess)", async () => {
    // Prepare
    const observer = createDynamoProviderHealth({
      client,
      tableName: uniqueName('missing'),
      settings: CONTRACT_CIRCUIT_SETTINGS,
      role: 'observer',
    });
    // Act / Assess
    await expect(observer.view(['twilio'], T0)).rejects.toThrow(
      /resource not found|Cannot do operations on a non-existent table/i,
    );
  });
});
