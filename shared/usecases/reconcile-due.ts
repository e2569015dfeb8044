import { type DueLane, POLL_LANE_MIN_SHARE } from '../domain/due-lane.js';
import type { EpochMs } from '../domain/notification.js';
import { NotificationState } from '../domain/states.js';
import type { DispatchQueue } from '../ports/queue.js';
import type { DueEntry, NotificationStore } from '../ports/store.js';
import { type ItemReport, type ReconcileItemDeps, reconcileKey } from './reconcile-key.js';

/** Deps of the scheduled pass. */
export interface ReconcileDeps extends ReconcileItemDeps {
  /** The store in both roles: the pass reads the due index; an inline pass also handles commands. */
  readonly store: NotificationStore;
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
   * full. Default {@link DEFAULT_MAX_ROUNDS}.
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

/** How long a sweep of a shard resumes after what it read, before it starts again at the oldest. */
export const DEFAULT_RESWEEP_MS = 10_000;

/** While the reconcile queue holds a backlog, a shard is swept afresh only after this many resweep times. */
export const FORCED_RESWEEP_FACTOR = 6;

/** Rounds of reading one fan-out pass may do while more is due (each round reads `maxItems`). */
export const DEFAULT_MAX_ROUNDS = 10;

/**
 * One scheduled pass over the sparse due index. The urgent lane (what an expiry waits on) is read
 * first; the status-poll lane gets what is left, and never less than {@link POLL_LANE_MIN_SHARE}.
 * Within a lane every shard gets an equal share (left-over share goes to shards with more). Each
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
  const shards = deps.store.dueShardCount;
  const summary = emptyReconcileSummary(shards);
  const maxItems = deps.maxItems ?? 1_000;
  const maxRounds = deps.reconcileQueue ? Math.max(1, deps.maxRounds ?? DEFAULT_MAX_ROUNDS) : 1;
  const resweepMs = deps.resweepMs ?? DEFAULT_RESWEEP_MS;
  const now = deps.clock.now();
  const cursor = await deps.store.readReconcileCursor();
  const sweeps: Record<string, ShardSweep> = {};
  const previousSweeps = Array.from({ length: shards }, (_, i) => parseSweep(cursor.shards[i]));
  const pollShards = new Set(deps.store.dueLanes.poll);
  const pollQueue = deps.pollQueue ?? deps.reconcileQueue;
  const queueOf = (shard: number) => (pollShards.has(shard) ? pollQueue : deps.reconcileQueue);
  // An entry behind a sweep's position is waiting in its lane's queue or was missed (a write that
  // raced a pass). While that queue holds more than a round, it is taken as waiting: a fresh sweep
  // would queue a copy of everything the workers have not reached yet (copies were 50-75 % of the
  // workers' reads at the peak of a 5,000-event soak). The forced resweep bounds the wait of a
  // missed entry even under a standing backlog.
  const dueForResweep = (lane: readonly number[]) =>
    lane.some((shard) => {
      const previous = previousSweeps[shard];
      return !previous || now - previous.startedAt >= resweepMs;
    });
  const readBacklog = async (queue: DispatchQueue | undefined, lane: readonly number[]) =>
    queue?.backlog && dueForResweep(lane) ? await queue.backlog() : undefined;
  const shared = pollQueue === deps.reconcileQueue;
  const { urgent, poll } = deps.store.dueLanes;
  const [urgentBacklog, separatePollBacklog] = await Promise.all([
    readBacklog(deps.reconcileQueue, shared ? [...urgent, ...poll] : urgent),
    shared ? undefined : readBacklog(pollQueue, poll),
  ]);
  const pollBacklog = shared ? urgentBacklog : separatePollBacklog;
  summary.queueBacklog = urgentBacklog ?? -1;
  summary.pollQueueBacklog = pollBacklog ?? -1;
  const backlogged = (shard: number) => {
    const backlog = pollShards.has(shard) ? pollBacklog : urgentBacklog;
    return backlog !== undefined && backlog > maxItems;
  };
  previousSweeps.forEach((previous, shard) => {
    const age = previous ? now - previous.startedAt : Number.POSITIVE_INFINITY;
    const fresh = age >= resweepMs * (backlogged(shard) ? FORCED_RESWEEP_FACTOR : 1);
    if (fresh && previous) summary.resweeps++;
    sweeps[shard] = fresh || !previous ? { startedAt: now } : previous;
  });
  /** Shards a refused enqueue sends back to their oldest entry next pass (not read again in this one). */
  const restart = new Set<number>();
  const startOf = (shard: number) => sweeps[shard]?.position;
  let entries: DueEntry[] = [];
  const readShard = async (shard: number, quota: number, more: Set<number>) => {
    if (quota <= 0) return;
    const page = await deps.store.dueInShard(shard, now, quota, startOf(shard));
    entries.push(...page.entries);
    summary.shardEntries[shard] = (summary.shardEntries[shard] ?? 0) + page.entries.length;
    const sweep = sweeps[shard] ?? { startedAt: now };
    const position = page.cursor ?? page.resumeAfter ?? sweep.position;
    sweeps[shard] = position === undefined ? { startedAt: sweep.startedAt } : { ...sweep, position };
    if (page.cursor) more.add(shard);
    else {
      more.delete(shard);
      summary.shardsWrapped++;
    }
  };
  /** Reads up to `quota` entries of `targets`, fair between them; `more` keeps the shards that have more. */
  const readLane = async (targets: readonly number[], quota: number, more: Set<number>) => {
    const before = entries.length;
    const split = (shardsToRead: readonly number[], total: number) =>
      Promise.all(
        shardsToRead.map((shard, i) => readShard(shard, shareOf(total, shardsToRead.length, i), more)),
      );
    await split(targets, quota);
    // Work-conserving: what a shallow shard left unused goes to the shards that have more.
    const left = quota - (entries.length - before);
    if (left > 0 && more.size > 0) await split([...more], left);
    return entries.length - before;
  };
  const pollReserve = Math.min(maxItems, Math.ceil(maxItems * POLL_LANE_MIN_SHARE));
  const moreUrgent = new Set<number>();
  const morePolls = new Set<number>();
  const lag = (entry: DueEntry | undefined) => {
    if (!entry) return;
    if (pollShards.has(entry.shard))
      summary.oldestPollLagMs = Math.max(summary.oldestPollLagMs, now - entry.dueAt);
    else summary.oldestDueLagMs = Math.max(summary.oldestDueLagMs, now - entry.dueAt);
    if (entry.state === NotificationState.dispatchUnknown && entry.unknownSince !== undefined) {
      summary.oldestUnknownAgeMs = Math.max(summary.oldestUnknownAgeMs, now - entry.unknownSince);
    }
  };
  const queued = new Set<string>();

