/**
 * Failover at the use-case level (issue 23, docs/providers/failover.md): the sender, the reconciler
 * and the receipts use case over the in-memory store with two in-process providers, each keeping a
 * ledger of the messages it accepted (what a real provider would have sent). The same over
 * DynamoDB Local, with the table's provider health: test/integration/failover.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { receiptsSettleFor } from '../../../shared/composition/provider.js';
import type { CircuitState, HealthSample } from '../../../shared/domain/circuit.js';
import type { NotificationRecord } from '../../../shared/domain/notification.js';
import { clientReference } from '../../../shared/domain/provider.js';
import type { ProviderHealth } from '../../../shared/ports/provider-health.js';
import { DESTINATION_FAULTS } from '../../../shared/providers/registry.js';
import { dispatchNotification } from '../../../shared/usecases/dispatch-notification.js';
import { ingestReceipt } from '../../../shared/usecases/ingest-receipt.js';
import { reconcileKey } from '../../../shared/usecases/reconcile-key.js';
import { type LedgerProvider, ledgerProvider } from '../../support/ledger-provider.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';
import {
  acceptedRecord,
  keyOnShard,
  POLICY,
  plant,
  recordingQueue,
  switchableCipher,
  T0,
} from '../../support/reconcile-fixtures.js';

/** Circuits set by the test, and every sample the sender recorded. */
function fakeHealth(states: Readonly<Record<string, CircuitState>> = {}) {
  const samples: { provider: string; sample: HealthSample }[] = [];
  const viewed: string[] = [];
  const health: ProviderHealth = {
    async view(providers) {
      viewed.push(...providers);
      return providers.map((provider) => ({ provider, state: states[provider] ?? 'closed' }));
    },
    async record(provider, sample) {
      samples.push({ provider, sample });
    },
  };
  return { health, samples, viewed };
}

/** An accepted command whose primary is `primary`, and a sender and a reconciler with both providers. */
async function twoProviders(options: {
  primary: LedgerProvider;
  secondary: LedgerProvider;
  health?: ProviderHealth;
}) {
  const store = new MemoryNotificationStore();
  const cipher = switchableCipher();
  const clock = new ManualClock(T0 + 1_000);
  const admitted = acceptedRecord(keyOnShard(0)).next;
  const record: NotificationRecord = { ...admitted, provider: { name: options.primary.name } };
  await plant(store, cipher, record);
  const providers = [options.primary, options.secondary];
  const common = { store, cipher, clock, policy: POLICY };
  const sender = {
    ...common,
    provider: options.primary,
    providers,
    owner: 'test-sender',
    destinationFaults: DESTINATION_FAULTS,
    ...(options.health ? { health: options.health } : {}),
  };
  const reconciler = { ...common, provider: options.primary, providers, queue: recordingQueue() };
  const key = record.idempotencyKey;
  const current = async () => {
    const stored = await store.get(key);
    if (!stored) throw new Error('test: command gone');
    return stored.record;
  };
  /** Sender and reconciler take turns at each due time until the command is final or sent. */
  const runUntilSettled = async () => {
    for (let step = 0; step < 200; step++) {
      const record = await current();
      if (
        record.state === 'sent' ||
        record.state === 'delivered' ||
        ['expired', 'failed'].includes(record.state)
      )
        return record;
      const next = Math.max(record.nextAttemptAt ?? 0, record.state === 'accepted' ? 0 : (record.dueAt ?? 0));
      if (next > clock.now()) clock.advance(next - clock.now());
      if (record.state === 'accepted') await dispatchNotification(sender, key);
      else await reconcileKey(reconciler, key);
    }
    throw new Error('test: command never settled');
  };
  return { store, clock, sender, reconciler, key, current, runUntilSettled };
}

/** SMS across both ledgers for the command. */
const smsAcross = (...providers: LedgerProvider[]) => providers.reduce((n, p) => n + p.ledger.length, 0);

