/**
 * A hot number's budget written on its own (docs/abuse-limits.md#a-hot-number), against DynamoDB
 * Local: single-item conditional slot writes are exact under concurrency, a slot given back frees
 * exactly one, and a slot whose admission never wrote its command (a crash between the two
 * writes) holds only until its window ends.
 */
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import { giveBackSlot, takeSlot } from '../../shared/adapters/dynamodb/budget-slots.js';
import { counterItemKey } from '../../shared/adapters/dynamodb/item-mapping.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import {
  ADMISSION_LOG_ATTRIBUTE,
  type BudgetCounter,
  budgetCounters,
  parseDestinationLimits,
} from '../../shared/domain/budgets.js';
import { admit } from '../../shared/domain/notification.js';
import { uniqueName } from '../support/fixtures.js';

const MINUTE = 60_000;
const NOW = Date.UTC(2026, 11, 2, 12, 7);

const client = new DynamoDBClient({
  endpoint: inject('dynamodbEndpoint'),
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const doc = DynamoDBDocumentClient.from(client);
const table = uniqueName('slots');
const target = { doc, table };
let numbers = 0;

/** The counters of an admission at `at` to a number of its own (one per test), under `limits`. */
function numberOf(limits: string) {
  const fingerprint = `fp1:slots-${numbers++}`;
  const policy = { destination: parseDestinationLimits(limits), country: [] };
  return {
    fingerprint,
    at: (at: number) => budgetCounters(policy, fingerprint, undefined, at) as [BudgetCounter],
  };
}

async function logOf(counter: BudgetCounter): Promise<unknown> {
  const out = await doc.send(
    new GetCommand({ TableName: table, Key: counterItemKey(counter.key), ConsistentRead: true }),
  );
  return out.Item?.[ADMISSION_LOG_ATTRIBUTE];
}

function anAdmission(fingerprint: string, key: string, now: number) {
  return admit({
    request: {
      idempotencyKey: key,
      eventId: `evt-${key}`,
      channel: 'sms',
      template: 'password_reset',
      locale: 'en',
      expiresAt: now + 10 * MINUTE,
      sensitive: { phone: '+14155550123', params: { code: '483920' } },
    },
    destinationFingerprint: fingerprint,
    payloadFingerprint: `pf-${key}`,
    providerName: 'simulator',
    now,
    safetyNetAt: now + 5 * MINUTE,
  });
}

beforeAll(async () => {
  await ensureTable(client, table);
});

afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: table }));
  client.destroy();
});

describe('budget slots written on their own (a hot number)', () => {
  it('take exactly the budget of 200 concurrent slot writes to one number; the rest learn when it frees up', async () => {
    // Prepare
    const number = numberOf('3/15m');
    const [counter] = number.at(NOW);
    // Act
    const results = await Promise.all(Array.from({ length: 200 }, () => takeSlot(target, counter)));
    // Assess
    expect(results.filter((r) => r.kind === 'taken')).toHaveLength(3);
    const full = results.filter((r) => r.kind === 'full');
    expect(full).toHaveLength(197);
    expect(new Set(full.map((r) => (r.kind === 'full' ? r.freesAt : 0)))).toEqual(
      new Set([NOW + 15 * MINUTE]),
    );
    expect(await logOf(counter)).toEqual([NOW, NOW, NOW]);
  });

  it('free exactly one slot when one is given back', async () => {
    // Prepare: the budget spent at one instant.
    const number = numberOf('3/15m');
    const [counter] = number.at(NOW);
    for (let i = 0; i < 3; i++) expect((await takeSlot(target, counter)).kind).toBe('taken');
    // Act
    const givenBack = await giveBackSlot(target, counter);
    const again = await Promise.all([takeSlot(target, counter), takeSlot(target, counter)]);
    // Assess
    expect(givenBack).toBe(true);
    expect(again.map((r) => r.kind).sort()).toEqual(['full', 'taken']);
    expect(await logOf(counter)).toEqual([NOW, NOW, NOW]);
  });

  it("give back this admission's entry, not a newer one that landed in front of it", async () => {
    // Prepare
    const number = numberOf('3/15m');
    const [mine] = number.at(NOW);
    const [newer] = number.at(NOW + 1_000);
    await takeSlot(target, mine);
    await takeSlot(target, newer);
    // Act
    const givenBack = await giveBackSlot(target, mine);
    // Assess
    expect(givenBack).toBe(true);
    expect(await logOf(mine)).toEqual([NOW + 1_000]);
  });

  it('hold a slot whose admission crashed before its command only until the window ends, never longer', async () => {
    // Prepare: 1 per 15 minutes; a slot taken at NOW, then the process died (no command, nothing given back).
    const store = new DynamoNotificationStore({ client, tableName: table, evidenceRetentionDays: 400 });
    const number = numberOf('1/15m');
    expect((await takeSlot(target, number.at(NOW)[0])).kind).toBe('taken');
    const soon = NOW + MINUTE;
    const later = NOW + 15 * MINUTE;
    // Act: another request a minute later, and one when the orphaned slot has left its window.
    const first = anAdmission(number.fingerprint, 'k-soon', soon);
    const refused = await store.admit(first.next, first.evidence, 'sealed', number.at(soon));
    const second = anAdmission(number.fingerprint, 'k-later', later);
    const admitted = await store.admit(second.next, second.evidence, 'sealed', number.at(later));
    // Assess
    expect(refused).toEqual({ kind: 'over_budget', scope: 'destination', freesAt: NOW + 15 * MINUTE });
    expect(admitted.kind).toBe('admitted');
  });
});
