import { describe, expect, it } from 'vitest';
import { createReconcilerHandler } from '../../../shared/handlers/reconciler-handler.js';
import type { ReconcileSummary } from '../../../shared/usecases/reconcile-due.js';
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

/** A reconciler whose sleeps move a manual clock (and a pass may be made to take time). */
function aScheduledReconciler(options: { count: number; spacingMs: number; passTakesMs?: number }) {
  const clock = new ManualClock(T0 + 5_000);
  const passStarts: number[] = [];
  // Every pass reads the cursor first: that is where it starts, and where it is made to take time.
  const store = new (class extends MemoryNotificationStore {
    override async readReconcileCursor() {
      passStarts.push(clock.now());
      clock.advance(options.passTakesMs ?? 0);
      return super.readReconcileCursor();
    }
  })();
  const cipher = switchableCipher();
  const reconcileQueue = recordingQueue();
  const slept: number[] = [];
  const summaries: ReconcileSummary[] = [];
  const handler = createReconcilerHandler({
    store,
    cipher,
    provider: countingProvider(),
    queue: recordingQueue(),
    reconcileQueue,
    clock,
    policy: POLICY,
    // No fresh sweeps within the test: what a pass queued stays queued (nobody consumes the queue).
    resweepMs: 600_000,
    passes: {
      count: options.count,
      spacingMs: options.spacingMs,
      sleep: async (ms) => {
        slept.push(ms);
        clock.advance(ms);
      },
    },
    onSummary: (summary) => summaries.push(summary),
  });
  return { clock, store, cipher, reconcileQueue, handler, passStarts, slept, summaries, start: clock.now() };
}

describe('the scheduled reconciler: several passes per invocation', () => {
  it('runs `count` passes `spacingMs` apart, each reporting its summary', async () => {
    // Prepare
    const rig = aScheduledReconciler({ count: 6, spacingMs: 10_000, passTakesMs: 1_500 });
    // Act
    await rig.handler();
    // Assess: passes at 0, 10, ..., 50 s; the sleeps make up for each pass's own time.
    expect(rig.passStarts.map((t) => t - rig.start)).toEqual([0, 10_000, 20_000, 30_000, 40_000, 50_000]);
    expect(rig.slept).toEqual([8_500, 8_500, 8_500, 8_500, 8_500]);
    expect(rig.summaries).toHaveLength(6);
  });

  it('queues what became due between passes of the same invocation', async () => {
    // Prepare: one unknown due now, one due 25 s later.
    const rig = aScheduledReconciler({ count: 6, spacingMs: 10_000 });
    const now = rig.clock.now();
    const early = keyOnShard(1);
    const later = keyOnShard(2);
    await plant(rig.store, rig.cipher, unknownRecord(early, { dueAt: now }));
    await plant(rig.store, rig.cipher, unknownRecord(later, { dueAt: now + 25_000 }));
    // Act
    await rig.handler();
    // Assess: the later key was queued by the pass at 30 s, within the same invocation.
    expect(rig.reconcileQueue.messages.map((m) => m.idempotencyKey)).toEqual([early, later]);
    expect(rig.summaries.map((s) => s.enqueued)).toEqual([1, 0, 0, 1, 0, 0]);
  });

  it('starts no pass once the run window is over (slow passes end the run early)', async () => {
    // Prepare: passes that take 25 s each, 6 planned 10 s apart (a 60 s window).
    const rig = aScheduledReconciler({ count: 6, spacingMs: 10_000, passTakesMs: 25_000 });
    // Act
    await rig.handler();
    // Assess: late passes start at once, none after the window: at 0, 25 and 50 s.
    expect(rig.passStarts.map((t) => t - rig.start)).toEqual([0, 25_000, 50_000]);
    expect(rig.slept).toEqual([]);
  });

  it('runs one pass without a schedule', async () => {
    // Prepare
    const rig = aScheduledReconciler({ count: 1, spacingMs: 10_000 });
    // Act
    await rig.handler();
    // Assess
    expect(rig.passStarts).toHaveLength(1);
  });
});
