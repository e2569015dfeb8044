import { describe, expect, it } from 'vitest';
import { POISON_POLICY } from '../../../shared/domain/poison.js';
import type { ReconcileDeps } from '../../../shared/usecases/reconcile-due.js';
import { reconcileDue } from '../../../shared/usecases/reconcile-due.js';
import { reconcileKey } from '../../../shared/usecases/reconcile-key.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';
import {
  acceptedRecord,
  countingProvider,
  keyOnShard,
  POLICY,
  plant,
  recordingQueue,
  sentRecord,
  switchableCipher,
  T0,
  unknownRecord,
} from '../../support/reconcile-fixtures.js';

function aWorld(overrides: Partial<ReconcileDeps> = {}) {
  const store = new MemoryNotificationStore();
  const cipher = switchableCipher();
  const provider =
    (overrides.provider as ReturnType<typeof countingProvider> | undefined) ?? countingProvider();
  const queue = recordingQueue();
  const clock = new ManualClock(T0 + 5_000);
  const errors: unknown[] = [];
  const deps: ReconcileDeps = {
    store,
    cipher,
    provider,
    queue,
    clock,
    policy: POLICY,
    onItemError: (report) => errors.push(report),
    ...overrides,
  };
  return { store, cipher, provider, queue, clock, errors, deps };
}

