/**
 * An in-memory {@link NotificationStore} with the DynamoDB adapter's semantics: admission is a
 * conditional put, every transition is guarded by state and version and writes its evidence record
 * atomically, a final record loses its sealed payload, `reschedule` moves only `dueAt`, and `due`
 * lists only items that carry a `dueAt` (the sparse index), spread over the same shards; the
 * reconciler's cursor is guarded by version; a poison item (one the DynamoDB adapter could not
 * parse) can be planted with {@link MemoryNotificationStore.plantCorrupt}. Budget counters behave
 * like the adapter's transaction: an existing key wins (nothing counted), a full counter refuses
 * (nothing written: a destination's log without room in a sliding window, a fixed window at its
 * limit), otherwise the command and every entry or increment are written together. One
 * command per event: a second key for an admitted (`event_id`, channel, template) gets
 * `event_taken` (after `exists`, before any budget), as the adapter's event guard does. For
 * model-based tests.
 */

import { CorruptItemError } from '../../shared/adapters/dynamodb/errors.js';
import { DUE_LANE_SHARDS, dueShardOf, newWriteId } from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import {
  type BudgetCounter,
  compactedLog,
  freesAt,
  logAdmits,
  type WindowCounter,
} from '../../shared/domain/budgets.js';
import {
  type AppliedTransition,
  type EpochMs,
  type EvidenceRecord,
  isFinal,
  type NotificationRecord,
} from '../../shared/domain/notification.js';
import type {
  AdmitResult,
  DueEntry,
  DuePage,
  DueShardPage,
  EventClaim,
  NotificationStore,
  PoisonMark,
  ReconcileCursor,
  StoredCommand,
  TransitionWriteResult,
} from '../../shared/ports/store.js';

/** The store operations, as {@link MemoryStoreOptions.beforeOperation} names them. */
export type StoreOperation =
  | 'admit'
  | 'get'
  | 'evidence'
  | 'byEvent'
  | 'transition'
  | 'reschedule'
  | 'due'
  | 'cursor'
  | 'poison';

/**
 * What becomes of a write's answer after the write was applied (see
 * {@link MemoryStoreOptions.afterWrite}): `surface` loses it (a timeout or a reset after commit:
 * the store recovers as the adapter does, by recognising its own write), `retry` sends the same
 * write again (an SDK retry meeting its own committed write).
 */
export type LostAnswer = 'surface' | 'retry';

export interface MemoryStoreOptions {
  /**
   * Runs before each operation touches the data: may throw (an injected fault: nothing is written,
   * like a throttled request) or wait (a scheduler deciding the interleaving).
   */
  readonly beforeOperation?: (operation: StoreOperation, idempotencyKey?: string) => void | Promise<void>;
  /**
   * Runs after each write was applied: a {@link LostAnswer} loses its answer. The caller must
   * get what it would have got had the answer arrived (the port contract's "answer lost after
   * commit").
   */
  readonly afterWrite?: (operation: StoreOperation, idempotencyKey?: string) => LostAnswer | undefined;
}

interface Entry {
  record: NotificationRecord;
  sealedPayload?: string;
  evidence: EvidenceRecord[];
  /** Consecutive poison marks (reset by a transition or reschedule). */
  poisonCount?: number;
  parked?: boolean;
  /** The id of the admission write (the adapter's `admission_write_id`). */
  admissionId?: string;
  /** The id of the write that wrote the current version (the adapter's `write_id`). */
  writeId?: string;
  /** The id of the last poison mark (the adapter's `poison_write_id`). */
  poisonWriteId?: string;
  /** Set by {@link MemoryNotificationStore.plantCorrupt}: `get` throws this, like an unparseable item. */
  corrupt?: string;
}

const copy = <T>(value: T): T => structuredClone(value);

/** See the module comment. Every read returns copies, so callers cannot mutate stored state. */
export class MemoryNotificationStore implements NotificationStore {
  readonly dueShardCount: number = TableSchema.dueShardCount;
  readonly dueLanes = DUE_LANE_SHARDS;
  private readonly entries = new Map<string, Entry>();
  private readonly counters = new Map<string, number>();
  /** Admission logs (newest first), kept to the entries that can matter, as the adapter rewrites them. */
  private readonly logs = new Map<string, number[]>();
  /** Event guards: `event_id`, channel, template -> the first command's claim. */
  private readonly eventClaims = new Map<string, EventClaim>();
  private cursor: ReconcileCursor & { writeId?: string } = { version: 0, shards: {} };
  private readonly beforeOperation: MemoryStoreOptions['beforeOperation'];
  private readonly afterWrite: MemoryStoreOptions['afterWrite'];

