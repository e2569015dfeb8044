import {
  ConditionalCheckFailedException,
  type ConsumedCapacity,
  type DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type BudgetCounter, freesAt, hasRoom, logAdmits, storedLog } from '../../domain/budgets.js';
import type { Clock } from '../../domain/clock.js';
import type { ServerTimeSample } from '../../domain/clock-skew.js';
import type {
  AppliedTransition,
  EpochMs,
  EvidenceRecord,
  NotificationRecord,
} from '../../domain/notification.js';
import { isFinal } from '../../domain/notification.js';
import type { ServerTimeSource } from '../../ports/server-time.js';
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
} from '../../ports/store.js';
import { counterUpdate, giveBackSlot, type SlotResult, takeSlot } from './budget-slots.js';
import { allOf, keyIsFree, stateIs, versionIs } from './conditions.js';
import { CorruptItemError, StoreWriteError, storeFault } from './errors.js';
import {
  admissionEvidence,
  commandItem,
  counterItemKey,
  DUE_LANE_SHARDS,
  dueShardOf,
  eventClaimFromItem,
  eventGuardItem,
  eventGuardItemKey,
  evidenceFromItem,
  evidenceItem,
  type Item,
  newWriteId,
  POISON_WRITE_ID_ATTRIBUTE,
  RECORD_ATTRIBUTES,
  recordAttributes,
  recordFromItem,
  WRITE_ID_ATTRIBUTE,
} from './item-mapping.js';
import { TableSchema } from './schema.js';
import { DynamoServerTime } from './server-time.js';

/** Called with the capacity each request consumed (benchmarks and cost figures). */
export type CapacityListener = (operation: string, capacity: readonly ConsumedCapacity[]) => void;

export interface DynamoNotificationStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly evidenceRetentionDays: number;
  readonly onCapacity?: CapacityListener;
  /**
   * Samples the server time of every answer on this clock (docs/design.md#clock-skew); without it
   * {@link DynamoNotificationStore.latestServerTime} stays undefined.
   */
  readonly serverTimeClock?: Clock;
}

const { partitionKey: PK, sortKey: SK, commandSortKey: CMD } = TableSchema;

/** Tries of a budgeted admission that loses to concurrent transactions on the same counter. */
const MAX_ADMIT_ATTEMPTS = 25;

/** The DynamoDB implementation of {@link NotificationStore} (docs/design.md#data). */
export class DynamoNotificationStore implements NotificationStore, ServerTimeSource {
  readonly dueShardCount: number = TableSchema.dueShardCount;
  readonly dueLanes = DUE_LANE_SHARDS;
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly retentionDays: number;
  private readonly onCapacity: CapacityListener | undefined;
  private readonly serverTime: DynamoServerTime | undefined;

  constructor(options: DynamoNotificationStoreOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.table = options.tableName;
    this.retentionDays = options.evidenceRetentionDays;
    this.onCapacity = options.onCapacity;
    this.serverTime = options.serverTimeClock
      ? new DynamoServerTime(options.serverTimeClock).install(options.client)
      : undefined;
  }

  /** The latest server time an answer carried (the `Date` header), when sampling is on. */
  latestServerTime(): ServerTimeSample | undefined {
    return this.serverTime?.latestServerTime();
  }

