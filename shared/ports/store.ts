import type { BudgetCounter } from '../domain/budgets.js';
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
 * Result of an admission attempt: exactly one writer gets `admitted`. `exists` wins over
 * `over_budget`: a replay of an admitted key is never refused nor counted. `over_budget` says
 * which kind of budget is spent and when it frees up (the latest end of its full windows);
 * nothing was written.
 */
export type AdmitResult =
  | { readonly kind: 'admitted'; readonly stored: StoredCommand }
  | { readonly kind: 'exists'; readonly stored: StoredCommand }
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

/** Persistence of commands and their evidence. Every method is one round trip (or one transaction). */
export interface NotificationStore {
  /**
   * One conditional put, no read before it. Returns the existing command when the key is taken.
   * With `counters`, the put and one increment per counter are one atomic write: either the key
   * was free and every counter below its limit (all written), or nothing is written.
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
  /** Items due for reconciliation at `now`, across all index shards. */
  due(now: EpochMs, limit: number, cursor?: string): Promise<DuePage>;
}