  constructor(options: MemoryStoreOptions = {}) {
    this.beforeOperation = options.beforeOperation;
    this.afterWrite = options.afterWrite;
  }

  /**
   * Runs one try of a write, then what {@link MemoryStoreOptions.afterWrite} asks. Every try
   * recognises a committed write carrying its own id (as the adapter does on a failed guard or
   * on its re-read), so a second try of the same write is the recovery of either kind.
   */
  private afterCommit<T>(operation: StoreOperation, key: string | undefined, attempt: () => T): T {
    const result = attempt();
    return this.afterWrite?.(operation, key) === undefined ? result : attempt();
  }

  async admit(
    record: NotificationRecord,
    evidence: EvidenceRecord,
    sealedPayload: string,
    counters: readonly BudgetCounter[] = [],
  ): Promise<AdmitResult> {
    await this.beforeOperation?.('admit', record.idempotencyKey);
    const writeId = newWriteId();
    return this.afterCommit('admit', record.idempotencyKey, () =>
      this.admitOnce(record, evidence, sealedPayload, counters, writeId),
    );
  }

  /** One try of an admission; a try that meets its own committed write (same id) is `admitted`. */
  private admitOnce(
    record: NotificationRecord,
    evidence: EvidenceRecord,
    sealedPayload: string,
    counters: readonly BudgetCounter[],
    writeId: string,
  ): AdmitResult {
    const existing = this.entries.get(record.idempotencyKey);
    if (existing) {
      return {
        kind: existing.admissionId === writeId ? 'admitted' : 'exists',
        stored: this.stored(existing),
      };
    }
    // The event guard: one command per (event_id, channel, template), whatever key arrives.
    const eventKey = `${record.eventId}\u0000${record.channel}\u0000${record.template}`;
    const first = this.eventClaims.get(eventKey);
    if (first) return { kind: 'event_taken', first: copy(first) };
    // Tally attributes name their window, so a new window starts at zero, as in the DynamoDB item.
    const count = (c: WindowCounter, attribute: string) => this.counters.get(`${c.key}/${attribute}`) ?? 0;
    const stored = (c: BudgetCounter) =>
      c.kind === 'log'
        ? { [c.attribute]: this.logs.get(c.key) ?? [] }
        : Object.fromEntries(c.tallies.map((t) => [t.attribute, count(c, t.attribute)]));
    const full = counters.filter((c) =>
      c.kind === 'log'
        ? !logAdmits(c, this.logs.get(c.key) ?? [])
        : c.tallies.some((t) => count(c, t.attribute) >= t.limit),
    );
    if (full.length > 0) {
      const latest = full
        .map((c) => ({ scope: c.scope, freesAt: freesAt(c, stored(c)) }))
        .sort((a, b) => b.freesAt - a.freesAt)[0] as { scope: BudgetCounter['scope']; freesAt: number };
      return { kind: 'over_budget', ...latest };
    }
    for (const c of counters) {
      if (c.kind === 'log') this.logs.set(c.key, compactedLog(c, this.logs.get(c.key) ?? []));
      else for (const t of c.tallies) this.counters.set(`${c.key}/${t.attribute}`, count(c, t.attribute) + 1);
    }
    this.eventClaims.set(eventKey, {
      idempotencyKey: record.idempotencyKey,
      payloadFingerprint: record.payloadFingerprint,
      destinationFingerprint: record.destinationFingerprint,
    });
    this.entries.set(record.idempotencyKey, {
      record: copy(record),
      sealedPayload,
      evidence: [copy(evidence)],
      admissionId: writeId,
    });
    return { kind: 'admitted', stored: { record: copy(record), sealedPayload } };
  }

  async get(idempotencyKey: string): Promise<StoredCommand | undefined> {
    await this.beforeOperation?.('get', idempotencyKey);
    const entry = this.entries.get(idempotencyKey);
    if (entry?.corrupt) throw new CorruptItemError(entry.corrupt);
    return entry ? this.stored(entry) : undefined;
  }