  /** A read: transient DynamoDB faults become {@link StoreUnavailableError}, others pass unchanged. */
  private async read<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw storeFault(error, operation);
    }
  }

  /**
   * After a write whose answer did not come (or came as a failed guard), the item as it is now,
   * read strongly: the writer looks for its own write id on it. A failing read throws `fault`
   * (what the write itself would have thrown).
   */
  private async reread(key: Item, fault: () => Error): Promise<Item | undefined> {
    try {
      const out = await this.doc.send(
        new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true, ...this.capacityMode }),
      );
      this.report('get', out.ConsumedCapacity);
      return out.Item;
    } catch {
      throw fault();
    }
  }

  private get capacityMode() {
    return this.onCapacity ? ({ ReturnConsumedCapacity: 'TOTAL' } as const) : {};
  }

  private report(operation: string, capacity: ConsumedCapacity | ConsumedCapacity[] | undefined): void {
    if (!this.onCapacity || capacity === undefined) return;
    this.onCapacity(operation, Array.isArray(capacity) ? capacity : [capacity]);
  }

  /**
   * The admission as one `TransactWriteItems`: the command put (the key is free), the event
   * guard put (no other key holds this `event_id`, channel and template) and, with budgets, one
   * update per counter item: a destination's admission log gets this admission's time in front,
   * guarded by every sliding window having room (its `limit`-th newest entry absent or older than
   * the window); a fixed window's tally gets `ADD :one`, guarded by `tally < limit`. So concurrent
   * admissions to one destination cannot overshoot, and a replay or a second key for the event
   * (a put's guard fails) counts nothing. Cancellation reasons say which guard failed (with the
   * item as it is, ALL_OLD); contention between transactions on the same counter or event, and
   * a log grown long enough to be rewritten, are retried here.
   */
  async admit(
    record: NotificationRecord,
    _evidence: EvidenceRecord,
    sealedPayload: string,
    counters: readonly BudgetCounter[] = [],
  ): Promise<AdmitResult> {
    const keyFree = allOf(keyIsFree(PK));
    // One id for every try: a try that meets an earlier try's committed write (its answer lost)
    // recognises it as its own.
    const writeId = newWriteId();
    const puts = [
      {
        Put: {
          TableName: this.table,
          Item: { ...commandItem(record, sealedPayload, this.retentionDays), [ADMISSION_ID]: writeId },
          ConditionExpression: keyFree.ConditionExpression,
          ExpressionAttributeNames: keyFree.ExpressionAttributeNames,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
        },
      },
      {
        // The event's first command holds it; a loser learns which key from the item.
        Put: {
          TableName: this.table,
          Item: eventGuardItem(record, this.retentionDays),
          ConditionExpression: keyFree.ConditionExpression,
          ExpressionAttributeNames: keyFree.ExpressionAttributeNames,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
        },
      },
    ];
    // A log seen at its rewrite length (from a failed try): the next try rewrites it.
    const seenLogs = new Map<number, number[]>();
    for (let attempt = 1; ; attempt++) {
      const input = {
        TransactItems: [
          ...puts,
          ...counters.map((counter, i) => ({
            Update: { TableName: this.table, ...counterUpdate(counter, seenLogs.get(i)) },
          })),
        ],
        ...this.capacityMode,
      };
      try {
        const out = await this.doc.send(new TransactWriteCommand(input));
        this.report('admit', out.ConsumedCapacity);
        return { kind: 'admitted', stored: { record, sealedPayload } };
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) {
          return this.recoverAdmission(record.idempotencyKey, writeId, error);
        }
        const reasons = error.CancellationReasons ?? [];
        const [put, guard] = reasons;
        if (put?.Code === 'ConditionalCheckFailed' && put.Item) {
          // Our own earlier try (its counters counted with it, once) or another writer's command.
          return admissionFound(unmarshall(put.Item), writeId);
        }
        if (guard?.Code === 'ConditionalCheckFailed' && guard.Item) {
          const first = eventClaimFromItem(unmarshall(guard.Item));
          // Our own key holds the event (the put's failure was not reported): a replay.
          if (first.idempotencyKey !== record.idempotencyKey) return { kind: 'event_taken', first };
          const existing = await this.get(record.idempotencyKey);
          if (existing) return { kind: 'exists', stored: existing };
        }
        const failed = counters
          .map((counter, i) => {
            const reason = reasons[i + 2];
            const item = reason?.Item ? unmarshall(reason.Item) : undefined;
            return { counter, i, item, failed: reason?.Code === 'ConditionalCheckFailed' };
          })
          .filter((c) => c.failed);
        let rewrite = false;
        for (const { counter, i, item } of failed) {
          if (counter.kind !== 'log') continue;
          const log = storedLog(item, counter);
          // Room in every window: it failed on its length (or a rewrite lost to another writer).
          if (logAdmits(counter, log)) {
            if (log.length >= counter.compactAt) seenLogs.set(i, log);
            else seenLogs.delete(i);
            rewrite = true;
          }
        }
        // A counter another admission holds: read it, and a full one refuses now. A hot number
        // under a burst would otherwise retry its transaction against every other request to it
        // until the tries ran out (503), long after its budget was spent.
        const contended = await Promise.all(
          counters
            .filter((_, i) => reasons[i + 2]?.Code === 'TransactionConflict')
            .map(async (counter) => ({
              counter,
              item: await this.reread(counterItemKey(counter.key), () =>
                storeFault(error, 'admission write'),
              ),
            })),
        );
        const full = [...failed, ...contended]
          .filter(({ counter, item }) => !hasRoom(counter, item))
          .map(({ counter, item }) => ({ scope: counter.scope, freesAt: freesAt(counter, item) }))
          .sort((a, b) => b.freesAt - a.freesAt)[0];
        if (full) {
          // Refusals are the rare path: two reads make sure a replay, or a second key for an
          // admitted event, is never refused, whatever order the guards were evaluated in.
          const [existing, first] = await Promise.all([
            this.get(record.idempotencyKey),
            this.eventClaim(record),
          ]);
          if (existing) return { kind: 'exists', stored: existing };
          if (first) return { kind: 'event_taken', first };
          return { kind: 'over_budget', ...full };
        }
        const conflict = reasons.some((r) => r.Code === 'TransactionConflict');
        if (put?.Code === 'TransactionConflict') {
          // Another request holds this very key: concurrent duplicates of one request land here, and
          // once the first has committed one strong read answers them, instead of every duplicate
          // retrying its transaction against the others (200 duplicates of a key made admission
          // several times slower).
          const item = await this.reread({ [PK]: record.idempotencyKey, [SK]: CMD }, () =>
            storeFault(error, 'admission write'),
          );
          if (item) return admissionFound(item, writeId);
        }
        if (contended.length > 0 && !rewrite) {
          // A hot number with room: the counters on their own (one conditional update each,
          // applied one after the other), then the command and its guard, instead of retrying
          // this transaction against every other one at the same number.
          return this.admitOnSlots(record, sealedPayload, counters, writeId, puts);
        }
        if (!(conflict || rewrite) || attempt >= MAX_ADMIT_ATTEMPTS) {
          // Contention that outlasts the retries, or throttling: retry-safe for the caller (503).
          throw storeFault(
            error,
            'admission write',
            (e) => new StoreWriteError('admission write failed', { cause: e }),
          );
        }
        // A log to rewrite: at once. Another admission holds the same counter or event: back off
        // with jitter and decide again.
        if (conflict) await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
      }
    }
  }

  /**
   * The admission of a hot number (docs/abuse-limits.md#a-hot-number): each counter's slot is
   * taken by a single conditional update (a full one refuses, after the reads that make sure a
   * replay or a second key is never refused; slots taken are given back), then the command and
   * its event guard are written in one transaction. When that finds the key or the event taken,
   * the slots are given back (a replay held one for that long); when its outcome is unknown they
   * are kept: never a slot given back for a command that may exist (they free with their windows).
   */
  private async admitOnSlots(
    record: NotificationRecord,
    sealedPayload: string,
    counters: readonly BudgetCounter[],
    writeId: string,
    puts: TransactItems,
  ): Promise<AdmitResult> {
    const target = { doc: this.doc, table: this.table };
    const giveBack = (list: readonly BudgetCounter[]) =>
      Promise.all(list.map((counter) => giveBackSlot(target, counter)));
    const slots = await Promise.allSettled(counters.map((counter) => takeSlot(target, counter)));
    const held = counters.filter((_, i) => {
      const slot = slots[i] as PromiseSettledResult<SlotResult>;
      return slot.status === 'fulfilled' && slot.value.kind === 'taken';
    });
    const fault = slots.find((s) => s.status === 'rejected');
    const full = slots
      .flatMap((s) => (s.status === 'fulfilled' && s.value.kind === 'full' ? [s.value] : []))
      .sort((a, b) => b.freesAt - a.freesAt)[0];
    if (fault || full) {
      await giveBack(held);
      if (fault) throw fault.reason;
      // Refusals are the rare path: a replay, or a second key, admitted meanwhile is never refused.
      const answered = await this.answeredWithoutSlot(record, writeId);
      if (answered) return answered;
      const { scope, freesAt: at } = full as Extract<SlotResult, { kind: 'full' }>;
      return { kind: 'over_budget', scope, freesAt: at };
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await this.doc.send(
          new TransactWriteCommand({ TransactItems: puts, ...this.capacityMode }),
        );
        this.report('admit', out.ConsumedCapacity);
        return { kind: 'admitted', stored: { record, sealedPayload } };
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) {
          // No verdict: the command may exist; its slots stay counted (they free with their windows).
          return this.recoverAdmission(record.idempotencyKey, writeId, error);
        }
        const [put, guard] = error.CancellationReasons ?? [];
        const verdict =
          put?.Code === 'ConditionalCheckFailed' || guard?.Code === 'ConditionalCheckFailed'
            ? await this.answeredWithoutSlot(record, writeId)
            : undefined;
        if (verdict?.kind === 'admitted') return verdict;
        const conflict = put?.Code === 'TransactionConflict' || guard?.Code === 'TransactionConflict';
        if (verdict || !conflict || attempt >= MAX_ADMIT_ATTEMPTS) {
          await giveBack(held);
          if (verdict) return verdict;
          throw storeFault(
            error,
            'admission write',
            (e) => new StoreWriteError('admission write failed', { cause: e }),
          );
        }
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
      }
    }
  }

  /**
   * What an admission is answered without a slot, strongly read: its key is taken (by its own
   * earlier write: `admitted`; by a command: `exists`) or another key holds its event.
   */
  private async answeredWithoutSlot(
    record: NotificationRecord,
    writeId: string,
  ): Promise<AdmitResult | undefined> {
    const [out, first] = await Promise.all([
      this.read('get', () =>
        this.doc.send(
          new GetCommand({
            TableName: this.table,
            Key: { [PK]: record.idempotencyKey, [SK]: CMD },
            ConsistentRead: true,
            ...this.capacityMode,
          }),
        ),
      ),
      this.eventClaim(record),
    ]);
    this.report('get', out.ConsumedCapacity);
    if (out.Item) return admissionFound(out.Item, writeId);
    if (first && first.idempotencyKey !== record.idempotencyKey) return { kind: 'event_taken', first };
    return undefined;
  }

  /**
   * An admission write that failed without a verdict (timeout, reset, 5xx) may have been applied:
   * `admitted` when the command carries this writer's admission id, otherwise the fault.
   */
  private async recoverAdmission(
    idempotencyKey: string,
    writeId: string,
    error: unknown,
  ): Promise<AdmitResult> {
    const fault = () =>
      storeFault(
        error,
        'admission write',
        (e) => new StoreWriteError('admission write failed', { cause: e }),
      );
    const item = await this.reread({ [PK]: idempotencyKey, [SK]: CMD }, fault);
    if (item?.[ADMISSION_ID] === writeId) return { kind: 'admitted', stored: storedFromItem(item) };
    throw fault();
  }

  /** The event guard of `record`'s event, strongly read (the refusal path only). */
  private async eventClaim(record: NotificationRecord): Promise<EventClaim | undefined> {
    const out = await this.read('get', () =>
      this.doc.send(
        new GetCommand({
          TableName: this.table,
          Key: eventGuardItemKey(record),
          ConsistentRead: true,
          ...this.capacityMode,
        }),
      ),
    );
    this.report('get', out.ConsumedCapacity);
    return out.Item ? eventClaimFromItem(out.Item) : undefined;
  }

  async get(idempotencyKey: string): Promise<StoredCommand | undefined> {
    const out = await this.read('get', () =>
      this.doc.send(
        new GetCommand({
          TableName: this.table,
          Key: { [PK]: idempotencyKey, [SK]: CMD },
          ConsistentRead: true,
          ...this.capacityMode,
        }),
      ),
    );
    this.report('get', out.ConsumedCapacity);
    return out.Item ? storedFromItem(out.Item) : undefined;
  }

  async evidence(idempotencyKey: string): Promise<EvidenceRecord[]> {
    const items = await this.queryAll({
      TableName: this.table,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': PK },
      ExpressionAttributeValues: { ':pk': idempotencyKey },
      ConsistentRead: true,
    });
    const records: EvidenceRecord[] = [];
    for (const item of items) {
      if (item[SK] === CMD) records.push(admissionEvidence(recordFromItem(item)));
      else records.push(evidenceFromItem(item));
    }
    return records.sort((a, b) => a.seq - b.seq);
  }

  async byEvent(eventId: string): Promise<NotificationRecord[]> {
    const { byEventIndex } = TableSchema;
    const items = await this.queryAll({
      TableName: this.table,
      IndexName: byEventIndex.name,
      KeyConditionExpression: '#e = :e',
      ExpressionAttributeNames: { '#e': byEventIndex.partitionKey },
      ExpressionAttributeValues: { ':e': eventId },
    });
    return items.map(recordFromItem);
  }

  async transition(applied: AppliedTransition): Promise<TransitionWriteResult> {
    const { previous, next, evidence } = applied;
    const writeId = newWriteId();
    const update = updateFor(previous, next, writeId);
    const guard = allOf(stateIs(previous.state), versionIs(previous.version));
    const key = { [PK]: previous.idempotencyKey, [SK]: CMD };
    try {
      const out = await this.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: key,
                UpdateExpression: update.expression,
                ConditionExpression: guard.ConditionExpression,
                ExpressionAttributeNames: { ...guard.ExpressionAttributeNames, ...update.names },
                ExpressionAttributeValues: { ...guard.ExpressionAttributeValues, ...update.values },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            {
              // The evidence item is new by construction (seq = version); the guard makes a replay harmless.
              Put: {
                TableName: this.table,
                Item: evidenceItem(evidence, previous.expiresAt, this.retentionDays),
                ConditionExpression: 'attribute_not_exists(#pk)',
                ExpressionAttributeNames: { '#pk': PK },
              },
            },
          ],
          ...this.capacityMode,
        }),
      );
      this.report('transition', out.ConsumedCapacity);
      return { kind: 'written', record: next };
    } catch (error) {
      // A failed guard may be our own write met by a retry (the first answer was lost), and a
      // write without a verdict may have been applied: either way the item tells, by our write id.
      let lostRace = false;
      let current: Item | undefined;
      if (error instanceof TransactionCanceledException) {
        const reasons = error.CancellationReasons ?? [];
        lostRace = reasons.some(
          (r) => r.Code === 'ConditionalCheckFailed' || r.Code === 'TransactionConflict',
        );
        const old = reasons[0]?.Item;
        if (old) current = unmarshall(old);
      }
      const fault = () =>
        storeFault(
          error,
          'transition write',
          (e) => new StoreWriteError('transition write failed', { cause: e }),
        );
      if (current === undefined) {
        // A lost race stays a lost race when the item cannot be read back.
        current = lostRace
          ? await this.reread(key, fault).catch(() => undefined)
          : await this.reread(key, fault);
      }
      if (current !== undefined && isOwnWrite(current, next.version, writeId)) {
        return { kind: 'written', record: next };
      }
      if (lostRace) return { kind: 'stale', current: current ? recordFromItem(current) : undefined };
      throw fault();
    }
  }

  async reschedule(record: NotificationRecord, dueAt: EpochMs): Promise<TransitionWriteResult> {
    const guard = allOf(stateIs(record.state), versionIs(record.version));
    const key = { [PK]: record.idempotencyKey, [SK]: CMD };
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          // Handled successfully: the item is not poison (any failure count starts again).
          UpdateExpression: 'SET #dueAt = :dueAt, #dueShard = :dueShard REMOVE #poison',
          ConditionExpression: guard.ConditionExpression,
          ExpressionAttributeNames: {
            ...guard.ExpressionAttributeNames,
            '#poison': TableSchema.poisonCountAttribute,
            '#dueAt': TableSchema.dueIndex.sortKey,
            '#dueShard': TableSchema.dueIndex.partitionKey,
          },
          ExpressionAttributeValues: {
            ...guard.ExpressionAttributeValues,
            ':dueAt': dueAt,
            // The lane follows the state: an item written before the lanes existed moves here.
            ':dueShard': dueShardOf(record.idempotencyKey, record.state),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ...this.capacityMode,
        }),
      );
      this.report('reschedule', out.ConsumedCapacity);
      return { kind: 'written', record: { ...record, dueAt } };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        return { kind: 'stale', current: error.Item ? recordFromItem(unmarshall(error.Item)) : undefined };
      }
      const fault = () =>
        storeFault(
          error,
          'reschedule write',
          (e) => new StoreWriteError('reschedule write failed', { cause: e }),
        );
      // The write is idempotent (a retry after it meets a guard that still holds): it was applied
      // when the item shows the same state and version with this due time.
      const item = await this.reread(key, fault);
      if (
        item?.state === record.state &&
        item.version === record.version &&
        item[TableSchema.dueIndex.sortKey] === dueAt
      ) {
        return { kind: 'written', record: { ...record, dueAt } };
      }
      throw fault();
    }
  }

  async due(now: EpochMs, limit: number, cursor?: string): Promise<DuePage> {
    // Only items needing attention are in the sparse index, so cost follows the work, not the table.
    const { dueIndex, dueShardCount } = TableSchema;
    let position = decodeCursor(cursor);
    const items: NotificationRecord[] = [];
    while (position.shard < dueShardCount && items.length < limit) {
      const out = await this.read('due', () =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            IndexName: dueIndex.name,
            KeyConditionExpression: '#shard = :shard AND #due <= :now',
            ExpressionAttributeNames: { '#shard': dueIndex.partitionKey, '#due': dueIndex.sortKey },
            ExpressionAttributeValues: { ':shard': String(position.shard), ':now': now },
            Limit: limit - items.length,
            ...(position.lastKey ? { ExclusiveStartKey: position.lastKey } : {}),
            ...this.capacityMode,
          }),
        ),
      );
      this.report('due', out.ConsumedCapacity);
      for (const item of out.Items ?? []) {
        try {
          items.push(recordFromItem(item));
        } catch (error) {
          // An item this release cannot read is the reconciler's to isolate (it counts and logs it);
          // an operator listing must not fail on it.
          if (!(error instanceof CorruptItemError)) throw error;
        }
      }
      position = out.LastEvaluatedKey
        ? { shard: position.shard, lastKey: out.LastEvaluatedKey }
        : { shard: position.shard + 1 };
    }
    const more = position.shard < dueShardCount;
    return more ? { items, cursor: encodeCursor(position) } : { items };
  }

  async dueInShard(shard: number, now: EpochMs, limit: number, cursor?: string): Promise<DueShardPage> {
    const { dueIndex } = TableSchema;
    const start = cursor
      ? (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Item)
      : undefined;
    const out = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: dueIndex.name,
        KeyConditionExpression: '#shard = :shard AND #due <= :now',
        ExpressionAttributeNames: { '#shard': dueIndex.partitionKey, '#due': dueIndex.sortKey },
        ExpressionAttributeValues: { ':shard': String(shard), ':now': now },
        Limit: Math.max(1, limit),
        ...(start ? { ExclusiveStartKey: start } : {}),
        ...this.capacityMode,
      }),
    );
    this.report('due', out.ConsumedCapacity);
    const items = out.Items ?? [];
    const entries = items.flatMap((item) => dueEntryOf(item, shard));
    const encode = (key: Item) => Buffer.from(JSON.stringify(key)).toString('base64url');
    const last = items.at(-1);
    // The index key of the last item read is an exclusive start key, whether or not the query ended.
    const resumeAfter = last ? { resumeAfter: encode(indexKeyOf(last)) } : {};
    return out.LastEvaluatedKey
      ? { entries, cursor: encode(out.LastEvaluatedKey), ...resumeAfter }
      : { entries, ...resumeAfter };
  }

  async oldestDue(shard: number, now: EpochMs): Promise<DueEntry | undefined> {
    return (await this.dueInShard(shard, now, 1)).entries[0];
  }

  async readReconcileCursor(): Promise<ReconcileCursor> {
    const { pk, sk } = TableSchema.reconcileCursorKey;
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.table,
        Key: { [PK]: pk, [SK]: sk },
        ConsistentRead: true,
        ...this.capacityMode,
      }),
    );
    this.report('get', out.ConsumedCapacity);
    const item = out.Item;
    if (!item || typeof item.version !== 'number') return { version: 0, shards: {} };
    const shards =
      typeof item.shards === 'object' && item.shards !== null ? (item.shards as Record<string, string>) : {};
    return { version: item.version, shards };
  }

  async writeReconcileCursor(
    previousVersion: number,
    shards: Readonly<Record<string, string>>,
  ): Promise<boolean> {
    const { pk, sk } = TableSchema.reconcileCursorKey;
    const guard =
      previousVersion === 0
        ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }
        : allOf(versionIs(previousVersion));
    const writeId = newWriteId();
    const ours = (item: Item | undefined) =>
      item?.version === previousVersion + 1 && item[WRITE_ID_ATTRIBUTE] === writeId;
    try {
      const out = await this.doc.send(
        new PutCommand({
          TableName: this.table,
          // No due_shard/due_at and no event id: the control item never appears in an index.
          Item: { [PK]: pk, [SK]: sk, version: previousVersion + 1, shards, [WRITE_ID_ATTRIBUTE]: writeId },
          ...guard,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ...this.capacityMode,
        }),
      );
      this.report('cursor', out.ConsumedCapacity);
      return true;
    } catch (error) {
      // Another pass won, unless the item is our own write met by a retry after a lost answer.
      if (error instanceof ConditionalCheckFailedException) {
        return ours(error.Item ? unmarshall(error.Item) : undefined);
      }
      const fault = () => new StoreWriteError('reconcile cursor write failed', { cause: error });
      if (ours(await this.reread({ [PK]: pk, [SK]: sk }, fault))) return true;
      throw fault();
    }
  }

  async markPoison(
    idempotencyKey: string,
    at: EpochMs,
    schedule: (poisonCount: number) => { readonly dueAt: EpochMs; readonly parked: boolean },
  ): Promise<PoisonMark | undefined> {
    const key = { [PK]: idempotencyKey, [SK]: CMD };
    const poison = TableSchema.poisonCountAttribute;
    let count: number;
    // ADD is not idempotent: the mark carries its own id, so a retry of a mark that was applied
    // (its answer lost) fails its guard and finds the id instead of counting twice.
    const writeId = newWriteId();
    const countIfOurs = (item: Item | undefined) =>
      item?.[POISON_WRITE_ID_ATTRIBUTE] === writeId ? Number(item[poison] ?? 1) : undefined;
    try {
      // ADD works on an item whose other attributes this release cannot read.
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: 'ADD #poison :one SET #poisonedAt = :at, #markId = :markId',
          ConditionExpression:
            'attribute_exists(#pk) AND (attribute_not_exists(#markId) OR #markId <> :markId)',
          ExpressionAttributeNames: {
            '#poison': poison,
            '#poisonedAt': 'poisoned_at',
            '#pk': PK,
            '#markId': POISON_WRITE_ID_ATTRIBUTE,
          },
          ExpressionAttributeValues: { ':one': 1, ':at': at, ':markId': writeId },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ...this.capacityMode,
        }),
      );
      this.report('poison', out.ConsumedCapacity);
      count = Number(out.Attributes?.[poison] ?? 1);
    } catch (error) {
      const fault = () => new StoreWriteError('poison count write failed', { cause: error });
      const item =
        error instanceof ConditionalCheckFailedException
          ? error.Item && unmarshall(error.Item)
          : await this.reread(key, fault);
      const ours = countIfOurs(item);
      if (ours !== undefined) count = ours;
      else if (error instanceof ConditionalCheckFailedException) return undefined;
      else throw fault();
    }
    const next = schedule(count);
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          // The item's state may be unreadable: it keeps its lane, or joins the urgent lane.
          UpdateExpression: `SET #dueAt = :dueAt, #dueShard = if_not_exists(#dueShard, :dueShard)${next.parked ? ', #parkedAt = :at' : ''}`,
          // Only the marker of this count moves it: a concurrent worker's later mark wins.
          ConditionExpression: '#poison = :count',
          ExpressionAttributeNames: {
            '#dueAt': TableSchema.dueIndex.sortKey,
            '#dueShard': TableSchema.dueIndex.partitionKey,
            '#poison': poison,
            ...(next.parked ? { '#parkedAt': 'poison_parked_at' } : {}),
          },
          ExpressionAttributeValues: {
            ':dueAt': next.dueAt,
            ':dueShard': String(DUE_LANE_SHARDS.urgent[0]),
            ':count': count,
            ...(next.parked ? { ':at': at } : {}),
          },
          ...this.capacityMode,
        }),
      );
      this.report('poison', out.ConsumedCapacity);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) {
        // Idempotent (a retry meets a guard that still holds): applied if the item shows it.
        const fault = () => new StoreWriteError('poison schedule write failed', { cause: error });
        const item = await this.reread(key, fault);
        if (item?.[poison] !== count || item[TableSchema.dueIndex.sortKey] !== next.dueAt) throw fault();
      }
    }
    return { poisonCount: count, dueAt: next.dueAt, parked: next.parked };
  }

  private async queryAll(input: ConstructorParameters<typeof QueryCommand>[0]): Promise<Item[]> {
    const items: Item[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.read('query', () =>
        this.doc.send(
          new QueryCommand({
            ...input,
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
            ...this.capacityMode,
          }),
        ),
      );
      this.report('query', out.ConsumedCapacity);
      items.push(...(out.Items ?? []));
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return items;
  }
}