describe('reconcileDue: fair, complete passes', () => {
  it('serves every shard in every pass even when shard 0 alone holds more than a pass', async () => {
    // Prepare: 300 due unknowns on shard 0, 2 on each other shard; a pass of 40.
    const world = aWorld({ maxItems: 40 });
    const deep = Array.from({ length: 300 }, () => keyOnShard(0));
    const shallow = [1, 2, 3].flatMap((shard) => [keyOnShard(shard), keyOnShard(shard)]);
    for (const key of [...deep, ...shallow]) await plant(world.store, world.cipher, unknownRecord(key));
    // Act
    const first = await reconcileDue(world.deps);
    // Assess: every shard was read, and every shallow key was looked up in this first pass.
    expect(first.shardEntries.slice(1, 4)).toEqual([2, 2, 2]);
    const looked = new Set(world.provider.lookups.map((l) => l.idempotencyKey));
    for (const key of shallow) expect(looked).toContain(key);
    expect(first.examined).toBeLessThanOrEqual(40);
  });

  it('continues each shard where the previous pass stopped (the cursor survives between passes)', async () => {
    // Prepare: fan-out passes of one round each (nothing is handled, so nothing moves in the index).
    const reconcileQueue = recordingQueue();
    const world = aWorld({ maxItems: 20, maxRounds: 1, reconcileQueue });
    const deep = Array.from({ length: 50 }, () => keyOnShard(0));
    for (const key of deep) await plant(world.store, world.cipher, unknownRecord(key));
    // Act: three passes over the same unchanged index.
    const passes = [];
    for (let i = 0; i < 3; i++) {
      reconcileQueue.messages.length = 0;
      passes.push({
        summary: await reconcileDue(world.deps),
        keys: reconcileQueue.messages.map((m) => m.idempotencyKey),
      });
    }
    // Assess: 20, 20, then the last 10; no key twice before the sweep wraps; all 50 covered.
    expect(passes.map((p) => p.keys.length)).toEqual([20, 20, 10]);
    const all = passes.flatMap((p) => p.keys);
    expect(new Set(all).size).toBe(50);
    expect(passes[2]?.summary.shardsWrapped).toBe(8);
    expect(world.provider.lookups).toHaveLength(0);
  });

  it('reads another round while rounds come back full, up to maxRounds, queueing each key once', async () => {
    // Prepare: 100 due unknowns and 20 due polls; rounds of 16.
    const reconcileQueue = recordingQueue();
    const world = aWorld({ maxItems: 16, maxRounds: 4, reconcileQueue });
    for (let i = 0; i < 100; i++) await plant(world.store, world.cipher, unknownRecord(keyOnShard(i % 4)));
    for (let i = 0; i < 20; i++) await plant(world.store, world.cipher, sentRecord(keyOnShard(4 + (i % 4))));
    // Act
    const first = await reconcileDue(world.deps);
    const firstKeys = reconcileQueue.messages.map((m) => m.idempotencyKey);
    const second = await reconcileDue(world.deps);
    const all = reconcileQueue.messages.map((m) => m.idempotencyKey);
    // Assess: 4 full rounds, then the rest (56 entries: 4 rounds again would be 64) in the second pass.
    expect(first).toMatchObject({ rounds: 4, enqueued: 64 });
    expect(new Set(firstKeys).size).toBe(64);
    expect(second.enqueued).toBe(56);
    expect(second.rounds).toBe(4);
    expect(new Set(all).size).toBe(120);
  });

  it('stops reading rounds once nothing more is due', async () => {
    // Prepare
    const reconcileQueue = recordingQueue();
    const world = aWorld({ maxItems: 16, maxRounds: 10, reconcileQueue });
    for (let i = 0; i < 20; i++) await plant(world.store, world.cipher, unknownRecord(keyOnShard(i % 4)));
    // Act
    const summary = await reconcileDue(world.deps);
    // Assess
    expect(summary).toMatchObject({ rounds: 2, enqueued: 20 });
  });

  it('does not queue a key again while its copy may still wait in the queue; resweeps from the oldest later', async () => {
    // Prepare: 10 due unknowns, a pass of 20, a queue nobody reads (nothing moves in the index).
    const reconcileQueue = recordingQueue();
    const world = aWorld({ maxItems: 20, reconcileQueue, resweepMs: 30_000 });
    const keys = Array.from({ length: 10 }, (_, i) => keyOnShard(i % 4));
    for (const key of keys) await plant(world.store, world.cipher, unknownRecord(key));
    const pass = async () => {
      reconcileQueue.messages.length = 0;
      await reconcileDue(world.deps);
      return reconcileQueue.messages.map((m) => m.idempotencyKey);
    };
    // Act: a pass, another 1 s later, then one past the resweep time.
    const first = await pass();
    world.clock.advance(1_000);
    const again = await pass();
    world.clock.advance(30_000);
    const resweep = await pass();
    // Assess
    expect(new Set(first)).toEqual(new Set(keys));
    expect(again).toEqual([]);
    expect(new Set(resweep)).toEqual(new Set(keys));
  });

  it('while the queue holds more than a round, sweeps afresh only after six resweep times', async () => {
    // Prepare: 10 due unknowns, a queue that reports a backlog of 500 (nobody consumes it).
    const reconcileQueue = recordingQueue();
    reconcileQueue.pending = 500;
    const world = aWorld({ maxItems: 20, reconcileQueue, resweepMs: 10_000 });
    for (let i = 0; i < 10; i++) await plant(world.store, world.cipher, unknownRecord(keyOnShard(i % 4)));
    const pass = async () => {
      reconcileQueue.messages.length = 0;
      const summary = await reconcileDue(world.deps);
      return { summary, count: reconcileQueue.messages.length };
    };
    // Act: a pass, one 15 s later (past the resweep time), one 60 s after the first
    const first = await pass();
    world.clock.advance(15_000);
    const backlogged = await pass();
    world.clock.advance(45_000);
    const forced = await pass();
    reconcileQueue.pending = 0;
    world.clock.advance(10_000);
    const drained = await pass();
    // Assess: no copies while the backlog stands, then the forced resweep, then the normal one
    expect(first.count).toBe(10);
    expect(backlogged).toMatchObject({ count: 0, summary: { resweeps: 0, queueBacklog: 500 } });
    expect(forced.count).toBe(10);
    expect(forced.summary.resweeps).toBeGreaterThan(0);
    expect(drained.count).toBe(10);
  });

  it('puts the poll lane on the status-poll queue, the urgent lane on the reconcile queue', async () => {
    // Prepare: 6 due unknowns (urgent lane) and 6 due polls, two queues.
    const reconcileQueue = recordingQueue();
    const pollQueue = recordingQueue();
    const world = aWorld({ maxItems: 40, reconcileQueue, pollQueue });
    const unknowns = Array.from({ length: 6 }, (_, i) => keyOnShard(i % 4));
    const polls = Array.from({ length: 6 }, (_, i) => keyOnShard(4 + (i % 4)));
    for (const key of unknowns) await plant(world.store, world.cipher, unknownRecord(key));
    for (const key of polls) await plant(world.store, world.cipher, sentRecord(key));
    // Act
    const summary = await reconcileDue(world.deps);
    // Assess: each key on its lane's queue, once; nothing looked up by the pass.
    expect(new Set(reconcileQueue.messages.map((m) => m.idempotencyKey))).toEqual(new Set(unknowns));
    expect(new Set(pollQueue.messages.map((m) => m.idempotencyKey))).toEqual(new Set(polls));
    expect(summary.enqueued).toBe(12);
    expect(world.provider.lookups).toHaveLength(0);
  });

  it("gates each lane's fresh sweep on its own queue's backlog", async () => {
    // Prepare: a status-poll queue with a standing backlog, an empty reconcile queue.
    const reconcileQueue = recordingQueue();
    const pollQueue = recordingQueue();
    reconcileQueue.pending = 0;
    pollQueue.pending = 500;
    const world = aWorld({ maxItems: 20, reconcileQueue, pollQueue, resweepMs: 10_000 });
    for (let i = 0; i < 4; i++) await plant(world.store, world.cipher, unknownRecord(keyOnShard(i)));
    for (let i = 0; i < 4; i++) await plant(world.store, world.cipher, sentRecord(keyOnShard(4 + i)));
    await reconcileDue(world.deps);
    reconcileQueue.messages.length = 0;
    pollQueue.messages.length = 0;
    // Act: a pass past the resweep time, nothing handled meanwhile.
    world.clock.advance(15_000);
    const summary = await reconcileDue(world.deps);
    // Assess: the urgent lane swept afresh (its queue is empty); the polls, still queued, did not.
    expect(reconcileQueue.messages).toHaveLength(4);
    expect(pollQueue.messages).toHaveLength(0);
    expect(summary).toMatchObject({ queueBacklog: 0, pollQueueBacklog: 500, resweeps: 4 });
  });

  it('with one shared queue, reads its backlog when only the poll lane is due for a fresh sweep', async () => {
    // Prepare: polls only (the urgent lane is empty), one queue with a standing backlog.
    const reconcileQueue = recordingQueue();
    reconcileQueue.pending = 500;
    const world = aWorld({ maxItems: 20, reconcileQueue, resweepMs: 10_000 });
    for (let i = 0; i < 4; i++) await plant(world.store, world.cipher, sentRecord(keyOnShard(4 + i)));
    await reconcileDue(world.deps);
    reconcileQueue.messages.length = 0;
    // Act: past the poll lane's resweep time, while the urgent lane's sweeps started just now.
    world.clock.advance(15_000);
    const cursor = await world.store.readReconcileCursor();
    const positions = { ...cursor.shards };
    for (const shard of world.store.dueLanes.urgent)
      positions[shard] = JSON.stringify({ t: world.clock.now() });
    await world.store.writeReconcileCursor(cursor.version, positions);
    const summary = await reconcileDue(world.deps);
    // Assess: the backlog was read and held the polls back (no copies of what still waits).
    expect(summary).toMatchObject({ queueBacklog: 500, pollQueueBacklog: 500 });
    expect(reconcileQueue.messages).toHaveLength(0);
  });

  it('reads on past the last pass for what became due since, without a resweep', async () => {
    // Prepare
    const reconcileQueue = recordingQueue();
    const world = aWorld({ maxItems: 20, reconcileQueue, resweepMs: 30_000 });
    const early = keyOnShard(2);
    const later = keyOnShard(2);
    await plant(world.store, world.cipher, unknownRecord(early, { dueAt: T0 }));
    await plant(world.store, world.cipher, unknownRecord(later, { dueAt: T0 + 8_000 }));
    // Act: the first pass sees only `early`; 5 s on, `later` is due.
    await reconcileDue(world.deps);
    const firstKeys = reconcileQueue.messages.map((m) => m.idempotencyKey);
    reconcileQueue.messages.length = 0;
    world.clock.advance(5_000);
    await reconcileDue(world.deps);
    // Assess
    expect(firstKeys).toEqual([early]);
    expect(reconcileQueue.messages.map((m) => m.idempotencyKey)).toEqual([later]);
  });

  it('serves the urgent lane before status polls, and keeps a quarter of the pass for polls', async () => {
    // Prepare: 40 due status polls (older) and 40 due unknowns; a pass of 16.
    const reconcileQueue = recordingQueue();
    const world = aWorld({ maxItems: 16, maxRounds: 1, reconcileQueue });
    const polls = Array.from({ length: 40 }, (_, i) => keyOnShard(4 + (i % 4)));
    const unknowns = Array.from({ length: 40 }, (_, i) => keyOnShard(i % 4));
    for (const key of polls) await plant(world.store, world.cipher, sentRecord(key, { dueAt: T0 - 60_000 }));
    for (const key of unknowns) await plant(world.store, world.cipher, unknownRecord(key, { dueAt: T0 }));
    // Act
    const summary = await reconcileDue(world.deps);
    // Assess: 12 unknowns then 4 polls, in that order, in the queue.
    const queued = reconcileQueue.messages.map((m) => m.idempotencyKey);
    const urgent = new Set(unknowns);
    expect(queued).toHaveLength(16);
    expect(queued.slice(0, 12).every((k) => urgent.has(k))).toBe(true);
    expect(queued.slice(12).every((k) => !urgent.has(k))).toBe(true);
    expect(summary.shardEntries.slice(4).reduce((a, b) => a + b, 0)).toBe(4);
    // The liveness figure is the urgent lane's; the polls' lag is reported on its own.
    expect(summary.oldestDueLagMs).toBe(5_000);
    expect(summary.oldestPollLagMs).toBe(65_000);
  });

  it('gives the urgent lane what the polls leave unused, and the polls what the urgent lane leaves', async () => {
    // Prepare: 30 unknowns and 2 polls, then (another world) 2 unknowns and 30 polls; passes of 16.
    const urgentHeavy = aWorld({ maxItems: 16, maxRounds: 1, reconcileQueue: recordingQueue() });
    for (let i = 0; i < 30; i++)
      await plant(urgentHeavy.store, urgentHeavy.cipher, unknownRecord(keyOnShard(i % 4)));
    for (let i = 0; i < 2; i++)
      await plant(urgentHeavy.store, urgentHeavy.cipher, sentRecord(keyOnShard(4 + i)));
    const pollHeavy = aWorld({ maxItems: 16, maxRounds: 1, reconcileQueue: recordingQueue() });
    for (let i = 0; i < 2; i++) await plant(pollHeavy.store, pollHeavy.cipher, unknownRecord(keyOnShard(i)));
    for (let i = 0; i < 30; i++)
      await plant(pollHeavy.store, pollHeavy.cipher, sentRecord(keyOnShard(4 + (i % 4))));
    // Act
    const a = await reconcileDue(urgentHeavy.deps);
    const b = await reconcileDue(pollHeavy.deps);
    // Assess: both passes are full.
    expect(a.examined).toBe(16);
    expect(a.shardEntries.slice(4).reduce((x, y) => x + y, 0)).toBe(2);
    expect(b.examined).toBe(16);
    expect(b.shardEntries.slice(0, 4).reduce((x, y) => x + y, 0)).toBe(2);
  });

  it('logs a key the reconcile queue refused and reads its shard again next pass', async () => {
    // Prepare: the queue refuses every key of shard 2; 12 due entries there, a pass of 8 (2 per shard + rest).
    const accepted: string[] = [];
    const refusing = {
      async enqueue(
        batch: ReadonlyArray<{ readonly id: string; readonly message: { idempotencyKey: string } }>,
      ) {
        const failed = batch.filter((b) => b.id.startsWith('refused')).map((b) => b.id);
        accepted.push(...batch.filter((b) => !failed.includes(b.id)).map((b) => b.id));
        return { failed };
      },
    };
    const world = aWorld({ maxItems: 8, reconcileQueue: refusing });
    for (let i = 0; i < 12; i++)
      await plant(world.store, world.cipher, unknownRecord(keyOnShard(2, 'refused'), { dueAt: T0 + i }));
    // Act
    const first = await reconcileDue(world.deps);
    const second = await reconcileDue(world.deps);
    // Assess: the same oldest entries are offered again, and every refusal was logged with its key.
    expect(first.enqueueFailed).toBe(8);
    expect(second.enqueueFailed).toBe(8);
    expect(world.errors).toHaveLength(16);
    expect(world.errors[0]).toMatchObject({ action: 'retry', cause: { code: 'reconcile_enqueue_failed' } });
    expect(world.errors.slice(0, 8)).toEqual(world.errors.slice(8));
    expect(accepted).toEqual([]);
  });

  it('reports the oldest unknown of every shard, even when the cursor has moved past it', async () => {
    // Prepare: shard 3 holds an unknown that began 20 minutes ago, then 6 newer due entries; nothing
    // is handled between passes (fan-out to a queue nobody reads).
    const reconcileQueue = recordingQueue();
    const world = aWorld({ maxItems: 4, reconcileQueue });
    const old = unknownRecord(keyOnShard(3), {
      now: T0 - 20 * 60_000,
      dueAt: T0 - 60_000,
      expiresInMs: 60 * 60_000,
    });
    await plant(world.store, world.cipher, old);
    for (let i = 0; i < 6; i++)
      await plant(world.store, world.cipher, unknownRecord(keyOnShard(3), { dueAt: T0 + i }));
    // Act
    await reconcileDue(world.deps);
    reconcileQueue.messages.length = 0;
    const second = await reconcileDue(world.deps);
    // Assess: the second pass did not read the old entry, and still reports its age and lag.
    expect(reconcileQueue.messages.map((m) => m.idempotencyKey)).not.toContain(old.idempotencyKey);
    expect(second.oldestUnknownAgeMs).toBe(T0 + 5_000 - (old.unknownSince ?? 0));
    expect(second.oldestDueLagMs).toBe(65_000);
  });
});