  async evidence(idempotencyKey: string): Promise<EvidenceRecord[]> {
    await this.beforeOperation?.('evidence', idempotencyKey);
    return copy(this.entries.get(idempotencyKey)?.evidence ?? []).sort((a, b) => a.seq - b.seq);
  }

  async byEvent(eventId: string): Promise<NotificationRecord[]> {
    await this.beforeOperation?.('byEvent');
    return [...this.entries.values()].filter((e) => e.record.eventId === eventId).map((e) => copy(e.record));
  }

  async transition(applied: AppliedTransition): Promise<TransitionWriteResult> {
    await this.beforeOperation?.('transition', applied.previous.idempotencyKey);
    const writeId = newWriteId();
    return this.afterCommit('transition', applied.previous.idempotencyKey, () =>
      this.transitionOnce(applied, writeId),
    );
  }

  private transitionOnce(applied: AppliedTransition, writeId: string): TransitionWriteResult {
    const { previous, next, evidence } = applied;
    const entry = this.entries.get(previous.idempotencyKey);
    // The same guard as the DynamoDB transaction: state and version, and a new evidence seq.
    if (
      !entry ||
      entry.record.state !== previous.state ||
      entry.record.version !== previous.version ||
      entry.evidence.some((e) => e.seq === evidence.seq)
    ) {
      if (entry?.writeId === writeId && entry.record.version === next.version) {
        return { kind: 'written', record: copy(next) };
      }
      return { kind: 'stale', current: entry ? copy(entry.record) : undefined };
    }
    entry.writeId = writeId;
    entry.record = copy(next);
    entry.evidence.push(copy(evidence));
    delete entry.poisonCount;
    if (isFinal(next)) delete entry.sealedPayload;
    return { kind: 'written', record: copy(next) };
  }

  async reschedule(record: NotificationRecord, dueAt: EpochMs): Promise<TransitionWriteResult> {
    await this.beforeOperation?.('reschedule', record.idempotencyKey);
    // Idempotent, as in the adapter: a second try meets a guard that still holds.
    return this.afterCommit('reschedule', record.idempotencyKey, (): TransitionWriteResult => {
      const entry = this.entries.get(record.idempotencyKey);
      if (!entry || entry.record.state !== record.state || entry.record.version !== record.version) {
        return { kind: 'stale', current: entry ? copy(entry.record) : undefined };
      }
      entry.record = { ...entry.record, dueAt };
      delete entry.poisonCount;
      return { kind: 'written', record: { ...copy(record), dueAt } };
    });
  }

  async due(now: EpochMs, limit: number, cursor?: string): Promise<DuePage> {
    await this.beforeOperation?.('due');
    const due = [...this.entries.values()]
      // Like the DynamoDB adapter: the operator listing skips items it cannot read.
      .filter((e) => e.corrupt === undefined)
      .map((e) => e.record)
      .filter((r) => r.dueAt !== undefined && r.dueAt <= now)
      .sort((a, b) => (a.dueAt ?? 0) - (b.dueAt ?? 0) || a.idempotencyKey.localeCompare(b.idempotencyKey));
    const start = cursor === undefined ? 0 : Number(cursor);
    const items = due.slice(start, start + limit).map(copy);
    const end = start + items.length;
    return end < due.length ? { items, cursor: String(end) } : { items };
  }

  async dueInShard(shard: number, now: EpochMs, limit: number, cursor?: string): Promise<DueShardPage> {
    await this.beforeOperation?.('due');
    const after = cursor === undefined ? undefined : (JSON.parse(cursor) as { dueAt: number; key: string });
    const order = (a: { dueAt: number; key: string }, b: { dueAt: number; key: string }) =>
      a.dueAt - b.dueAt || a.key.localeCompare(b.key);
    const due = [...this.entries.values()]
      .filter((e) => e.record.dueAt !== undefined && e.record.dueAt <= now)
      .filter((e) => Number(dueShardOf(e.record.idempotencyKey, e.record.state)) === shard)
      .map((e) => ({ entry: e, pos: { dueAt: e.record.dueAt ?? 0, key: e.record.idempotencyKey } }))
      .filter((e) => after === undefined || order(e.pos, after) > 0)
      .sort((a, b) => order(a.pos, b.pos));
    const page = due.slice(0, Math.max(1, limit));
    const entries = page.map(({ entry }) => dueEntryOf(entry, shard));
    const last = page.at(-1);
    const resumeAfter = last ? { resumeAfter: JSON.stringify(last.pos) } : {};
    return due.length > page.length && last
      ? { entries, cursor: JSON.stringify(last.pos), ...resumeAfter }
      : { entries, ...resumeAfter };
  }