/** The key of a due-index item (table and index keys), as `ExclusiveStartKey` wants it. */
function indexKeyOf(item: Item): Item {
  const { dueIndex } = TableSchema;
  return {
    [PK]: item[PK],
    [SK]: item[SK],
    [dueIndex.partitionKey]: item[dueIndex.partitionKey],
    [dueIndex.sortKey]: item[dueIndex.sortKey],
  };
}

/** A due-index item read leniently: keys and routing fields only, no state or reason validation. */
function dueEntryOf(item: Item, shard: number): DueEntry[] {
  const key = item[PK];
  const dueAt = item[TableSchema.dueIndex.sortKey];
  if (typeof key !== 'string' || typeof dueAt !== 'number') return [];
  return [
    {
      idempotencyKey: key,
      shard,
      dueAt,
      ...(typeof item.version === 'number' ? { version: item.version } : {}),
      ...(typeof item.state === 'string' ? { state: item.state } : {}),
      ...(typeof item.unknown_since === 'number' ? { unknownSince: item.unknown_since } : {}),
    },
  ];
}

/** The items of a `TransactWriteItems` (document client form). */
type TransactItems = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>;

/** The attribute holding the id of the admission write (never changed after: later writes have their own). */
const ADMISSION_ID = 'admission_write_id';

