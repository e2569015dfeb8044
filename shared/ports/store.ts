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

/** Result of an admission attempt: exactly one writer gets `admitted`. */
export type AdmitResult =
  | { readonly kind: 'admitted'; readonly stored: StoredCommand }
  | { readonly kind: 'exists'; readonly stored: StoredCommand };

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
  /** One conditional put, no read before it. Returns the existing command when the key is taken. */
  admit(record: NotificationRecord, evidence: EvidenceRecord, sealedPayload: string): Promise<AdmitResult>;
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
