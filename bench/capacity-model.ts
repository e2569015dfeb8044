/**
 * Records every DynamoDB request a client makes, with two capacity figures per request:
 *
 * - `reported`: the `ConsumedCapacity` DynamoDB Local returned (what `ReturnConsumedCapacity` gives).
 * - `model`: what AWS would bill, computed from the item sizes before and after the request with
 *   the published rules (writes per 1 KB, reads per 4 KB, transactional writes x2, one write per
 *   GSI whose entry is added, changed or removed, two when the index key moves).
 *
 * Why both: DynamoDB Local 3.x under-reports transactions (it bills a two-item TransactWriteItems
 * as 2 units where AWS bills 4; awslabs/amazon-dynamodb-local-samples#31), and nobody returns a
 * `ConsumedCapacity` with a ConditionalCheckFailedException, although AWS bills the failed write.
 * The model needs the item before and after each write, so this is for cost runs, never for timing.
 */
import {
  type AttributeValue,
  type ConsumedCapacity,
  DescribeTableCommand,
  type DynamoDBClient,
  GetItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';

type AvItem = Record<string, AttributeValue>;

interface IndexShape {
  readonly name: string;
  readonly keys: readonly string[];
  readonly projection: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  readonly include: readonly string[];
}

interface TableShape {
  readonly keys: readonly string[];
  readonly indexes: readonly IndexShape[];
}

/** One recorded request. */
export interface CapacityEntry {
  /** Caller-set label of the step this request belongs to (e.g. `claim`). */
  readonly phase: string;
  /** SDK operation without the `Command` suffix, e.g. `TransactWriteItems`. */
  readonly operation: string;
  /** Exception name when the request failed (e.g. `ConditionalCheckFailedException`). */
  readonly failed?: string;
  /** Sum of `CapacityUnits` DynamoDB Local returned; undefined when it returned none. */
  readonly reported?: number;
  /** AWS billing model for this request. */
  readonly modelWcu: number;
  readonly modelRcu: number;
  /** Human-readable breakdown of the model (table and index writes, item sizes). */
  readonly detail: string;
}

const AV_TAGS = new Set(['S', 'N', 'B', 'BOOL', 'NULL', 'M', 'L', 'SS', 'NS', 'BS']);

/** Size in bytes of one attribute value, per the DynamoDB item size rules. */
function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((n, s) => n + Buffer.byteLength(s, 'utf8'), 0);
  if (value.NS !== undefined) return value.NS.reduce((n, s) => n + numberSize(s), 0);
  if (value.BS !== undefined) return value.BS.reduce((n, b) => n + b.byteLength, 0);
  if (value.M !== undefined) {
    return 3 + Object.entries(value.M).reduce((n, [k, v]) => n + Buffer.byteLength(k) + valueSize(v) + 1, 0);
  }
  if (value.L !== undefined) return 3 + value.L.reduce((n, v) => n + valueSize(v) + 1, 0);
  return 0;
}

