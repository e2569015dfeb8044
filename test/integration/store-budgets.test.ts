/**
 * One contract for budgeted admission, run against both store implementations (DynamoDB Local
 * and the in-memory store of the model tests), so the two cannot drift apart.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import type { BudgetCounter } from '../../shared/domain/budgets.js';
import { admit, type NotificationRecord } from '../../shared/domain/notification.js';
import type { NotificationStore } from '../../shared/ports/store.js';
import { uniqueName } from '../support/fixtures.js';
import { MemoryNotificationStore } from '../support/memory-store.js';

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
let client: DynamoDBClient;
let dynamo: DynamoNotificationStore;

beforeAll(async () => {
  client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const tableName = uniqueName('budgets');
  await ensureTable(client, tableName);
  dynamo = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
});
afterAll(() => client.destroy());

let serial = 0;
function aCommand(): { record: NotificationRecord; evidence: ReturnType<typeof admit>['evidence'] } {
  const key = `budget-${++serial}-${Math.random().toString(36).slice(2)}`;
  const { next, evidence } = admit({
    request: {
      idempotencyKey: key,
      eventId: `evt-${key}`,
      channel: 'sms',
      template: 'password_reset',
      locale: 'en',
      expiresAt: NOW + 600_000,
      sensitive: { phone: '+14155550123', params: { code: '123456' } },
    },
    destinationFingerprint: 'fp1:abc',
    payloadFingerprint: 'pf1:def',
    providerName: 'simulator',
    now: NOW,
    safetyNetAt: NOW + 60_000,
  });
  return { record: next, evidence };
}

/** A counter of a 15-minute window (`limit`) nested in a day (`dayLimit`), as the defaults build it. */
function aCounter(
  limit: number,
  scope: BudgetCounter['scope'] = 'destination',
  dayLimit = 100,
): BudgetCounter {
  return {
    key: `LIMIT#dst#fp1:${Math.random().toString(36).slice(2)}#24h#1`,
    scope,
    tallies: [
      { attribute: 'n_24h_1', limit: dayLimit, windowEndsAt: NOW + 86_400_000 },
      { attribute: 'n_15m_2', limit, windowEndsAt: NOW + 900_000 },
    ],
  };
}

describe.each<[string, () => NotificationStore]>([
  ['DynamoDB', () => dynamo],
  ['memory', () => new MemoryNotificationStore()],
])('budgeted admission (%s store)', (_name, storeFor) => {
  it('admits up to the limit of every counter, then refuses naming the full counter', async () => {
    // Prepare
    const store = storeFor();
    const roomy = aCounter(5);
    const tight = aCounter(2, 'country');
    // Act
    const results = [];
    for (let i = 0; i < 3; i++) {
      const { record, evidence } = aCommand();
      results.push(await store.admit(record, evidence, 'sealed', [roomy, tight]));
    }
    // Assess
    expect(results.map((r) => r.kind)).toEqual(['admitted', 'admitted', 'over_budget']);
    expect(results[2]).toEqual({ kind: 'over_budget', scope: 'country', freesAt: NOW + 900_000 });
  });

  it('frees up when the latest full window ends: the day, once the day budget is spent', async () => {
    // Prepare
    const store = storeFor();
    const counter = aCounter(5, 'destination', 2);
    for (let i = 0; i < 2; i++) {
      const { record, evidence } = aCommand();
      await store.admit(record, evidence, 'sealed', [counter]);
    }
    const { record, evidence } = aCommand();
    // Act
    const refused = await store.admit(record, evidence, 'sealed', [counter]);
    // Assess
    expect(refused).toEqual({ kind: 'over_budget', scope: 'destination', freesAt: NOW + 86_400_000 });
  });

  it('stores nothing for a refusal and counts nothing for a replay', async () => {
    // Prepare
    const store = storeFor();
    const counter = aCounter(1);
    const first = aCommand();
    const refusedCommand = aCommand();
    await store.admit(first.record, first.evidence, 'sealed', [counter]);
    // Act
    const replay = await store.admit(first.record, first.evidence, 'sealed', [counter]);
    const refused = await store.admit(refusedCommand.record, refusedCommand.evidence, 'sealed', [counter]);
    // Assess
    expect(replay).toMatchObject({ kind: 'exists', stored: { record: first.record } });
    expect(refused.kind).toBe('over_budget');
    expect(await store.get(refusedCommand.record.idempotencyKey)).toBeUndefined();
  });

  it('admits exactly the limit under 50 concurrent admissions to one counter', async () => {
    // Prepare
    const store = storeFor();
    const counter = aCounter(4);
    const commands = Array.from({ length: 50 }, aCommand);
    // Act
    const results = await Promise.all(
      commands.map(({ record, evidence }) => store.admit(record, evidence, 'sealed', [counter])),
    );
    // Assess
    expect(results.filter((r) => r.kind === 'admitted')).toHaveLength(4);
    expect(results.filter((r) => r.kind === 'over_budget')).toHaveLength(46);
  });

  it('behaves like a plain admission without counters', async () => {
    const store = storeFor();
    const { record, evidence } = aCommand();
    expect((await store.admit(record, evidence, 'sealed', [])).kind).toBe('admitted');
    expect((await store.admit(record, evidence, 'sealed')).kind).toBe('exists');
  });
});
