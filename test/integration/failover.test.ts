/**
 * Failover over DynamoDB Local (issue 23, docs/providers/failover.md): the sender and the
 * reconciler use cases on the real table adapter (each attempt's provider persisted in
 * `attempt_providers`) with the table's provider health (the real circuits, shared through the
 * table), and two in-process providers keeping ledgers of what they accepted. One SMS per command
 * is counted across both ledgers.
 *
 * Not yet the local stack's two simulators (issue 23 item 4: `down` and `brownout` faults, two
 * simulators under `npm start`): when they land, the same scenarios go through `startLocalStack`.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import { createDynamoProviderHealth } from '../../shared/adapters/dynamodb/provider-health.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import type { CircuitSettings } from '../../shared/domain/circuit.js';
import type { NotificationRecord } from '../../shared/domain/notification.js';
import type { ProviderHealth } from '../../shared/ports/provider-health.js';
import { DESTINATION_FAULTS } from '../../shared/providers/registry.js';
import { dispatchNotification } from '../../shared/usecases/dispatch-notification.js';
import { reconcileKey } from '../../shared/usecases/reconcile-key.js';
import { uniqueName } from '../support/fixtures.js';
import { type LedgerProvider, ledgerProvider, smsFor } from '../support/ledger-provider.js';
import { ManualClock } from '../support/manual-clock.js';
import {
  acceptedRecord,
  keyOnShard,
  POLICY,
  plant,
  recordingQueue,
  switchableCipher,
  T0,
} from '../support/reconcile-fixtures.js';

/** Small numbers so a few commands open the circuit; the probe period outlasts each scenario. */
const CIRCUIT: CircuitSettings = {
  windowMs: 30_000,
  minSamples: 3,
  errorRate: 0.5,
  unknownRate: 0.2,
  probePeriodMs: 120_000,
};

let client: DynamoDBClient;