describe('reconcileKey: poison isolation', () => {
  it('a due item with an unknown reason code no longer makes the pass throw; it is counted and moved', async () => {
    // Prepare
    const world = aWorld();
    const poison = unknownRecord(keyOnShard(0));
    const healthy = unknownRecord(keyOnShard(0));
    await plant(world.store, world.cipher, poison);
    await plant(world.store, world.cipher, healthy);
    world.store.plantCorrupt(poison.idempotencyKey, 'unknown reason reconciled_by_v2');
    // Act
    const summary = await reconcileDue(world.deps);
    // Assess
    expect(summary).toMatchObject({ poisoned: 1, parked: 0, lookups: 1 });
    expect(world.store.poisonOf(poison.idempotencyKey)).toEqual({ poisonCount: 1, parked: false });
    const moved = world.store.records().find((r) => r.idempotencyKey === poison.idempotencyKey);
    expect(moved?.dueAt).toBe(T0 + 5_000 + POISON_POLICY.retryBaseMs);
    expect(world.errors).toEqual([
      expect.objectContaining({
        idempotencyKey: poison.idempotencyKey,
        action: 'poisoned',
        cause: expect.objectContaining({ name: 'CorruptItemError', code: 'corrupt_item' }),
      }),
    ]);
  });

  it('parks an item after the retry cap, never deleting it', async () => {
    // Prepare
    const world = aWorld();
    const poison = unknownRecord(keyOnShard(2));
    await plant(world.store, world.cipher, poison);
    world.store.plantCorrupt(poison.idempotencyKey, 'unknown state archived');
    // Act: one failure per retry.
    const reports = [];
    for (let i = 0; i < POISON_POLICY.maxRetries; i++) {
      reports.push(await reconcileKey(world.deps, poison.idempotencyKey));
      world.clock.advance(POISON_POLICY.retryMaxMs);
    }
    // Assess
    expect(reports.at(-1)).toEqual({ kind: 'poisoned', poisonCount: POISON_POLICY.maxRetries, parked: true });
    expect(world.store.poisonOf(poison.idempotencyKey).parked).toBe(true);
    expect(world.store.records().map((r) => r.idempotencyKey)).toContain(poison.idempotencyKey);
    expect(world.errors.at(-1)).toMatchObject({ action: 'parked' });
  });

  it('logs causes without the phone number or the code', async () => {
    // Prepare: a provider whose error text carries the number (a badly behaved SDK).
    const world = aWorld();
    const record = unknownRecord(keyOnShard(3));
    await plant(world.store, world.cipher, record);
    world.store.plantCorrupt(record.idempotencyKey, 'bad attribute near +14155550123 483920');
    // Act
    await reconcileDue(world.deps);
    // Assess
    const text = JSON.stringify(world.errors);
    expect(text).toContain(record.idempotencyKey);
    expect(text).not.toContain('14155550123');
    expect(text).not.toContain('483920');
  });

  it('leaves an item as it is on a transient store fault and rethrows (the queue retries it)', async () => {
    // Prepare: the store is throttled for this key's reads.
    const key = keyOnShard(1);
    const store = new MemoryNotificationStore({
      beforeOperation: (operation, k) => {
        if (operation === 'get' && k === key) {
          const error = new Error('Rate exceeded');
          error.name = 'ThrottlingException';
          throw error;
        }
      },
    });
    const world = aWorld({ store });
    await plant(store, world.cipher, unknownRecord(key));
    // Act / Assess
    await expect(reconcileKey(world.deps, key)).rejects.toThrow('Rate exceeded');
    expect(store.poisonOf(key).poisonCount).toBe(0);
    expect(world.errors).toEqual([expect.objectContaining({ action: 'retry' })]);
  });
});

