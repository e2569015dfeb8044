import { type DueEntry, DueLane, POLL_LANE_MIN_SHARE } from './due-lane.js';
import { advanceSweep, type ShardSweep } from './due-sweep.js';
import type { EpochMs } from './notification.js';
import { NotificationState } from './states.js';

/**
 * The scheduled pass's lane and quota rules, pure: which shards a round reads and how many entries
 * each, which entries it hands out and in what order. The use case (`usecases/reconcile-due.ts`)
 * only runs the reads and the enqueues this plans.
 *
 * A round reads the urgent lane (what an expiry waits on) first; the status-poll lane gets what is
 * left, and never less than {@link POLL_LANE_MIN_SHARE}; what the polls leave unused goes back to
 * the urgent lane. Within a lane every shard gets an equal share, and what a shallow shard leaves
 * unused goes to the shards that have more (work-conserving). A later round reads only the shards
 * the round before left more in.
 */

/** Entries per round of a pass when no limit is given. */
const DEFAULT_MAX_ITEMS = 1_000;

/** Rounds of reading one fan-out pass may do while more is due (each round reads `maxItems`). */
const DEFAULT_MAX_ROUNDS = 10;

/** The shards of each lane. */
export type DueLanes = Readonly<Record<DueLane, readonly number[]>>;

/** How much one pass may read. */
export interface PassLimits {
  /** Entries per round, shared between the lanes and their shards. */
  readonly maxItems: number;
  /** Rounds per pass: more than one only when a reconcile queue takes the keys (fan-out). */
  readonly maxRounds: number;
}

/** The pass's limits from its options: several rounds only in fan-out, where workers do the handling. */
export function passLimits(options: {
  readonly maxItems?: number | undefined;
  readonly maxRounds?: number | undefined;
  readonly fanOut: boolean;
}): PassLimits {
  return {
    maxItems: options.maxItems ?? DEFAULT_MAX_ITEMS,
    maxRounds: options.fanOut ? Math.max(1, options.maxRounds ?? DEFAULT_MAX_ROUNDS) : 1,
  };
}

/** The `i`-th of `n` near-equal shares of `total` (they add up to `total` exactly). */
function shareOf(total: number, n: number, i: number): number {
  return Math.floor(total / n) + (i < total % n ? 1 : 0);
}

/** One read of one shard: at most `limit` entries. */
export interface ShardRead {
  readonly shard: number;
  readonly limit: number;
}

/** `quota` in near-equal shares over `shards`; a shard whose share is 0 is not read. */
export function splitQuota(shards: readonly number[], quota: number): ShardRead[] {
  return shards
    .map((shard, i) => ({ shard, limit: shareOf(quota, shards.length, i) }))
    .filter((read) => read.limit > 0);
}

/** The part of a round kept for the poll lane while it has shards to read. */
export function pollReserve(maxItems: number): number {
  return Math.min(maxItems, Math.ceil(maxItems * POLL_LANE_MIN_SHARE));
}

/** The lane a shard belongs to. */
export function laneOfShard(lanes: DueLanes, shard: number): DueLane {
  return lanes.poll.includes(shard) ? DueLane.poll : DueLane.urgent;
}

/** Where a pass stands between reads: the sweeps, what is left to read, what it has handed out. */
export interface PassState {
  readonly now: EpochMs;
  readonly maxItems: number;
  readonly lanes: DueLanes;
  readonly sweeps: readonly ShardSweep[];
  /** Per lane, the shards whose last read said more is due (in the order they said so). */
  readonly more: Readonly<Record<DueLane, readonly number[]>>;
  /** Due entries read per shard. */
  readonly shardEntries: readonly number[];
  /** Reads that reached the end of what is due in their shard. */
  readonly wrapped: number;
  /** Keys handed out this pass (a key read again in a later round is not handed out twice). */
  readonly handedOut: ReadonlySet<string>;
  /** Shards a refused enqueue sends back to their oldest entry next pass (not read again in this one). */
  readonly restart: ReadonlySet<number>;
}

/** A pass before its first read. */
export function startPass(start: {
  readonly now: EpochMs;
  readonly maxItems: number;
  readonly lanes: DueLanes;
  readonly sweeps: readonly ShardSweep[];
}): PassState {
  return {
    ...start,
    more: { urgent: [], poll: [] },
    shardEntries: start.sweeps.map(() => 0),
    wrapped: 0,
    handedOut: new Set(),
    restart: new Set(),
  };
}