describe('failover: a command whose primary is down goes through the secondary, one SMS in all', () => {
  it('connection refused at the primary: the next attempt goes to the secondary, recorded per attempt', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'down');
    const secondary = ledgerProvider('eum');
    const run = await twoProviders({ primary, secondary });

    // Act
    const settled = await run.runUntilSettled();

    // Assess
    expect(settled).toMatchObject({
      state: 'sent',
      attempts: 2,
      provider: { name: 'eum', messageId: 'eum-1' },
      attemptProviders: [
        { attempt: 1, provider: 'twilio' },
        { attempt: 2, provider: 'eum' },
      ],
    });
    expect(smsAcross(primary, secondary)).toBe(1);
    expect(secondary.calls.map((c) => c.clientReference)).toEqual([clientReference(run.key, 2)]);
    const claims = (await run.store.evidence(run.key)).filter((e) => e.reason === 'claimed');
    expect(claims.map((e) => [e.attempt, e.provider])).toEqual([
      [1, 'twilio'],
      [2, 'eum'],
    ]);
  });

  it('an open circuit at the primary: the first attempt goes to the secondary, and its sample is recorded', async () => {
    // Prepare
    const primary = ledgerProvider('twilio');
    const secondary = ledgerProvider('eum');
    const health = fakeHealth({ twilio: 'open' });
    const run = await twoProviders({ primary, secondary, health: health.health });

    // Act
    await dispatchNotification(run.sender, run.key);

    // Assess
    expect(await run.current()).toMatchObject({ state: 'sent', attempts: 1, provider: { name: 'eum' } });
    expect(primary.calls).toHaveLength(0);
    expect(health.viewed).toEqual(['twilio', 'eum']);
    expect(health.samples).toEqual([{ provider: 'eum', sample: 'ok' }]);
  });

  it('a closed primary: only its circuit is read (no probe of the secondary is taken)', async () => {
    // Prepare
    const health = fakeHealth();
    const run = await twoProviders({
      primary: ledgerProvider('twilio'),
      secondary: ledgerProvider('eum'),
      health: health.health,
    });

    // Act
    await dispatchNotification(run.sender, run.key);

    // Assess
    expect(health.viewed).toEqual(['twilio']);
    expect(health.samples).toEqual([{ provider: 'twilio', sample: 'ok' }]);
  });

  it('samples: a refusal before acceptance is an error, a timeout unknown', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'down');
    const secondary = ledgerProvider('eum', 'timeout_after_accept');
    const health = fakeHealth();
    const run = await twoProviders({ primary, secondary, health: health.health });

    // Act
    await dispatchNotification(run.sender, run.key);
    run.clock.advance(60_000);
    await dispatchNotification(run.sender, run.key);

    // Assess
    expect(health.samples).toEqual([
      { provider: 'twilio', sample: 'error' },
      { provider: 'eum', sample: 'unknown' },
    ]);
  });
});

describe('failover never sends a second SMS after an attempt that may have sent', () => {
  it('a timeout after the primary accepted: found at the primary, never sent through the secondary', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'timeout_after_accept');
    const secondary = ledgerProvider('eum');
    const run = await twoProviders({ primary, secondary });

    // Act
    const settled = await run.runUntilSettled();

    // Assess
    expect(settled).toMatchObject({
      state: 'sent',
      lastReason: 'reconciled_found',
      provider: { name: 'twilio' },
    });
    expect(secondary.calls).toHaveLength(0);
    expect(secondary.lookups).toHaveLength(0);
    expect(smsAcross(primary, secondary)).toBe(1);
  });

  it('a timeout at a primary that cannot prove absence (End User Messaging): never fails over, ends unknown_at_expiry', async () => {
    // Prepare
    const primary = ledgerProvider('eum', 'timeout_before_accept');
    const secondary = ledgerProvider('twilio');
    const run = await twoProviders({ primary, secondary });

    // Act
    const settled = await run.runUntilSettled();

    // Assess
    expect(settled).toMatchObject({ state: 'expired', lastReason: 'unknown_at_expiry' });
    expect(secondary.calls).toHaveLength(0);
    expect(primary.lookups.length).toBeGreaterThan(0);
    expect(smsAcross(primary, secondary)).toBe(0);
  });

  it('a timeout at a primary that proves absence (two reads, settle apart): the secondary sends the one SMS', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'timeout_before_accept');
    const secondary = ledgerProvider('eum');
    const run = await twoProviders({ primary, secondary });

    // Act
    const settled = await run.runUntilSettled();

    // Assess
    expect(settled).toMatchObject({ state: 'sent', attempts: 2, provider: { name: 'eum' } });
    const reasons = (await run.store.evidence(run.key)).map((e) => e.reason);
    expect(reasons).toContain('reconciled_absent');
    expect(smsAcross(primary, secondary)).toBe(1);
  });

  it('a refusal of the destination at the primary: failed, the secondary never called', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'refuse_destination');
    const secondary = ledgerProvider('eum');
    const run = await twoProviders({ primary, secondary });

    // Act
    const settled = await run.runUntilSettled();

    // Assess
    expect(settled).toMatchObject({ state: 'failed', reasonDetail: 'twilio:21211' });
    expect(secondary.calls).toHaveLength(0);
  });
});

