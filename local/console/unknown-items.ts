import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DynamoDBDocumentClient,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { parseReasonDetail } from '../../shared/domain/reason-detail.js';
import type { NotificationState, ReasonCode } from '../../shared/domain/states.js';
import { waitingFor } from '../../shared/domain/waiting-for.js';
import { toWaitingView, type WaitingForView } from '../../shared/usecases/view.js';

/** One command whose send outcome is unknown, as the console lists it. Never any sensitive field. */
export interface UnknownItem {
  readonly idempotency_key: string;
  readonly event_id: string;
  readonly attempts: number;
  /** Reconciliation checks of the current unknown outcome so far. */
  readonly checks: number;
  readonly last_reason: string;
  /** The last transition's machine-readable why (`absence_pending:canary_older_than_attempt`). */
  readonly reason_detail: string | null;
  /** What the service waits for and until when (the same function as the API view's `waiting_for`). */
  readonly waiting_for: WaitingForView | null;
  /** When the outcome became unknown; `null` if the item does not say. */
  readonly unknown_since: string | null;
  readonly age_seconds: number | null;
  /** When the reconciler looks next. */
  readonly next_check_at: string | null;
  readonly expires_at: string | null;
}

const iso = (value: unknown) => (typeof value === 'number' ? new Date(value).toISOString() : null);

/**
 * Lists `dispatch_unknown` commands, oldest first, from the sparse `due` index: only items that
 * need the reconciler are in it, so this reads work in progress, not the table. Read-only.
 */
export async function listDispatchUnknown(
  client: DynamoDBClient,
  tableName: string,
  options: { readonly now: number; readonly limit?: number },
): Promise<UnknownItem[]> {
  const doc = DynamoDBDocumentClient.from(client);
  const { dueIndex, dueShardCount } = TableSchema;
  const limit = options.limit ?? 200;
  const items: UnknownItem[] = [];
  for (let shard = 0; shard < dueShardCount; shard++) {
    for await (const page of dueShardPages(doc, tableName, shard, {
      FilterExpression: '#state = :unknown',
      ProjectionExpression: '#key, #event, #attempts, #checks, #reason, #since, #due, #expires',
      ExpressionAttributeNames: {
        '#state': 'state',
        '#key': 'idempotency_key',
        '#event': 'event_id',
        '#attempts': 'attempts',
        '#checks': 'checks',
        '#reason': 'last_reason',
        '#since': 'unknown_since',
        '#due': dueIndex.sortKey,
        '#expires': 'expires_at',
      },
      ExpressionAttributeValues: { ':unknown': 'dispatch_unknown' },
    })) {
      const strong = await strongFields(
        doc,
        tableName,
        page.map((i) => String(i.idempotency_key)),
      );
      for (const item of page) {
        const since = typeof item.unknown_since === 'number' ? item.unknown_since : undefined;
        const fresh = strong.get(String(item.idempotency_key));
        items.push({
          idempotency_key: String(item.idempotency_key),
          event_id: String(item.event_id),
          attempts: Number(item.attempts ?? 0),
          checks: Number(item.checks ?? 0),
          last_reason: String(item.last_reason ?? ''),
          reason_detail: parseReasonDetail(fresh?.reason_detail) ?? null,
          waiting_for: fresh === undefined ? null : waitingView(fresh),
          unknown_since: iso(since),
          age_seconds: since === undefined ? null : Math.max(0, Math.round((options.now - since) / 1000)),
          next_check_at: iso(item[dueIndex.sortKey]),
          expires_at: iso(item.expires_at),
        });
      }
      if (items.length >= limit) break;
    }
  }
  return items.sort((a, b) => (b.age_seconds ?? 0) - (a.age_seconds ?? 0)).slice(0, limit);
}

/**
 * The pages of one shard of the sparse `due` index, in index order: `query` names what to project
 * and filter; the shard condition is added here. Stops when the shard is read, or when the caller
 * leaves the loop.
 */
export async function* dueShardPages(
  doc: DynamoDBDocumentClient,
  tableName: string,
  shard: number,
  query: {
    readonly ProjectionExpression: string;
    readonly ExpressionAttributeNames: Readonly<Record<string, string>>;
    readonly FilterExpression?: string;
    readonly ExpressionAttributeValues?: Readonly<Record<string, unknown>>;
  },
): AsyncGenerator<Record<string, unknown>[]> {
  const { dueIndex } = TableSchema;
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: dueIndex.name,
        KeyConditionExpression: '#shard = :shard',
        ...query,
        ExpressionAttributeNames: { '#shard': dueIndex.partitionKey, ...query.ExpressionAttributeNames },
        ExpressionAttributeValues: { ':shard': String(shard), ...query.ExpressionAttributeValues },
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    yield out.Items ?? [];
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

const num = (value: unknown) => (typeof value === 'number' ? value : undefined);

/**
 * The fields the `due` index does not project (`reason_detail`, `absent_since`), read strongly
 * off the command items, 100 keys per BatchGetItem. A key missing from the answer shows no detail.
 */
export async function strongFields(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  for (let start = 0; start < keys.length; start += 100) {
    let request: Record<string, unknown>[] | undefined = keys.slice(start, start + 100).map((key) => ({
      [TableSchema.partitionKey]: key,
      [TableSchema.sortKey]: TableSchema.commandSortKey,
    }));
    for (let round = 0; request !== undefined && request.length > 0 && round < 5; round++) {
      const out: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: {
              Keys: request,
              ConsistentRead: true,
              ProjectionExpression:
                '#key, #state, #closed, #reason, #detail, #updated, #expires, #lease, #next, #absent, #due',
              ExpressionAttributeNames: {
                '#key': 'idempotency_key',
                '#state': 'state',
                '#closed': 'closed',
                '#reason': 'last_reason',
                '#detail': 'reason_detail',
                '#updated': 'updated_at',
                '#expires': 'expires_at',
                '#lease': 'lease_until',
                '#next': 'next_attempt_at',
                '#absent': 'absent_since',
                '#due': TableSchema.dueIndex.sortKey,
              },
            },
          },
        }),
      );
      for (const item of out.Responses?.[tableName] ?? []) found.set(String(item.idempotency_key), item);
      request = out.UnprocessedKeys?.[tableName]?.Keys;
    }
  }
  return found;
}

/** {@link waitingFor} on a command item's fields, as the API view shows it. */
export function waitingView(item: Record<string, unknown>): WaitingForView | null {
  const expiresAt = num(item.expires_at);
  if (expiresAt === undefined) return null;
  const optional = (name: string, value: unknown) => (num(value) === undefined ? {} : { [name]: num(value) });
  const waiting = waitingFor({
    state: String(item.state) as NotificationState,
    closed: item.closed === true,
    lastReason: String(item.last_reason) as ReasonCode,
    updatedAt: num(item.updated_at) ?? 0,
    expiresAt,
    ...optional('leaseUntil', item.lease_until),
    ...optional('nextAttemptAt', item.next_attempt_at),
    ...optional('absentSince', item.absent_since),
    ...optional('dueAt', item[TableSchema.dueIndex.sortKey]),
  });
  return waiting === undefined ? null : toWaitingView(waiting);
}