  for (let round = 1; round <= maxRounds; round++) {
    // The first round reads every shard; a later one only the shards the round before left more in.
    const urgentTargets = round === 1 ? deps.store.dueLanes.urgent : [...moreUrgent];
    const pollTargets = round === 1 ? deps.store.dueLanes.poll : [...morePolls];
    if (round > 1 && urgentTargets.length === 0 && pollTargets.length === 0) break;
    summary.rounds = round;
    entries = [];
    const urgentRead = urgentTargets.length
      ? await readLane(urgentTargets, maxItems - (pollTargets.length ? pollReserve : 0), moreUrgent)
      : 0;
    const pollRead = pollTargets.length ? await readLane(pollTargets, maxItems - urgentRead, morePolls) : 0;
    // What the polls left unused goes back to the urgent lane.
    const spare = maxItems - urgentRead - pollRead;
    if (spare > 0 && moreUrgent.size > 0) await readLane([...moreUrgent], spare, moreUrgent);
    for (const entry of entries) lag(entry);

    // Interleaved shard by shard, oldest first within each: a queue (or an inline pass) then serves
    // every shard from the start of the pass instead of one shard's block after another's.
    const unique = urgentFirst(
      [...new Map(entries.map((e) => [e.idempotencyKey, e])).values()].filter(
        (e) => !queued.has(e.idempotencyKey),
      ),
      deps.store.dueLanes,
    );
    for (const entry of unique) queued.add(entry.idempotencyKey);
    summary.examined += unique.length;
    if (deps.reconcileQueue) {
      // Urgent keys first, each lane on its own queue (one queue when polls share it).
      const failed: string[] = [];
      for (const queue of new Set([deps.reconcileQueue, pollQueue])) {
        const batch = unique.filter((e) => queueOf(e.shard) === queue);
        if (!queue || batch.length === 0) continue;
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
        failed.push(...result.failed);
      }
      summary.enqueueFailed += failed.length;
      summary.enqueued += unique.length - failed.length;
      const failedKeys = new Set(failed);
      for (const entry of unique.filter((e) => failedKeys.has(e.idempotencyKey))) {
        deps.onItemError?.({
          idempotencyKey: entry.idempotencyKey,
          cause: {
            name: 'EnqueueFailed',
            code: 'reconcile_enqueue_failed',
            message: 'the reconcile queue refused the key',
          },
          action: 'retry',
        });
        restart.add(entry.shard);
        moreUrgent.delete(entry.shard);
        morePolls.delete(entry.shard);
      }
    } else {
      await runBounded(unique, deps.concurrency ?? 8, async (entry) => {
        tally(summary, await reconcileKeyInline(deps, entry.idempotencyKey));
      });
    }
  }

