import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import { admissionEvidence } from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import { admit, applyTransition, type NotificationRecord } from '../../shared/domain/notification.js';
import { uniqueName } from '../support/fixtures.js';

let client: DynamoDBClient;
let store: DynamoNotificationStore;
let tableName: string;
const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);

beforeAll(async () => {
  client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  tableName = uniqueName('store');
  await ensureTable(client, tableName);
  store = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
});
afterAll(() => client.destroy());

let counter = 0;
async function admitted(overrides: { dueAt?: number } = {}): Promise<NotificationRecord> {
  const key = `store-test-${++counter}-${Math.random().toString(36).slice(2)}`;
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
    safetyNetAt: overrides.dueAt ?? NOW + 60_000,
  });
  const result = await store.admit(next, evidence, 'aes1.sealed.payload');
  expect(result.kind).toBe('admitted');
  return next;
}

const claim = (record: NotificationRecord, owner: string) =>
  applyTransition(record, {
    to: 'dispatching',
    reason: 'claimed',
    actor: 'sender',
    at: NOW + 1,
    set: { attempts: record.attempts + 1, leaseUntil: NOW + 10_000, leaseOwner: owner, dueAt: NOW + 10_000 },
    remove: ['nextAttemptAt'],
  });

describe('DynamoNotificationStore', () => {
  it('admission returns the existing command, with its sealed payload, to the loser of the race', async () => {
    // Prepare
    const record = await admitted();
    // Act
    const again = await store.admit(record, admissionEvidence(record), 'aes1.other');
    // Assess
    expect(again).toEqual({ kind: 'exists', stored: { record, sealedPayload: 'aes1.sealed.payload' } });
  });

  it('lets exactly one of 10 concurrent claims of the same version win', async () => {
    // Prepare
    const record = await admitted();
    // Act
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.transition(claim(record, `owner-${i}`))),
    );
    // Assess
    expect(results.filter((r) => r.kind === 'written')).toHaveLength(1);
    const stored = await store.get(record.idempotencyKey);
    expect(stored?.record).toMatchObject({ state: 'dispatching', version: 2, attempts: 1 });
    const evidence = await store.evidence(record.idempotencyKey);
    expect(evidence.map((e) => [e.seq, e.fromState, e.toState])).toEqual([
      [1, null, 'accepted'],
      [2, 'accepted', 'dispatching'],
    ]);
  });

  it('returns the current record when a transition is stale', async () => {
    // Prepare
    const record = await admitted();
    await store.transition(claim(record, 'first'));
    // Act
    const stale = await store.transition(claim(record, 'second'));
    // Assess
    expect(stale.kind).toBe('stale');
    expect(stale.kind === 'stale' && stale.current?.leaseOwner).toBe('first');
  });

  it('removes the sealed payload and the due-index keys when a command becomes final', async () => {
    // Prepare
    const record = await admitted();
    const claimed = claim(record, 'x');
    await store.transition(claimed);
    // Act
    await store.transition(
      applyTransition(claimed.next, {
        to: 'failed',
        reason: 'provider_rejected_permanent',
        actor: 'sender',
        at: NOW + 2,
      }),
    );
    // Assess
    const raw = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND sk = :sk',
        ExpressionAttributeValues: { ':pk': { S: record.idempotencyKey }, ':sk': { S: 'CMD' } },
      }),
    );
    const item = raw.Items?.[0] ?? {};
    expect(item.state?.S).toBe('failed');
    for (const gone of ['sealed_payload', 'due_at', 'due_shard', 'lease_until', 'lease_owner'])
      expect(item[gone]).toBeUndefined();
    expect(item.ttl?.N).toBeDefined();
    expect(Number(item.ttl?.N)).toBeGreaterThan((NOW + 600_000) / 1000 + 399 * 86_400);
  });

  it('lists only due items from the sparse index, across shards and pages', async () => {
    // Prepare
    const due = await Promise.all(Array.from({ length: 7 }, () => admitted({ dueAt: NOW - 1_000 })));
    await Promise.all(Array.from({ length: 5 }, () => admitted({ dueAt: NOW + 3_600_000 })));
    // Act
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.due(NOW, 3, cursor);
      seen.push(...page.items.map((r) => r.idempotencyKey));
      cursor = page.cursor;
    } while (cursor);
    // Assess
    for (const r of due) expect(seen).toContain(r.idempotencyKey);
    expect(new Set(seen).size).toBe(seen.length);
    expect(TableSchema.dueShardCount).toBeGreaterThan(1);
  });

  it('reschedules without a new version or evidence, guarded by version', async () => {
    // Prepare
    const record = await admitted();
    // Act
    const moved = await store.reschedule(record, NOW + 5);
    const stale = await store.reschedule({ ...record, version: 7 }, NOW + 6);
    // Assess
    expect(moved.kind).toBe('written');
    expect(stale.kind).toBe('stale');
    const stored = await store.get(record.idempotencyKey);
    expect(stored?.record).toMatchObject({ version: 1, dueAt: NOW + 5 });
    expect(await store.evidence(record.idempotencyKey)).toHaveLength(1);
  });
});
