import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import { type Clock, systemClock } from '../../shared/domain/clock.js';
import { checkClock } from '../../shared/domain/clock-skew.js';
import { dispatchNotification } from '../../shared/usecases/dispatch-notification.js';
import { uniqueName } from '../support/fixtures.js';
import {
  acceptedRecord,
  countingProvider,
  POLICY,
  plant,
  switchableCipher,
} from '../support/reconcile-fixtures.js';

let client: DynamoDBClient;
let tableName: string;
const clients: DynamoDBClient[] = [];

const aClient = () =>
  new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

beforeAll(async () => {
  client = aClient();
  tableName = uniqueName('server-time');
  await ensureTable(client, tableName);
});
afterAll(() => {
  for (const c of [client, ...clients]) c.destroy();
});

/** A store over DynamoDB Local whose answers are sampled on `clock` (its own client each: one middleware). */
function aStore(clock: Clock) {
  const own = aClient();
  clients.push(own);
  return new DynamoNotificationStore({
    client: own,
    tableName,
    evidenceRetentionDays: 400,
    serverTimeClock: clock,
  });
}

/** This machine's clock, `slowByMs` behind (DynamoDB Local answers on the machine's own clock). */
const slowClock = (slowByMs: number): Clock => ({ now: () => systemClock.now() - slowByMs });

let counter = 0;
const aKey = () => `server-time-${++counter}-${Math.random().toString(36).slice(2)}`;

describe('DynamoNotificationStore: the server time its answers carry (docs/design.md#clock-skew)', () => {
  it("DynamoDB Local's answers carry a Date: a correct clock is within the bound", async () => {
    // Prepare
    const store = aStore(systemClock);
    // Act
    await store.get(aKey());
    // Assess
    const sample = store.latestServerTime();
    expect(sample).toBeDefined();
    expect(sample?.serverDate ? sample.serverDate % 1000 : -1).toBe(0);
    expect(checkClock(sample, systemClock.now()).kind).toBe('within_bound');
  });

  it('an error answer (a failed condition) is sampled too', async () => {
    // Prepare
    const { next } = acceptedRecord(aKey(), systemClock.now());
    await plant(aStore(systemClock), switchableCipher(), next);
    const store = aStore(systemClock);
    // Act: its only answer is a refused admission (the key is taken)
    const again = await store.admit(next, acceptedRecord(next.idempotencyKey).evidence, 'aes1.x');
    // Assess
    expect(again.kind).toBe('exists');
    expect(store.latestServerTime()).toBeDefined();
  });

  it('a sender 15 s slow, 4 s after the token expired, expires the command instead of claiming it', async () => {
    // Prepare: the token expired 4 s ago in real time; the sender's clock says 11 s are left
    const clock = slowClock(15_000);
    const store = aStore(clock);
    const cipher = switchableCipher();
    const provider = countingProvider();
    const realNow = systemClock.now();
    const { next } = acceptedRecord(aKey(), realNow - 60_000, 56_000);
    await plant(store, cipher, next);
    const deps = { store, serverTime: store, cipher, provider, clock, policy: POLICY, owner: 'skewed' };
    // Act
    const report = await dispatchNotification(deps, next.idempotencyKey);
    // Assess
    expect(report).toMatchObject({ kind: 'transitioned', to: 'expired', reason: 'expired_before_dispatch' });
    expect(provider.sends).toBe(0);
  });

  it('a sender 15 s slow with time left sends nothing: the claim is given back with clock_skew', async () => {
    // Prepare
    const clock = slowClock(15_000);
    const store = aStore(clock);
    const cipher = switchableCipher();
    const provider = countingProvider();
    const { next } = acceptedRecord(aKey(), clock.now(), 10 * 60_000);
    await plant(store, cipher, next);
    const deps = { store, serverTime: store, cipher, provider, clock, policy: POLICY, owner: 'skewed' };
    // Act
    const report = await dispatchNotification(deps, next.idempotencyKey);
    // Assess
    expect(report).toMatchObject({ kind: 'refused', why: 'clock_skew', recorded: true });
    expect(report.kind === 'refused' ? report.detail : '').toMatch(/^clock_skew:behind:1[45]$/);
    expect(provider.sends).toBe(0);
    const stored = await store.get(next.idempotencyKey);
    expect(stored?.record).toMatchObject({ state: 'accepted', attempts: 0, lastReason: 'call_not_started' });
  });
});
