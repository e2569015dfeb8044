/**
 * The chaos driver: starts the real local stack (DynamoDB Local, fauxqs, provider simulator, local
 * runtime), drives seeded reset events through it under every kind of fault, waits until the run
 * settles, collects what it left behind and judges it with the invariant checks. One step each:
 * rig.ts, drive.ts, settle.ts, collect.ts, judge.ts; each returns what the next one takes.
 */
import { captureOutput } from './capture.js';
import { collectChaos } from './collect.js';
import { driveChaos } from './drive.js';
import { judgeChaos } from './judge.js';
import { dismantle, type RigParts, rigChaos } from './rig.js';
import type { ChaosRunOptions, ChaosRunResult } from './run-options.js';
import { settleChaos } from './settle.js';

export {
  CHAOS_ENV,
  CHAOS_SETTINGS,
  type ChaosProvider,
  type ChaosRunOptions,
  type ChaosRunResult,
  type ChaosStats,
  type KeyForensics,
  listLagAllowanceSecondsFor,
  SNS_CHAOS_ENV,
} from './run-options.js';

/** Runs one chaos soak and returns its verdict. Never throws for an invariant failure. */
export async function runChaos(options: ChaosRunOptions): Promise<ChaosRunResult> {
  const capture = captureOutput({ passThrough: options.passThroughOutput ?? false });
  const parts: RigParts = {};
  try {
    const rig = await rigChaos(options, capture, parts);
    const driven = await driveChaos(rig);
    const settled = await settleChaos(rig, driven);
    const collected = await collectChaos(rig, driven, parts);
    return judgeChaos(rig, driven, settled, collected);
  } finally {
    await dismantle(parts, capture);
  }
}