  async oldestDue(shard: number, now: EpochMs): Promise<DueEntry | undefined> {
    return (await this.dueInShard(shard, now, 1)).entries[0];
  }

  async readReconcileCursor(): Promise<ReconcileCursor> {
    await this.beforeOperation?.('cursor');
    return { version: this.cursor.version, shards: copy(this.cursor.shards) };
  }

  async writeReconcileCursor(previousVersion: number, shards: Readonly<Record<string, string>>) {
    await this.beforeOperation?.('cursor');
    const writeId = newWriteId();
    return this.afterCommit('cursor', undefined, () => {
      if (this.cursor.version !== previousVersion) {
        return this.cursor.version === previousVersion + 1 && this.cursor.writeId === writeId;
      }
      this.cursor = { version: previousVersion + 1, shards: copy(shards), writeId };
      return true;
    });
  }

  async markPoison(
    idempotencyKey: string,
    at: EpochMs,
    schedule: (poisonCount: number) => { readonly dueAt: EpochMs; readonly parked: boolean },
  ): Promise<PoisonMark | undefined> {
    await this.beforeOperation?.('poison', idempotencyKey);
    void at;
    const writeId = newWriteId();
    // The count is not idempotent: a second try finds the mark's id, as the adapter's guard does.
    return this.afterCommit('poison', idempotencyKey, () => {
      const entry = this.entries.get(idempotencyKey);
      if (!entry) return undefined;
      const poisonCount =
        entry.poisonWriteId === writeId ? (entry.poisonCount ?? 1) : (entry.poisonCount ?? 0) + 1;
      const next = schedule(poisonCount);
      entry.poisonCount = poisonCount;
      entry.poisonWriteId = writeId;
      entry.parked = next.parked;
      entry.record = { ...entry.record, dueAt: next.dueAt };
      return { poisonCount, ...next };
    });
  }

  /**
   * Test fault: from now on the item reads like one this release cannot parse (e.g. a reason code
   * written by a newer release): `get` throws, the due index still lists it.
   */
  plantCorrupt(idempotencyKey: string, cause: string): void {
    const entry = this.entries.get(idempotencyKey);
    if (entry) entry.corrupt = cause;
  }

  /** Poison marks of an item (test inspection; no hook). */
  poisonOf(idempotencyKey: string): { poisonCount: number; parked: boolean } {
    const entry = this.entries.get(idempotencyKey);
    return { poisonCount: entry?.poisonCount ?? 0, parked: entry?.parked ?? false };
  }

  /** Every stored command (test inspection; no hook). */
  records(): NotificationRecord[] {
    return [...this.entries.values()].map((e) => copy(e.record));
  }

  /** Every evidence record of every command (test inspection; no hook). */
  allEvidence(): EvidenceRecord[] {
    return [...this.entries.values()].flatMap((e) => copy(e.evidence));
  }

  /** The sealed payload of a command, if it still has one (test inspection; no hook). */
  sealedPayloadOf(idempotencyKey: string): string | undefined {
    return this.entries.get(idempotencyKey)?.sealedPayload;
  }

  private stored(entry: Entry): StoredCommand {
    return entry.sealedPayload === undefined
      ? { record: copy(entry.record) }
      : { record: copy(entry.record), sealedPayload: entry.sealedPayload };
  }
}

function dueEntryOf(entry: Entry, shard: number): DueEntry {
  const r = entry.record;
  return {
    idempotencyKey: r.idempotencyKey,
    shard,
    dueAt: r.dueAt ?? 0,
    version: r.version,
    state: r.state,
    ...(r.unknownSince === undefined ? {} : { unknownSince: r.unknownSince }),
  };
}
