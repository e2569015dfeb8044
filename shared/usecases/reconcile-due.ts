import { type DueEntry, DueLane } from '../domain/due-lane.js';
import {
  afterReads,
  type DueLags,
  handOut,
  laneOfShard,
  nextReads,
  observeLags,
  type PassState,
  passLimits,
  type RoundState,
  refuse,
  startPass,
  startRound,
} from '../domain/due-pass.js';
import {
  cursorPositions,
  DEFAULT_RESWEEP_MS,
  type LaneBacklogs,
  previousSweeps,
  resweepDue,
  type ShardSweep,
  startSweeps,
} from '../domain/due-sweep.js';
import type { EpochMs } from '../domain/notification.js';
import type { CommandStore } from '../ports/command-store.js';
import type { DueIndex } from '../ports/due-index.js';
import type { DispatchQueue } from '../ports/queue.js';
import { type ItemReport, type ReconcileItemDeps, reconcileKey } from './reconcile-key.js';

/** Deps of the scheduled pass. */
export interface ReconcileDeps extends ReconcileItemDeps {
  /** The store in both roles: the pass reads the due index; an inline pass also handles commands. */
  readonly store: CommandStore & DueIndex;
  /**
   * The reconcile queue. When set, the pass only scans the due index and enqueues keys; workers do
   * the rest. When absent, the pass handles every key itself (operator CLI, tests).
   */
  readonly reconcileQueue?: DispatchQueue;
  /**
   * The status-poll queue: with a reconcile queue, the poll lane's keys go here, so a backlog of
   * status polls never holds up an expiry or an unknown's check queued behind it. Absent: the poll
   * lane shares the reconcile queue.
   */
  readonly pollQueue?: DispatchQueue;
  /** At most this many due entries per round of a pass, shared fairly between the shards. */
  readonly maxItems?: number;
  /** Items handled in parallel by an inline pass. */
  readonly concurrency?: number;
  /**
   * A shard's sweep resumes after what the previous pass read for this long, then starts again at
   * the shard's oldest due entry. Default {@link DEFAULT_RESWEEP_MS}.
   */
  readonly resweepMs?: number;
  /**
   * With a reconcile queue, at most this many rounds of `maxItems` per pass while rounds come back
   * full. Default 10 (`domain/due-pass.ts`).
   */
  readonly maxRounds?: number;
}

/** Counts of what one reconciler pass did. */
export interface ReconcileSummary {
  examined: number;
  transitioned: number;
  rescheduled: number;
  redriven: number;
  lookups: number;
  skipped: number;
  stale: number;
  errors: number;
  /** Items counted as poison this pass (moved to a later due time). */
  poisoned: number;
  /** Poison items that reached the retry cap this pass and were parked (alarm). */
  parked: number;
  /** Rounds of reading this pass did (more than one only while a round was filled). */
  rounds: number;
  /** Shards this pass started again at their oldest entry. */
  resweeps: number;
  /** The reconcile queue's backlog the pass read (-1: not read, or the queue cannot say). */
  queueBacklog: number;
  /** The same for the status-poll queue (the reconcile queue's reading when polls share it). */
  pollQueueBacklog: number;
  /** Keys put on the reconcile queue (fan-out mode). */
  enqueued: number;
  enqueueFailed: number;
  /** Due entries read per shard this pass. */
  shardEntries: number[];
  /** Shards whose read reached the end of what is due this pass (the next pass reads on from there). */
  shardsWrapped: number;
  /**
   * Age in ms of the oldest `dispatch_unknown` seen: every entry this pass read, plus the oldest due
   * entry of every shard (one `Limit: 1` read each), so no shard is invisible to the alarm.
   */
  oldestUnknownAgeMs: number;
  /**
   * How late the most overdue entry of the urgent lane is (now - its due time): the liveness
   * figure, since an expiry waits on these entries.
   */
  oldestDueLagMs: number;
  /** The same for the status-poll lane: informational (the SMS went out), not an alarm. */
  oldestPollLagMs: number;
}

/** A summary with every count at 0 (`shards`: how many per-shard entries it counts). */
export function emptyReconcileSummary(shards: number): ReconcileSummary {
  return {
    examined: 0,
    transitioned: 0,
    rescheduled: 0,
    redriven: 0,
    lookups: 0,
    skipped: 0,
    stale: 0,
    errors: 0,
    poisoned: 0,
    parked: 0,
    rounds: 0,
    resweeps: 0,
    queueBacklog: -1,
    pollQueueBacklog: -1,
    enqueued: 0,
    enqueueFailed: 0,
    shardEntries: Array.from({ length: shards }, () => 0),
    shardsWrapped: 0,
    oldestUnknownAgeMs: 0,
    oldestDueLagMs: 0,
    oldestPollLagMs: 0,
  };
}

