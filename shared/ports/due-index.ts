import type { DueEntry, DueLane } from '../domain/due-lane.js';
import type { EpochMs, NotificationRecord } from '../domain/notification.js';

/** One page of due items for the reconciler. */
export interface DuePage {
  readonly items: readonly NotificationRecord[];
  readonly cursor?: string;
}

/** One page of one due-index shard. `cursor` is set when the shard may have more due entries. */
export interface DueShardPage {
  readonly entries: readonly DueEntry[];
  readonly cursor?: string;
  /**
   * The position just after the last entry read, set whenever the page read one, also when the
   * shard had no more: a later read from it sees only what became due since (no wrap-around).
   */
  readonly resumeAfter?: string;
}

/**
 * Where the scheduled pass stopped in each shard (the cursor survives between passes). `version`
 * guards the write, so two overlapping passes cannot both move it.
 */
export interface ReconcileCursor {
  readonly version: number;
  /** Shard number -> opaque position; a missing shard starts at its oldest due entry. */
  readonly shards: Readonly<Record<string, string>>;
}

/**
 * The store in its due-index role: what the scheduled pass reads (the sparse index of what is due,
 * spread over shards in two lanes) and the cursor it keeps between passes.
 */
export interface DueIndex {
  /** Items due for reconciliation at `now`, across all index shards (operator listing). */
  due(now: EpochMs, limit: number, cursor?: string): Promise<DuePage>;
  /** How many shards the due index is spread over (both lanes together: shard numbers 0..n-1). */
  readonly dueShardCount: number;
  /** The shards of each lane (urgent first, then status polls; see `domain/due-lane.ts`). */
  readonly dueLanes: Readonly<Record<DueLane, readonly number[]>>;
  /** Due entries of one shard, oldest `dueAt` first, continuing after `cursor`; lenient read. */
  dueInShard(shard: number, now: EpochMs, limit: number, cursor?: string): Promise<DueShardPage>;
  /** The oldest due entry of one shard (one `Limit: 1` query), or undefined when nothing is due. */
  oldestDue(shard: number, now: EpochMs): Promise<DueEntry | undefined>;
  /** The scheduled pass's cursor (version 0 and no shards when none was written yet). */
  readReconcileCursor(): Promise<ReconcileCursor>;
  /** Writes the cursor if nobody else did since `previousVersion`; false when another pass won. */
  writeReconcileCursor(previousVersion: number, shards: Readonly<Record<string, string>>): Promise<boolean>;
}