describe('reconcileKey: expiry never depends on decryption or the provider', () => {
  it('expires an unknown past its deadline and drops the payload while the cipher fails', async () => {
    // Prepare: token expired a second ago; KMS refuses every decryption.
    const world = aWorld();
    const record = unknownRecord(keyOnShard(0), { expiresInMs: 60_000 });
    await plant(world.store, world.cipher, record);
    world.cipher.failing = true;
    world.clock.set(record.expiresAt + 1_000);
    // Act
    const report = await reconcileKey(world.deps, record.idempotencyKey);
    // Assess
    expect(report).toMatchObject({ kind: 'transitioned', to: 'expired', reason: 'unknown_at_expiry' });
    expect(world.store.sealedPayloadOf(record.idempotencyKey)).toBeUndefined();
    expect(world.provider.lookups).toHaveLength(0);
  });

  it('expires an unknown past its deadline while the provider throws', async () => {
    // Prepare
    const provider = countingProvider(() => {
      throw new Error('socket hang up');
    });
    const world = aWorld({ provider });
    const record = unknownRecord(keyOnShard(1), { expiresInMs: 60_000 });
    await plant(world.store, world.cipher, record);
    world.clock.set(record.expiresAt);
    // Act
    const report = await reconcileKey(world.deps, record.idempotencyKey);
    // Assess
    expect(report).toMatchObject({ kind: 'transitioned', to: 'expired' });
    expect(world.store.sealedPayloadOf(record.idempotencyKey)).toBeUndefined();
  });

  it('before expiry, an unreadable payload is an inconclusive read: rescheduled, not poison', async () => {
    // Prepare
    const world = aWorld();
    const record = unknownRecord(keyOnShard(2));
    await plant(world.store, world.cipher, record);
    world.cipher.failing = true;
    // Act
    const report = await reconcileKey(world.deps, record.idempotencyKey);
    // Assess
    expect(report).toMatchObject({
      kind: 'transitioned',
      to: 'dispatch_unknown',
      reason: 'reconcile_inconclusive',
    });
    expect(world.store.poisonOf(record.idempotencyKey).poisonCount).toBe(0);
    expect(world.errors).toEqual([
      expect.objectContaining({
        action: 'retry',
        cause: expect.objectContaining({ name: 'DisabledException' }),
      }),
    ]);
  });

  it('expires an accepted command past its deadline without opening anything', async () => {
    // Prepare
    const world = aWorld();
    const { next } = acceptedRecord(keyOnShard(3), T0, 60_000);
    await plant(world.store, world.cipher, { ...next, dueAt: T0 });
    world.cipher.failing = true;
    world.clock.set(next.expiresAt);
    const before = world.cipher.decryptions;
    // Act
    const report = await reconcileKey(world.deps, next.idempotencyKey);
    // Assess
    expect(report).toMatchObject({ kind: 'transitioned', to: 'expired', reason: 'expired_before_dispatch' });
    expect(world.cipher.decryptions).toBe(before);
  });
});