  // Every shard's most overdue entry, even where the quota ran out before the oldest unknown.
  const all = Array.from({ length: shards }, (_, i) => i);
  for (const head of await Promise.all(all.map((shard) => deps.store.oldestDue(shard, now)))) lag(head);

  // A shard whose key the queue refused starts a fresh sweep at its oldest entry next pass.
  for (const shard of restart) sweeps[shard] = { startedAt: Number.NEGATIVE_INFINITY };
  // A lost race means an overlapping pass moved the cursor: its position is as good as ours.
  const positions: Record<string, string> = {};
  for (const [shard, sweep] of Object.entries(sweeps)) positions[shard] = formatSweep(sweep);
  await deps.store.writeReconcileCursor(cursor.version, positions);
  return summary;
}

/** The `i`-th of `n` near-equal shares of `total` (they add up to `total` exactly). */
function shareOf(total: number, n: number, i: number): number {
  return Math.floor(total / n) + (i < total % n ? 1 : 0);
}

/** Where one shard's sweep stands: when it started at the oldest entry, and what it read last. */
interface ShardSweep {
  readonly startedAt: EpochMs;
  /** The store's opaque position after the last entry read; absent: start at the oldest. */
  readonly position?: string;
}

/** The cursor item's value for one shard. */
function formatSweep(sweep: ShardSweep): string {
  const startedAt = Number.isFinite(sweep.startedAt) ? sweep.startedAt : 0;
  return JSON.stringify(
    sweep.position === undefined ? { t: startedAt } : { t: startedAt, p: sweep.position },
  );
}

/** Reads one shard's value; a value from before sweeps had a start time is an old sweep (restarts). */
function parseSweep(value: string | undefined): ShardSweep | undefined {
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

/** Urgent lane first, each lane round-robin over its shards. */
function urgentFirst(entries: readonly DueEntry[], lanes: Readonly<Record<DueLane, readonly number[]>>) {
  const poll = new Set(lanes.poll);
  return [
    ...interleaveByShard(entries.filter((e) => !poll.has(e.shard))),
    ...interleaveByShard(entries.filter((e) => poll.has(e.shard))),
  ];
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