/** Numbers: about one byte per two significant digits, plus one. */
function numberSize(text: string): number {
  const digits = text
    .replace(/^-/, '')
    .replace(/e.*$/i, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

/** Size in bytes of an item (attribute names plus values). */
export function itemSize(item: AvItem | undefined): number {
  if (!item) return 0;
  return Object.entries(item).reduce(
    (n, [name, value]) => n + Buffer.byteLength(name, 'utf8') + valueSize(value),
    0,
  );
}

const kb = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const readUnits = (bytes: number, consistent: boolean) =>
  Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);

/** Document-client outputs arrive unmarshalled at this middleware's step; bring them back to wire form. */
function asAvItem(item: Record<string, unknown>): AvItem {
  const values = Object.values(item);
  const wire = values.every(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      Object.keys(v).length === 1 &&
      AV_TAGS.has(Object.keys(v)[0] ?? ''),
  );
  return wire ? (item as AvItem) : (marshall(item, { removeUndefinedValues: true }) as AvItem);
}

function sumReported(capacity: ConsumedCapacity | ConsumedCapacity[] | undefined): number | undefined {
  if (capacity === undefined) return undefined;
  const list = Array.isArray(capacity) ? capacity : [capacity];
  return list.reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
}

function sameValue(a: AttributeValue | undefined, b: AttributeValue | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

interface WriteTarget {
  readonly table: string;
  readonly key: AvItem;
  /** The new item for a Put (its size counts for a failed conditional put). */
  readonly putItem?: AvItem;
  readonly kind: 'put' | 'update' | 'delete' | 'check';
}

/**
 * Attaches to DynamoDB clients and records every request with its reported and modelled capacity.
 * Set {@link phase} before each step to group the entries.
 */
export class CapacityRecorder {
  /** Label applied to the entries recorded from now on. */
  phase = 'unlabelled';
  readonly entries: CapacityEntry[] = [];
  private readonly shapes = new Map<string, Promise<TableShape>>();

  /** `raw` must be a client without this recorder attached: it reads items for the model. */
  constructor(private readonly raw: DynamoDBClient) {}

  /**
   * Adds the recording middleware to `client`. With `inject`, requests that do not ask for
   * capacity are made to (INDEXES), so libraries we do not control report it too.
   */
  attach(client: DynamoDBClient, options: { inject?: boolean } = {}): void {
    if (options.inject) {
      client.middlewareStack.add(
        (next) => async (args) => {
          const input = args.input as { ReturnConsumedCapacity?: string };
          if (input.ReturnConsumedCapacity === undefined) input.ReturnConsumedCapacity = 'INDEXES';
          return next(args);
        },
        { step: 'initialize', name: 'benchInjectCapacity', priority: 'high' },
      );
    }
    // The build step sees the marshalled input (the document client marshals in the serialize step).
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
        const input = args.input as Record<string, unknown>;
        const phase = this.phase;
        const targets = await this.writeTargets(operation, input);
        const before = await Promise.all(targets.map((t) => this.fetch(t.table, t.key)));
        try {
          const result = await next(args);
          const output = result.output as unknown as Record<string, unknown>;
          const after = await Promise.all(targets.map((t) => this.fetch(t.table, t.key)));
          const model = await this.model(operation, input, output, targets, before, after, undefined);
          const reported = sumReported(
            output.ConsumedCapacity as ConsumedCapacity | ConsumedCapacity[] | undefined,
          );
          this.entries.push({ phase, operation, ...(reported === undefined ? {} : { reported }), ...model });
          return result;
        } catch (error) {
          const failed = (error as Error).name;
          const model = await this.model(operation, input, {}, targets, before, before, failed);
          this.entries.push({ phase, operation, failed, ...model });
          throw error;
        }
      },
      { step: 'build', name: 'benchRecordCapacity', priority: 'low' },
    );
  }

  /** Forgets recorded entries. */
  reset(): void {
    this.entries.length = 0;
  }

  private shape(table: string): Promise<TableShape> {
    let shape = this.shapes.get(table);
    if (!shape) {
      shape = this.raw.send(new DescribeTableCommand({ TableName: table })).then((out) => ({
        keys: (out.Table?.KeySchema ?? []).map((k) => k.AttributeName ?? ''),
        indexes: (out.Table?.GlobalSecondaryIndexes ?? []).map((g) => ({
          name: g.IndexName ?? '',
          keys: (g.KeySchema ?? []).map((k) => k.AttributeName ?? ''),
          projection: (g.Projection?.ProjectionType ?? 'ALL') as IndexShape['projection'],
          include: g.Projection?.NonKeyAttributes ?? [],
        })),
      }));
      this.shapes.set(table, shape);
    }
    return shape;
  }

  private async keyOf(table: string, item: AvItem): Promise<AvItem> {
    const { keys } = await this.shape(table);
    const key: AvItem = {};
    for (const k of keys) if (item[k]) key[k] = item[k] as AttributeValue;
    return key;
  }

  private async fetch(table: string, key: AvItem): Promise<AvItem | undefined> {
    const out = await this.raw.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }));
    return out.Item;
  }

  private async writeTargets(operation: string, input: Record<string, unknown>): Promise<WriteTarget[]> {
    const table = input.TableName as string | undefined;
    switch (operation) {
      case 'PutItem': {
        const item = input.Item as AvItem;
        return [{ table: table ?? '', key: await this.keyOf(table ?? '', item), putItem: item, kind: 'put' }];
      }
      case 'UpdateItem':
        return [{ table: table ?? '', key: input.Key as AvItem, kind: 'update' }];
      case 'DeleteItem':
        return [{ table: table ?? '', key: input.Key as AvItem, kind: 'delete' }];
      case 'TransactWriteItems': {
        const items = input.TransactItems as Array<Record<string, Record<string, unknown>>>;
        const targets: WriteTarget[] = [];
        for (const entry of items) {
          if (entry.Put) {
            const t = entry.Put.TableName as string;
            const item = entry.Put.Item as AvItem;
            targets.push({ table: t, key: await this.keyOf(t, item), putItem: item, kind: 'put' });
          } else if (entry.Update) {
            targets.push({
              table: entry.Update.TableName as string,
              key: entry.Update.Key as AvItem,
              kind: 'update',
            });
          } else if (entry.Delete) {
            targets.push({
              table: entry.Delete.TableName as string,
              key: entry.Delete.Key as AvItem,
              kind: 'delete',
            });
          } else if (entry.ConditionCheck) {
            targets.push({
              table: entry.ConditionCheck.TableName as string,
              key: entry.ConditionCheck.Key as AvItem,
              kind: 'check',
            });
          }
        }
        return targets;
      }
      case 'BatchWriteItem': {
        const requests = input.RequestItems as Record<
          string,
          Array<Record<string, { Item?: AvItem; Key?: AvItem }>>
        >;
        const targets: WriteTarget[] = [];
        for (const [t, list] of Object.entries(requests)) {
          for (const r of list) {
            if (r.PutRequest?.Item) {
              const item = r.PutRequest.Item;
              targets.push({ table: t, key: await this.keyOf(t, item), putItem: item, kind: 'put' });
            } else if (r.DeleteRequest?.Key) {
              targets.push({ table: t, key: r.DeleteRequest.Key, kind: 'delete' });
            }
          }
        }
        return targets;
      }
      default:
        return [];
    }
  }

  private async model(
    operation: string,
    input: Record<string, unknown>,
    output: Record<string, unknown>,
    targets: readonly WriteTarget[],
    before: ReadonlyArray<AvItem | undefined>,
    after: ReadonlyArray<AvItem | undefined>,
    failed: string | undefined,
  ): Promise<{ modelWcu: number; modelRcu: number; detail: string }> {
    if (operation === 'GetItem') {
      const item = output.Item ? asAvItem(output.Item as Record<string, unknown>) : undefined;
      const size = itemSize(item);
      const rcu = failed ? 0 : readUnits(size, input.ConsistentRead === true);
      return { modelWcu: 0, modelRcu: rcu, detail: `get ${size} B${input.ConsistentRead ? ' strong' : ''}` };
    }
    if (operation === 'Query' || operation === 'Scan') {
      const items = ((output.Items ?? []) as Array<Record<string, unknown>>).map(asAvItem);
      const size = items.reduce((n, i) => n + itemSize(i), 0);
      const rcu = failed ? 0 : readUnits(size, input.ConsistentRead === true);
      return {
        modelWcu: 0,
        modelRcu: rcu,
        detail: `${operation.toLowerCase()} ${items.length} items ${size} B`,
      };
    }
    const transactional = operation === 'TransactWriteItems';
    if (failed) {
      // A failed condition still bills the write (larger of old and new item), with no index writes.
      // A cancelled transaction is not modelled (not on any path these benchmarks measure).
      if (transactional) return { modelWcu: 0, modelRcu: 0, detail: `${failed} (not modelled)` };
      const t = targets[0];
      const size = Math.max(itemSize(before[0]), itemSize(t?.putItem));
      return { modelWcu: t ? kb(size) : 0, modelRcu: 0, detail: `failed ${size} B, no index writes` };
    }
    let wcu = 0;
    const parts: string[] = [];
    for (let i = 0; i < targets.length; i++) {
      const target = targets[i] as WriteTarget;
      const old = before[i];
      const now = after[i];
      const factor = transactional ? 2 : 1;
      const size = Math.max(itemSize(old), itemSize(now));
      const table = kb(size) * factor;
      wcu += table;
      const indexWrites = target.kind === 'check' ? [] : await this.indexWrites(target.table, old, now);
      const gsi = indexWrites.reduce((n, w) => n + w.units, 0);
      wcu += gsi;
      parts.push(
        `${target.kind} ${size} B: table ${table}${transactional ? ' (tx x2)' : ''}` +
          (indexWrites.length ? `, ${indexWrites.map((w) => `${w.index} ${w.units}`).join(', ')}` : ''),
      );
    }
    return { modelWcu: wcu, modelRcu: 0, detail: parts.join('; ') };
  }

  /** GSI writes for one item change: put, delete, update, or delete+put when the index key moves. */
  private async indexWrites(
    table: string,
    old: AvItem | undefined,
    now: AvItem | undefined,
  ): Promise<Array<{ index: string; units: number }>> {
    const shape = await this.shape(table);
    const writes: Array<{ index: string; units: number }> = [];
    for (const index of shape.indexes) {
      const inOld = old !== undefined && index.keys.every((k) => old[k] !== undefined);
      const inNow = now !== undefined && index.keys.every((k) => now[k] !== undefined);
      const projected = (item: AvItem) => {
        if (index.projection === 'ALL') return item;
        const names = new Set([
          ...shape.keys,
          ...index.keys,
          ...(index.projection === 'INCLUDE' ? index.include : []),
        ]);
        return Object.fromEntries(Object.entries(item).filter(([k]) => names.has(k))) as AvItem;
      };
      if (!inOld && !inNow) continue;
      if (!inOld && now) writes.push({ index: index.name, units: kb(itemSize(projected(now))) });
      else if (old && !inNow) writes.push({ index: index.name, units: kb(itemSize(projected(old))) });
      else if (old && now) {
        const moved = index.keys.some((k) => !sameValue(old[k], now[k]));
        const a = projected(old);
        const b = projected(now);
        if (moved) writes.push({ index: index.name, units: kb(itemSize(a)) + kb(itemSize(b)) });
        else if (JSON.stringify(a) !== JSON.stringify(b)) {
          writes.push({ index: index.name, units: kb(Math.max(itemSize(a), itemSize(b))) });
        }
      }
    }
    return writes;
  }
}

/** Totals of a list of entries. */
export function totals(entries: readonly CapacityEntry[]): {
  requests: number;
  reported: number;
  modelWcu: number;
  modelRcu: number;
  byOperation: Record<string, number>;
} {
  const byOperation: Record<string, number> = {};
  for (const e of entries) byOperation[e.operation] = (byOperation[e.operation] ?? 0) + 1;
  return {
    requests: entries.length,
    reported: entries.reduce((n, e) => n + (e.reported ?? 0), 0),
    modelWcu: entries.reduce((n, e) => n + e.modelWcu, 0),
    modelRcu: entries.reduce((n, e) => n + e.modelRcu, 0),
    byOperation,
  };
}
