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

/** Where a poison item was moved: back into the index later, or parked far away. */
export interface PoisonMark {
  /** Consecutive failures of this item (reset by any successful transition or reschedule). */
  readonly poisonCount: number;
  readonly dueAt: EpochMs;
  readonly parked: boolean;
}

/**
 * The store in its command role: admission, strong reads, guarded writes of one command and its
 * evidence. Every method is one round trip (or one transaction).
 */
export interface CommandStore {
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