/**
 * One scheduled pass over the sparse due index: this runs the reads and enqueues that the pure
 * planner decides (lanes and quotas in `domain/due-pass.ts`, cursor and backlog rules in
 * `domain/due-sweep.ts`). The urgent lane (what an expiry waits on) is read first; the status-poll
 * lane gets what is left, and never less than a quarter. Within a lane every shard gets an equal
 * share (left-over share goes to shards with more). Each
 * shard resumes after the last entry the previous pass read (a cursor stored in the table), so a
 * key whose copy still waits in the reconcile queue is not queued again; a shard's sweep starts
 * again at its oldest entry once `resweepMs` has passed (what a worker left due, or an entry written
 * behind the cursor). With a reconcile queue, a pass that filled its round reads another one, up to
 * `maxRounds`, so what it queues grows with what is due; each round's keys are queued before the
 * next is read. With a status-poll queue, the poll lane's keys go there and the urgent lane's to the
 * reconcile queue, so polls never sit ahead of an expiry; each lane's fresh sweep waits on its own
 * queue's backlog. It never sends an SMS.
 */
export async function reconcileDue(deps: ReconcileDeps): Promise<ReconcileSummary> {
  const { store } = deps;
  const { maxItems, maxRounds } = passLimits({
    maxItems: deps.maxItems,
    maxRounds: deps.maxRounds,
    fanOut: deps.reconcileQueue !== undefined,
  });
  const resweepMs = deps.resweepMs ?? DEFAULT_RESWEEP_MS;
  const now = deps.clock.now();
  const cursor = await store.readReconcileCursor();
  const previous = previousSweeps(cursor.shards, store.dueShardCount);
  const backlogs = await readBacklogs(deps, previous, now, resweepMs);
  const start = startSweeps(previous, {
    now,
    resweepMs,
    maxItems,
    pollShards: store.dueLanes.poll,
    backlogs,
  });
  const summary = emptyReconcileSummary(store.dueShardCount);
  summary.queueBacklog = backlogs.urgent ?? -1;
  summary.pollQueueBacklog = backlogs.poll ?? -1;
  summary.resweeps = start.resweeps;
  let pass = startPass({ now, maxItems, lanes: store.dueLanes, sweeps: start.sweeps });
  let lags: DueLags = { oldestUnknownAgeMs: 0, oldestDueLagMs: 0, oldestPollLagMs: 0 };
  for (let n = 1; n <= maxRounds; n++) {
    const round = startRound(pass, n);
    if (!round) break;
    summary.rounds = n;
    const read = await readRound(store, pass, round);
    lags = observeLags(lags, read.entries, now, store.dueLanes);
    const out = handOut(read.pass, read.entries);
    pass = out.pass;
    summary.examined += out.entries.length;
    if (deps.reconcileQueue) pass = await enqueueRound(deps, deps.reconcileQueue, pass, out.entries, summary);
    else await handleInline(deps, out.entries, summary);
  }
  // Every shard's most overdue entry, even where the quota ran out before the oldest unknown.
  const heads = await Promise.all(pass.sweeps.map((_, shard) => store.oldestDue(shard, now)));
  Object.assign(summary, observeLags(lags, heads, now, store.dueLanes));
  summary.shardEntries = [...pass.shardEntries];
  summary.shardsWrapped = pass.wrapped;
  // A lost race means an overlapping pass moved the cursor: its position is as good as ours.
  await store.writeReconcileCursor(cursor.version, cursorPositions(pass.sweeps, pass.restart));
  return summary;
}

/**
 * The queues' backlogs, read only when a lane is due for a fresh sweep (which waits while its
 * queue holds more than a round). Polls sharing the reconcile queue share its reading.
 */
async function readBacklogs(
  deps: ReconcileDeps,
  previous: readonly (ShardSweep | undefined)[],
  now: EpochMs,
  resweepMs: number,
): Promise<LaneBacklogs> {
  const { urgent, poll } = deps.store.dueLanes;
  const pollQueue = deps.pollQueue ?? deps.reconcileQueue;
  const shared = pollQueue === deps.reconcileQueue;
  const read = async (queue: DispatchQueue | undefined, lane: readonly number[]) =>
    queue?.backlog && resweepDue(previous, lane, now, resweepMs) ? await queue.backlog() : undefined;
  const [urgentBacklog, pollBacklog] = await Promise.all([
    read(deps.reconcileQueue, shared ? [...urgent, ...poll] : urgent),
    shared ? undefined : read(pollQueue, poll),
  ]);
  return { urgent: urgentBacklog, poll: shared ? urgentBacklog : pollBacklog };
}