describe('a permanent refusal of the account fails over; one of the destination never does', () => {
  it('an account the primary suspended: the secondary sends the one SMS, the primary code kept in the evidence', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'refuse_account');
    const secondary = ledgerProvider('eum');
    const run = await twoProviders({ primary, secondary });

    // Act
    const settled = await run.runUntilSettled();

    // Assess
    expect(settled).toMatchObject({ state: 'sent', attempts: 2, provider: { name: 'eum' } });
    expect(smsAcross(primary, secondary)).toBe(1);
    const refusal = (await run.store.evidence(run.key)).find(
      (e) => e.reason === 'provider_rejected_permanent',
    );
    expect(refusal).toMatchObject({
      fromState: 'dispatching',
      toState: 'accepted',
      reasonDetail: 'twilio:30002',
    });
  });

  it('both providers refuse the account: failed with the last provider code, never a third call', async () => {
    // Prepare
    const primary = ledgerProvider('twilio', 'refuse_account');
    const secondary = ledgerProvider('eum', 'refuse_account');
    const run = await twoProviders({ primary, secondary });

    // Act
    const settled = await run.runUntilSettled();

    // Assess
    expect(settled).toMatchObject({ state: 'failed', attempts: 2 });
    expect(primary.calls).toHaveLength(1);
    expect(secondary.calls).toHaveLength(1);
    expect(smsAcross(primary, secondary)).toBe(0);
  });
});

describe("an attempt's lookups and receipts are its own provider's", () => {
  it("the reconciler asks the current attempt's provider, with its capabilities", async () => {
    // Prepare: attempt 1 refused at the primary, attempt 2 timed out at the secondary
    const primary = ledgerProvider('twilio', 'down');
    const secondary = ledgerProvider('eum', 'timeout_after_accept');
    const run = await twoProviders({ primary, secondary });
    await dispatchNotification(run.sender, run.key);
    run.clock.advance(60_000);
    await dispatchNotification(run.sender, run.key);
    const unknown = await run.current();
    run.clock.advance((unknown.dueAt ?? 0) - run.clock.now());

    // Act
    await reconcileKey(run.reconciler, run.key);

    // Assess
    expect(primary.lookups).toHaveLength(0);
    expect(secondary.lookups.map((l) => l.attempt)).toEqual([2]);
    expect(await run.current()).toMatchObject({
      state: 'sent',
      provider: { name: 'eum', messageId: 'eum-1' },
    });
  });

  it('a Twilio receipt never settles an End User Messaging attempt; an End User Messaging event does', async () => {
    // Prepare: attempt 2 at End User Messaging, its outcome unknown
    const primary = ledgerProvider('twilio', 'down');
    const secondary = ledgerProvider('eum', 'timeout_after_accept');
    const run = await twoProviders({ primary, secondary });
    await dispatchNotification(run.sender, run.key);
    run.clock.advance(60_000);
    await dispatchNotification(run.sender, run.key);
    const settle = receiptsSettleFor({ providers: ['twilio', 'eum'] });
    if (settle === undefined) throw new Error('test: two providers settle by edge');
    const deps = { store: run.store, clock: run.clock, policy: POLICY, receiptsSettle: settle };
    const receipt = {
      clientReference: clientReference(run.key, 2),
      messageId: 'eum-1',
      status: 'delivered' as const,
      providerStatus: 'delivered',
    };

    // Act
    const fromTwilio = await ingestReceipt(deps, { ...receipt, provider: 'twilio' });
    const fromEum = await ingestReceipt(deps, { ...receipt, provider: 'eum' });

    // Assess
    expect(fromTwilio).toEqual({ kind: 'ignored', why: 'other_provider' });
    expect(fromEum).toEqual({ kind: 'applied', to: 'delivered' });
    expect(await run.current()).toMatchObject({ provider: { name: 'eum', messageId: 'eum-1' } });
  });

  it('the Twilio route settles the simulator too (its adapter is Twilio’s), one provider needs no check', () => {
    // Act
    const settle = receiptsSettleFor({ providers: ['simulator', 'eum'] });
    // Assess
    expect(settle?.('twilio', 'simulator')).toBe(true);
    expect(settle?.('eum', 'simulator')).toBe(false);
    expect(receiptsSettleFor({ providers: ['twilio'] })).toBeUndefined();
  });
});

describe('one provider: behaviour unchanged', () => {
  it('no attempt providers are written without a provider list', async () => {
    // Prepare
    const primary = ledgerProvider('twilio');
    const run = await twoProviders({ primary, secondary: ledgerProvider('eum') });
    const { providers: _, ...single } = run.sender;

    // Act
    await dispatchNotification(single, run.key);

    // Assess
    const record = await run.current();
    expect(record).toMatchObject({ state: 'sent', provider: { name: 'twilio' } });
    expect('attemptProviders' in record).toBe(false);
  });
});