beforeAll(() => {
  client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(() => client.destroy());

/**
 * A sender and a reconciler with `primary` then `secondary`, over a table of their own (its
 * circuits are shared by every sender of that table: one test's open circuit must not route another's).
 */
async function twoProviders(primary: LedgerProvider, secondary: LedgerProvider) {
  const tableName = uniqueName('failover');
  await ensureTable(client, tableName);
  // The fixtures' clock is in the past: a long retention keeps the items' TTL ahead of the wall
  // clock, which DynamoDB Local deletes by.
  const store = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
  const cipher = switchableCipher();
  const clock = new ManualClock(T0 + 1_000);
  const health: ProviderHealth = createDynamoProviderHealth({
    client,
    tableName,
    settings: CIRCUIT,
    role: 'sender',
    cacheMs: 0,
  });
  const providers = [primary, secondary];
  const common = { store, cipher, clock, policy: POLICY };
  const sender = {
    ...common,
    provider: primary,
    providers,
    health,
    owner: 'failover-sender',
    destinationFaults: DESTINATION_FAULTS,
  };
  const reconciler = { ...common, provider: primary, providers, queue: recordingQueue() };

  const current = async (key: string): Promise<NotificationRecord> => {
    const stored = await store.get(key);
    if (!stored) throw new Error(`test: ${key} gone`);
    return stored.record;
  };
  /** Admits a command whose provider is the primary. */
  const admitted = async (): Promise<string> => {
    const record = acceptedRecord(keyOnShard(0, uniqueName('fo')), clock.now()).next;
    await plant(store, cipher, { ...record, provider: { name: primary.name } });
    return record.idempotencyKey;
  };
  /** Sender and reconciler take turns, each at the command's next due time, until it is sent or final. */
  const settle = async (key: string): Promise<NotificationRecord> => {
    for (let step = 0; step < 200; step++) {
      const record = await current(key);
      if (['sent', 'delivered', 'undelivered', 'expired', 'failed'].includes(record.state)) return record;
      const due = record.state === 'accepted' ? (record.nextAttemptAt ?? 0) : (record.dueAt ?? 0);
      if (due > clock.now()) clock.advance(due - clock.now());
      if (record.state === 'accepted') await dispatchNotification(sender, key);
      else await reconcileKey(reconciler, key);
    }
    throw new Error(`test: ${key} never settled`);
  };
  const claims = async (key: string) =>
    (await store.evidence(key)).filter((e) => e.reason === 'claimed').map((e) => [e.attempt, e.provider]);
  return { store, clock, health, current, admitted, settle, claims };
}

describe('failover over DynamoDB Local', () => {
  it('the primary down: each command is delivered through the secondary with exactly one SMS across both ledgers, and once the circuit opens the secondary takes first attempts', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'down');
    const secondary = ledgerProvider('eum');
    const run = await twoProviders(primary, secondary);
    const keys = [await run.admitted(), await run.admitted(), await run.admitted(), await run.admitted()];

    // Act
    const settled: NotificationRecord[] = [];
    for (const key of keys) settled.push(await run.settle(key));

    // Assess: every command sent once, by the secondary
    for (const [i, record] of settled.entries()) {
      expect(record).toMatchObject({ state: 'sent', provider: { name: 'eum' } });
      expect(smsFor(keys[i] ?? '', primary, secondary)).toBe(1);
    }
    // The first three tried the primary first (3 errors open its circuit); the fourth went straight to the secondary.
    expect(await run.claims(keys[0] ?? '')).toEqual([
      [1, 'twilio'],
      [2, 'eum'],
    ]);
    expect(settled[0]?.attemptProviders).toEqual([
      { attempt: 1, provider: 'twilio' },
      { attempt: 2, provider: 'eum' },
    ]);
    expect(await run.claims(keys[3] ?? '')).toEqual([[1, 'eum']]);
    expect(primary.calls).toHaveLength(3);
    const [primaryCircuit] = await run.health.view(['twilio'], run.clock.now());
    expect(primaryCircuit?.state).toBe('open');
  });

  it('a timeout after the primary accepted: found there by the reconciler, never sent through the secondary', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'timeout_after_accept');
    const secondary = ledgerProvider('eum');
    const run = await twoProviders(primary, secondary);
    const key = await run.admitted();

    // Act
    const settled = await run.settle(key);

    // Assess
    expect(settled).toMatchObject({
      state: 'sent',
      lastReason: 'reconciled_found',
      provider: { name: 'twilio' },
    });
    expect(secondary.calls).toHaveLength(0);
    expect(secondary.lookups).toHaveLength(0);
    expect(smsFor(key, primary, secondary)).toBe(1);
  });

  it('an unknown at a primary that cannot prove absence (End User Messaging): never fails over, ends unknown_at_expiry', async () => {
    // Prepare
    const primary = ledgerProvider('eum', 'timeout_before_accept');
    const secondary = ledgerProvider('twilio');
    const run = await twoProviders(primary, secondary);
    const key = await run.admitted();

    // Act
    const settled = await run.settle(key);

    // Assess
    expect(settled).toMatchObject({ state: 'expired', lastReason: 'unknown_at_expiry' });
    expect(secondary.calls).toHaveLength(0);
    expect(smsFor(key, primary, secondary)).toBe(0);
  });

  it('a timeout at a primary that proves absence: the secondary sends the one SMS after the proof', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'timeout_before_accept');
    const secondary = ledgerProvider('eum');
    const run = await twoProviders(primary, secondary);
    const key = await run.admitted();

    // Act
    const settled = await run.settle(key);

    // Assess
    expect(settled).toMatchObject({ state: 'sent', attempts: 2, provider: { name: 'eum' } });
    const trail = (await run.store.evidence(key)).map((e) => `${e.reason}@${e.provider}`);
    expect(trail.indexOf('reconciled_absent@twilio')).toBeGreaterThan(-1);
    expect(trail.indexOf('reconciled_absent@twilio')).toBeLessThan(trail.indexOf('claimed@eum'));
    expect(smsFor(key, primary, secondary)).toBe(1);
  });
});