/** Runs the reads the planner asks for, until the round has read all it may. */
async function readRound(
  index: DueIndex,
  start: PassState,
  first: RoundState,
): Promise<{ readonly pass: PassState; readonly entries: DueEntry[] }> {
  let pass = start;
  let round = first;
  const entries: DueEntry[] = [];
  for (let step = nextReads(pass, round); step; step = nextReads(pass, round)) {
    const { now, sweeps } = pass;
    const pages = await Promise.all(
      step.reads.map(({ shard, limit }) => index.dueInShard(shard, now, limit, sweeps[shard]?.position)),
    );
    ({ pass, round } = afterReads(pass, round, step, pages));
    entries.push(...pages.flatMap((page) => page.entries));
  }
  return { pass, entries };
}

/**
 * Puts a round's keys on the queues, urgent keys first, each lane on its own queue (one queue when
 * polls share it). A refused key is logged; its shard starts again at its oldest entry next pass.
 */
async function enqueueRound(
  deps: ReconcileDeps,
  reconcileQueue: DispatchQueue,
  pass: PassState,
  entries: readonly DueEntry[],
  summary: ReconcileSummary,
): Promise<PassState> {
  const pollQueue = deps.pollQueue ?? reconcileQueue;
  const queueOf = (shard: number) =>
    laneOfShard(pass.lanes, shard) === DueLane.poll ? pollQueue : reconcileQueue;
  const failed = new Set<string>();
  for (const queue of new Set([reconcileQueue, pollQueue])) {
    const batch = entries.filter((e) => queueOf(e.shard) === queue);
    if (batch.length === 0) continue;
    const result = await queue.enqueue(
      batch.map((e) => ({
        id: e.idempotencyKey,
        message: {
          idempotencyKey: e.idempotencyKey,
          version: e.version ?? 0,
          delaySeconds: 0,
          dueAt: e.dueAt,
        },
      })),
    );
    for (const key of result.failed) failed.add(key);
  }
  summary.enqueueFailed += failed.size;
  summary.enqueued += entries.length - failed.size;
  const refused = entries.filter((e) => failed.has(e.idempotencyKey));
  for (const { idempotencyKey } of refused) {
    deps.onItemError?.({
      idempotencyKey,
      cause: {
        name: 'EnqueueFailed',
        code: 'reconcile_enqueue_failed',
        message: 'the reconcile queue refused the key',
      },
      action: 'retry',
    });
  }
  return refuse(
    pass,
    refused.map((e) => e.shard),
  );
}

/** An inline pass (no reconcile queue: operator CLI, tests) handles the round's keys itself. */
async function handleInline(
  deps: ReconcileItemDeps & { readonly concurrency?: number },
  entries: readonly DueEntry[],
  summary: ReconcileSummary,
): Promise<void> {
  await runBounded(entries, deps.concurrency ?? 8, async (entry) => {
    tally(summary, await reconcileKeyInline(deps, entry.idempotencyKey));
  });
}

/** Adds one item's report to a pass summary. */
export function tally(summary: ReconcileSummary, report: ItemReport): void {
  switch (report.kind) {
    case 'missing':
    case 'skipped':
      summary.skipped++;
      return;
    case 'stale':
      summary.stale++;
      return;
    case 'transitioned':
      summary.transitioned++;
      if (report.lookup) summary.lookups++;
      return;
    case 'rescheduled':
      summary.rescheduled++;
      if (report.lookup) summary.lookups++;
      return;
    case 'redriven':
      summary.redriven++;
      summary.rescheduled++;
      return;
    case 'poisoned':
      summary.errors++;
      summary.poisoned++;
      if (report.parked) summary.parked++;
      return;
    case 'error':
      summary.errors++;
      return;
  }
}

/** Like {@link reconcileKey}, but a transient fault is reported instead of thrown (inline passes). */
async function reconcileKeyInline(deps: ReconcileItemDeps, idempotencyKey: string): Promise<ItemReport> {
  try {
    return await reconcileKey(deps, idempotencyKey);
  } catch {
    // Left due: the next sweep of its shard comes back to it.
    return { kind: 'error', transient: true };
  }
}

async function runBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(workers);
}