/** The key was taken: by this writer's own earlier try (its answer lost) or by another writer. */
function admissionFound(item: Item, writeId: string): AdmitResult {
  return { kind: item[ADMISSION_ID] === writeId ? 'admitted' : 'exists', stored: storedFromItem(item) };
}

/** The item is at `version` and that version was written by the write with `writeId`. */
function isOwnWrite(item: Item, version: number, writeId: string): boolean {
  return item.version === version && item[WRITE_ID_ATTRIBUTE] === writeId;
}

function storedFromItem(item: Item): StoredCommand {
  const record = recordFromItem(item);
  return typeof item.sealed_payload === 'string'
    ? { record, sealedPayload: item.sealed_payload }
    : { record };
}

/** SET what changed, REMOVE what disappeared; a final record also drops its sealed payload. */
function updateFor(previous: NotificationRecord, next: NotificationRecord, writeId: string) {
  const before = recordAttributes(previous);
  const after = recordAttributes(next);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  const attributes = new Set([
    ...Object.values(RECORD_ATTRIBUTES),
    'provider_name',
    'provider_message_id',
    TableSchema.dueIndex.partitionKey,
  ]);
  let i = 0;
  for (const attribute of attributes) {
    const name = `#a${i}`;
    const value = `:v${i}`;
    i++;
    if (after[attribute] === undefined) {
      if (before[attribute] !== undefined) {
        names[name] = attribute;
        removes.push(name);
      }
    } else if (
      !Object.is(after[attribute], before[attribute]) ||
      attribute === 'state' ||
      attribute === 'version'
    ) {
      names[name] = attribute;
      values[value] = after[attribute];
      sets.push(`${name} = ${value}`);
    }
  }
  if (isFinal(next)) {
    names['#sealed'] = 'sealed_payload';
    removes.push('#sealed');
  }
  // Who wrote this version: a writer whose answer was lost recognises its own write by it.
  names['#writeId'] = WRITE_ID_ATTRIBUTE;
  values[':writeId'] = writeId;
  sets.push('#writeId = :writeId');
  // A transition is a success: an earlier run of poison failures no longer counts.
  names['#poison'] = TableSchema.poisonCountAttribute;
  removes.push('#poison');
  const expression = [
    sets.length ? `SET ${sets.join(', ')}` : '',
    removes.length ? `REMOVE ${removes.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { expression, names, values };
}

interface CursorPosition {
  readonly shard: number;
  readonly lastKey?: Record<string, unknown>;
}

function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

function decodeCursor(cursor: string | undefined): CursorPosition {
  if (!cursor) return { shard: 0 };
  return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorPosition;
}
