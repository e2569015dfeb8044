import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';

/** One command whose send outcome is unknown, as the console lists it. Never any sensitive field. */
export interface UnknownItem {
  readonly idempotency_key: string;
  readonly event_id: string;
  readonly attempts: number;
  /** Reconciliation checks of the current unknown outcome so far. */
  readonly checks: number;
  readonly last_reason: string;
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
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await doc.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: dueIndex.name,
          KeyConditionExpression: '#shard = :shard',
          FilterExpression: '#state = :unknown',
          ProjectionExpression: '#key, #event, #attempts, #checks, #reason, #since, #due, #expires',
          ExpressionAttributeNames: {
            '#shard': dueIndex.partitionKey,
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
          ExpressionAttributeValues: { ':shard': String(shard), ':unknown': 'dispatch_unknown' },
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of out.Items ?? []) {
        const since = typeof item.unknown_since === 'number' ? item.unknown_since : undefined;
        items.push({
          idempotency_key: String(item.idempotency_key),
          event_id: String(item.event_id),
          attempts: Number(item.attempts ?? 0),
          checks: Number(item.checks ?? 0),
          last_reason: String(item.last_reason ?? ''),
          unknown_since: iso(since),
          age_seconds: since === undefined ? null : Math.max(0, Math.round((options.now - since) / 1000)),
          next_check_at: iso(item[dueIndex.sortKey]),
          expires_at: iso(item.expires_at),
        });
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey && items.length < limit);
  }
  return items.sort((a, b) => (b.age_seconds ?? 0) - (a.age_seconds ?? 0)).slice(0, limit);
}