/** The three phases of a round, in order, and the lane each reads. */
const PHASES = [
  { name: 'urgent', lane: DueLane.urgent },
  { name: 'poll', lane: DueLane.poll },
  { name: 'spare', lane: DueLane.urgent },
] as const;
/** A phase of a round: the urgent lane, the poll lane, then the urgent lane again with what is spare. */
type Phase = (typeof PHASES)[number]['name'];

/** Where one round stands: its target shards, what each phase read, and the next step. */
export interface RoundState {
  readonly targets: DueLanes;
  readonly read: Readonly<Record<Phase, number>>;
  /** The next step: a phase (index into the phases), and whether only its spill is left. */
  readonly next: { readonly phase: number; readonly spill: boolean };
}

/**
 * Round `round` (from 1) of a pass: the first reads every shard; a later one only the shards the
 * round before left more in. Undefined when a later round has nothing left to read.
 */
export function startRound(pass: PassState, round: number): RoundState | undefined {
  const targets = round === 1 ? pass.lanes : pass.more;
  if (round > 1 && targets.urgent.length === 0 && targets.poll.length === 0) return undefined;
  return { targets, read: { urgent: 0, poll: 0, spare: 0 }, next: { phase: 0, spill: false } };
}

/** One step of a round: reads of several shards at once. */
export interface ReadStep {
  readonly phase: Phase;
  readonly lane: DueLane;
  /** The work-conserving second read of a phase, over the shards its first read left more in. */
  readonly spill: boolean;
  readonly reads: readonly ShardRead[];
}

/** How many entries a phase may read, given what the phases before it read. */
function phaseQuota(maxItems: number, round: RoundState, phase: Phase): number {
  switch (phase) {
    case 'urgent':
      return maxItems - (round.targets.poll.length ? pollReserve(maxItems) : 0);
    case 'poll':
      return maxItems - round.read.urgent;
    case 'spare':
      return maxItems - round.read.urgent - round.read.poll;
  }
}

/** The shards of a phase's first read; undefined: the phase is skipped (spill included). */
function firstShards(pass: PassState, round: RoundState, phase: Phase, quota: number) {
  if (phase === 'spare') return quota > 0 && pass.more.urgent.length > 0 ? pass.more.urgent : undefined;
  const targets = round.targets[phase];
  return targets.length > 0 ? targets : undefined;
}

/** The round's next reads, or undefined when the round has read all it may. */
export function nextReads(pass: PassState, round: RoundState): ReadStep | undefined {
  for (let i = round.next.phase; i < PHASES.length; i++) {
    const { name: phase, lane } = PHASES[i] as (typeof PHASES)[number];
    const quota = phaseQuota(pass.maxItems, round, phase);
    if (i > round.next.phase || !round.next.spill) {
      const shards = firstShards(pass, round, phase, quota);
      if (shards === undefined) continue;
      return { phase, lane, spill: false, reads: splitQuota(shards, quota) };
    }
    const left = quota - round.read[phase];
    const more = pass.more[lane];
    if (left > 0 && more.length > 0) return { phase, lane, spill: true, reads: splitQuota(more, left) };
  }
  return undefined;
}

/** What one shard read returned, as far as planning goes. */
export interface ReadResult {
  readonly entries: readonly unknown[];
  readonly cursor?: string;
  readonly resumeAfter?: string;
}

/** The pass and round after a step's reads (`results[i]` answers `step.reads[i]`). */
export function afterReads(
  pass: PassState,
  round: RoundState,
  step: ReadStep,
  results: readonly ReadResult[],
): { readonly pass: PassState; readonly round: RoundState } {
  const sweeps = [...pass.sweeps];
  const shardEntries = [...pass.shardEntries];
  let more = pass.more[step.lane];
  let wrapped = pass.wrapped;
  let read = 0;
  step.reads.forEach(({ shard }, i) => {
    const result = results[i] ?? { entries: [] };
    read += result.entries.length;
    shardEntries[shard] = (shardEntries[shard] ?? 0) + result.entries.length;
    sweeps[shard] = advanceSweep(sweeps[shard] ?? { startedAt: pass.now }, result);
    if (result.cursor) more = more.includes(shard) ? more : [...more, shard];
    else {
      more = more.filter((s) => s !== shard);
      wrapped++;
    }
  });
  const phase = PHASES.findIndex((p) => p.name === step.phase);
  return {
    pass: { ...pass, sweeps, shardEntries, wrapped, more: { ...pass.more, [step.lane]: more } },
    round: {
      ...round,
      read: { ...round.read, [step.phase]: round.read[step.phase] + read },
      next: step.spill ? { phase: phase + 1, spill: false } : { phase, spill: true },
    },
  };
}

