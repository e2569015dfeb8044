/**
 * Chaos step 3, settle: the outage ends (faults cleared), then every admitted key must become
 * final within the settle timeout; extra reconciler passes get a grace period, and stragglers a
 * moment to reach the provider's ledger.
 */
import type { Driven } from './drive.js';
import type { Rig } from './rig.js';
import { setFaults } from './sim-control.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How long the extra reconciler passes may still run once every key is final. */
const BACKGROUND_GRACE_MS = 30_000;

/** How the run settled. */
export interface Settled {
  /** Every admitted key final within the settle timeout. */
  readonly settled: boolean;
  /** Extra reconciler passes still running {@link BACKGROUND_GRACE_MS} after the settle (a hang). */
  readonly backgroundHung: number;
  readonly settleMs: number;
}

/** Waits for the run to settle; returns how it did. */
export async function settleChaos(rig: Rig, driven: Driven): Promise<Settled> {
  const { tracker, say } = rig;
  await setFaults(rig.simUrl, []);
  const settleStart = Date.now();
  const settleTimeout = rig.options.settleTimeoutMs ?? 240_000;
  let lastSay = 0;
  while (tracker.pending() > 0 && Date.now() - settleStart < settleTimeout) {
    if (Date.now() - lastSay >= 5_000) {
      lastSay = Date.now();
      say(`chaos: settling, ${tracker.pending()} keys not final yet (${tracker.pendingStates()})`);
    }
    await sleep(250);
  }
  await tracker.stop();
  // An extra reconciler pass still running long after the settle is a liveness defect (a lookup
  // that never returns): counted and failed, never waited on forever.
  const background = driven.background;
  const backgroundDone = await Promise.race([
    Promise.all(background).then(() => true),
    sleep(BACKGROUND_GRACE_MS).then(() => false),
  ]);
  const backgroundHung = backgroundDone ? 0 : background.size;
  if (!backgroundDone) say(`chaos: ${background.size} reconciler passes still running after the settle`);
  const settled = tracker.pending() === 0;
  // A call that outlived its lease would land now: give stragglers time to show up in the ledger.
  await sleep(rig.stack.config.policy.providerTimeoutMs * 2 + 1_000);
  return { settled, backgroundHung, settleMs: Date.now() - settleStart };
}
