import type { BudgetCounter } from '../domain/budgets.js';
import type { DueLane } from '../domain/due-lane.js';
import type {
  AppliedTransition,
  EpochMs,
  EvidenceRecord,
  NotificationRecord,
} from '../domain/notification.js';

/** A stored command together with its sealed sensitive payload. */
export interface StoredCommand {
  readonly record: NotificationRecord;
  /** Encrypted phone and params; absent once the command is final. */
  readonly sealedPayload?: string;
}

/**
 * What the event guard of one (`event_id`, channel, template) holds: the command admitted for it
 * first. Fingerprints and a key, never a number or params.
 */
export interface EventClaim {
  /** The idempotency key of the event's one command. */
  readonly idempotencyKey: string;
  readonly payloadFingerprint: string;
  readonly destinationFingerprint: string;
}

/**
 * Result of an admission attempt: exactly one writer gets `admitted`, per key and per event
 * (`event_id`, channel, template). `exists` (this key is taken) wins over `event_taken` (another
 * key holds the event), which wins over `over_budget`: a replay is never refused nor counted,
 * and a second key for an admitted event writes and counts nothing. `over_budget` says which
 * kind of budget is spent and when it frees up (the latest end of its full windows); nothing
 * was written.
 */
export type AdmitResult =
  | { readonly kind: 'admitted'; readonly stored: StoredCommand }
  | { readonly kind: 'exists'; readonly stored: StoredCommand }
  | { readonly kind: 'event_taken'; readonly first: EventClaim }
  | {
      readonly kind: 'over_budget';
      readonly scope: BudgetCounter['scope'];
      readonly freesAt: EpochMs;
    };

/** Result of a guarded transition write. `stale` carries the record as it really is now. */
export type TransitionWriteResult =
  | { readonly kind: 'written'; readonly record: NotificationRecord }
  | { readonly kind: 'stale'; readonly current: NotificationRecord | undefined };

/** One page of due items for the reconciler. */
export interface DuePage {
  readonly items: readonly NotificationRecord[];
  readonly cursor?: string;
}

/**
 * One entry of the due index as the scheduled pass reads it: only what routing needs. It is read
 * leniently (no reason or state validation), so an item this release cannot parse still reaches a
 * worker, which isolates it, instead of failing the whole pass.
 */
export interface DueEntry {
  readonly idempotencyKey: string;
  readonly shard: number;
  readonly dueAt: EpochMs;
  /** The record version the index copy carries (message dedupe; the worker re-reads strongly). */
  readonly version?: number;
  readonly state?: string;
  readonly unknownSince?: EpochMs;
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

/** Where a poison item was moved: back into the index later, or parked far away. */
export interface PoisonMark {
  /** Consecutive failures of this item (reset by any successful transition or reschedule). */
  readonly poisonCount: number;
  readonly dueAt: EpochMs;
  readonly parked: boolean;
}

/** Persistence of commands and their evidence. Every method is one round trip (or one transaction). */
export interface NotificationStore {
  /**
   * One atomic conditional write, no read before it: the command and its event guard (one per
   * `event_id`, channel and template), plus one increment per counter. Either the key and the
   * event were free and every counter below its limit (all written), or nothing is written.
   * Returns the existing command when the key is taken, the event's first claim when another
   * key holds the event.
   */
  admit(
    record: NotificationRecord,
    evidence: EvidenceRecord,
    sealedPayload: string,
    counters?: readonly BudgetCounter[],
  ): Promise<AdmitResult>;
  /** Strongly consistent read of a command (with its sealed payload). */
  get(idempotencyKey: string): Promise<StoredCommand | undefined>;
  /** The evidence trail, ordered by seq. */
  evidence(idempotencyKey: string): Promise<EvidenceRecord[]>;
  /** Commands of one business event. */
  byEvent(eventId: string): Promise<NotificationRecord[]>;
  /** Writes a transition and its evidence atomically, guarded by state and version. */
  transition(applied: AppliedTransition): Promise<TransitionWriteResult>;
  /** Changes only when the reconciler looks next; guarded by version; no evidence (no state change). */
  reschedule(record: NotificationRecord, dueAt: EpochMs): Promise<TransitionWriteResult>;
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
  /**
   * Counts one more failure of an item that could not be read or handled and moves it out of the
   * way: `schedule(count)` says where. Never deletes anything; undefined when the item is gone.
   */
  markPoison(
    idempotencyKey: string,
    at: EpochMs,
    schedule: (poisonCount: number) => { readonly dueAt: EpochMs; readonly parked: boolean },
  ): Promise<PoisonMark | undefined>;
}