/**
 * The entries of a round to hand out: each key once (also when read twice), none handed out
 * earlier in the pass, the urgent lane first, each lane interleaved shard by shard with every
 * shard's oldest first: a queue (or an inline pass) then serves every shard from the start of the
 * pass instead of one shard's block after another's.
 */
export function handOut(
  pass: PassState,
  entries: readonly DueEntry[],
): { readonly pass: PassState; readonly entries: DueEntry[] } {
  const unique = [...new Map(entries.map((e) => [e.idempotencyKey, e])).values()].filter(
    (e) => !pass.handedOut.has(e.idempotencyKey),
  );
  const ordered = [
    ...interleaveByShard(unique.filter((e) => laneOfShard(pass.lanes, e.shard) === DueLane.urgent)),
    ...interleaveByShard(unique.filter((e) => laneOfShard(pass.lanes, e.shard) === DueLane.poll)),
  ];
  const handedOut = new Set([...pass.handedOut, ...ordered.map((e) => e.idempotencyKey)]);
  return { pass: { ...pass, handedOut }, entries: ordered };
}

/** Round-robin over the shards, keeping each shard's order (oldest due first). */
function interleaveByShard(entries: readonly DueEntry[]): DueEntry[] {
  const byShard = new Map<number, DueEntry[]>();
  for (const entry of entries) {
    const list = byShard.get(entry.shard) ?? [];
    list.push(entry);
    byShard.set(entry.shard, list);
  }
  const lists = [...byShard.entries()].sort((a, b) => a[0] - b[0]).map(([, list]) => list);
  const out: DueEntry[] = [];
  for (let i = 0; out.length < entries.length; i++) {
    for (const list of lists) {
      const entry = list[i];
      if (entry) out.push(entry);
    }
  }
  return out;
}

/**
 * The pass after the queue refused keys of `shards`: each starts a fresh sweep at its oldest
 * entry next pass, and is not read again in this one.
 */
export function refuse(pass: PassState, shards: readonly number[]): PassState {
  if (shards.length === 0) return pass;
  const drop = (lane: readonly number[]) => lane.filter((shard) => !shards.includes(shard));
  return {
    ...pass,
    restart: new Set([...pass.restart, ...shards]),
    more: { urgent: drop(pass.more.urgent), poll: drop(pass.more.poll) },
  };
}

/** How late the due index runs: the liveness figures of a pass (ms; 0 when nothing was seen). */
export interface DueLags {
  /** Age of the oldest `dispatch_unknown` seen. */
  readonly oldestUnknownAgeMs: number;
  /** How late the most overdue entry of the urgent lane is (an expiry waits on these). */
  readonly oldestDueLagMs: number;
  /** The same for the status-poll lane: informational (the SMS went out). */
  readonly oldestPollLagMs: number;
}

/** `lags` widened by what `entries` show at `now` (an undefined entry: an empty shard). */
export function observeLags(
  lags: DueLags,
  entries: readonly (DueEntry | undefined)[],
  now: EpochMs,
  lanes: DueLanes,
): DueLags {
  let { oldestUnknownAgeMs, oldestDueLagMs, oldestPollLagMs } = lags;
  for (const entry of entries) {
    if (!entry) continue;
    if (laneOfShard(lanes, entry.shard) === DueLane.poll)
      oldestPollLagMs = Math.max(oldestPollLagMs, now - entry.dueAt);
    else oldestDueLagMs = Math.max(oldestDueLagMs, now - entry.dueAt);
    if (entry.state === NotificationState.dispatchUnknown && entry.unknownSince !== undefined)
      oldestUnknownAgeMs = Math.max(oldestUnknownAgeMs, now - entry.unknownSince);
  }
  return { oldestUnknownAgeMs, oldestDueLagMs, oldestPollLagMs };
}