describe('reconcileKey: duplicates and receipts', () => {
  it('a second message for a key already handled is a skip (no second lookup)', async () => {
    // Prepare
    const world = aWorld();
    const record = unknownRecord(keyOnShard(0));
    await plant(world.store, world.cipher, record);
    // Act
    const first = await reconcileKey(world.deps, record.idempotencyKey);
    const second = await reconcileKey(world.deps, record.idempotencyKey);
    // Assess
    expect(first.kind).toBe('transitioned');
    expect(second).toEqual({ kind: 'skipped', why: 'not_due' });
    expect(world.provider.lookups).toHaveLength(1);
  });

  it('does not status-poll a sent message before the receipt grace time, then polls as a fallback', async () => {
    // Prepare: found as sent; the provider pushes receipts; grace 60 s.
    const provider = countingProvider((ref) => ({
      kind: 'found',
      messageId: ref.messageId ?? 'SM1',
      status: 'sent',
    }));
    const world = aWorld({ provider, receiptGraceMs: 60_000 });
    const record = unknownRecord(keyOnShard(1));
    await plant(world.store, world.cipher, record);
    // Act
    const found = await reconcileKey(world.deps, record.idempotencyKey);
    const after = world.store.records().find((r) => r.idempotencyKey === record.idempotencyKey);
    world.clock.advance(POLICY.statusPollMs);
    const early = await reconcileKey(world.deps, record.idempotencyKey);
    world.clock.set((after?.dueAt ?? 0) + 1);
    const fallback = await reconcileKey(world.deps, record.idempotencyKey);
    // Assess
    expect(found).toMatchObject({ kind: 'transitioned', to: 'sent' });
    expect(after?.dueAt).toBe(T0 + 5_000 + 60_000);
    expect(early).toEqual({ kind: 'skipped', why: 'not_due' });
    expect(fallback).toEqual({ kind: 'rescheduled', lookup: true });
    expect(world.provider.lookups).toHaveLength(2);
  });
});
