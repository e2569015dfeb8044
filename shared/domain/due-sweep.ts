import type { DueLane } from './due-lane.js';
import type { EpochMs } from './notification.js';

/**
 * The scheduled pass's cursor and backlog rules, pure: where each shard's sweep of the due index
 * stands, when it starts again at the shard's oldest entry, and what the cursor item stores.
 */

/** How long a sweep of a shard resumes after what it read, before it starts again at the oldest. */
export const DEFAULT_RESWEEP_MS = 10_000;

/** While the reconcile queue holds a backlog, a shard is swept afresh only after this many resweep times. */
export const FORCED_RESWEEP_FACTOR = 6;

/** Where one shard's sweep stands: when it started at the oldest entry, and what it read last. */
export interface ShardSweep {
  readonly startedAt: EpochMs;
  /** The store's opaque position after the last entry read; absent: start at the oldest. */
  readonly position?: string;
}

/** The queues' backlogs the pass read, per lane (undefined: not read, or the queue cannot say). */
export type LaneBacklogs = Readonly<Record<DueLane, number | undefined>>;

/** The cursor item's value for one shard. */
export function formatSweep(sweep: ShardSweep): string {
  const startedAt = Number.isFinite(sweep.startedAt) ? sweep.startedAt : 0;
  return JSON.stringify(
    sweep.position === undefined ? { t: startedAt } : { t: startedAt, p: sweep.position },
  );
}

/** Reads one shard's value; a value from before sweeps had a start time is an old sweep (restarts). */
export function parseSweep(value: string | undefined): ShardSweep | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { t?: unknown }).t === 'number') {
      const { t, p } = parsed as { t: number; p?: unknown };
      return typeof p === 'string' ? { startedAt: t, position: p } : { startedAt: t };
    }
  } catch {
    // Not JSON: a bare position written by an earlier release.
  }
  return { startedAt: 0 };
}

/** The previous pass's sweep of each of `count` shards (undefined: never swept). */
export function previousSweeps(
  stored: Readonly<Record<string, string>>,
  count: number,
): (ShardSweep | undefined)[] {
  return Array.from({ length: count }, (_, shard) => parseSweep(stored[shard]));
}

/**
 * Whether a shard of `lane` is due for a fresh sweep this pass: only then is its queue's backlog
 * worth reading (it decides whether the fresh sweep happens now or waits).
 */
export function resweepDue(
  previous: readonly (ShardSweep | undefined)[],
  lane: readonly number[],
  now: EpochMs,
  resweepMs: number,
): boolean {
  return lane.some((shard) => {
    const sweep = previous[shard];
    return !sweep || now - sweep.startedAt >= resweepMs;
  });
}

/**
 * Where each shard's sweep starts this pass, and how many shards start again at their oldest entry.
 * An entry behind a sweep's position is waiting in its lane's queue or was missed (a write that
 * raced a pass). While that queue holds more than a round (`maxItems`), it is taken as waiting: a
 * fresh sweep would queue a copy of everything the workers have not reached yet (copies were
 * 50-75 % of the workers' reads at the peak of a 5,000-event soak). The forced resweep
 * ({@link FORCED_RESWEEP_FACTOR}) bounds the wait of a missed entry even under a standing backlog.
 */
export function startSweeps(
  previous: readonly (ShardSweep | undefined)[],
  rules: {
    readonly now: EpochMs;
    readonly resweepMs: number;
    readonly maxItems: number;
    readonly pollShards: readonly number[];
    readonly backlogs: LaneBacklogs;
  },
): { readonly sweeps: ShardSweep[]; readonly resweeps: number } {
  const { now, resweepMs, maxItems } = rules;
  const backlogged = (shard: number) => {
    const backlog = rules.backlogs[rules.pollShards.includes(shard) ? 'poll' : 'urgent'];
    return backlog !== undefined && backlog > maxItems;
  };
  let resweeps = 0;
  const sweeps = previous.map((sweep, shard): ShardSweep => {
    const age = sweep ? now - sweep.startedAt : Number.POSITIVE_INFINITY;
    const fresh = age >= resweepMs * (backlogged(shard) ? FORCED_RESWEEP_FACTOR : 1);
    if (fresh && sweep) resweeps++;
    return fresh || !sweep ? { startedAt: now } : sweep;
  });
  return { sweeps, resweeps };
}

/** A shard's sweep after one read: it goes on after the read's last entry (or stays where it was). */
export function advanceSweep(
  sweep: ShardSweep,
  page: { readonly cursor?: string; readonly resumeAfter?: string },
): ShardSweep {
  const position = page.cursor ?? page.resumeAfter ?? sweep.position;
  return position === undefined ? { startedAt: sweep.startedAt } : { ...sweep, position };
}

/**
 * The cursor to write at the end of a pass: every shard's sweep, except that a shard in `restart`
 * (a key of it the queue refused) starts a fresh sweep at its oldest entry next pass.
 */
export function cursorPositions(
  sweeps: readonly ShardSweep[],
  restart: ReadonlySet<number>,
): Record<string, string> {
  const positions: Record<string, string> = {};
  sweeps.forEach((sweep, shard) => {
    positions[shard] = formatSweep(restart.has(shard) ? { startedAt: Number.NEGATIVE_INFINITY } : sweep);
  });
  return positions;
}
