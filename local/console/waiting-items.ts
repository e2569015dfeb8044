import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { parseReasonDetail } from '../../shared/domain/reason-detail.js';
import type { WaitingForView } from '../../shared/usecases/view.js';
import { dueShardPages, strongFields, waitingView } from './unknown-items.js';

/** One command that is not final, with what the service waits for. Never any sensitive field. */
export interface WaitingItem {
  readonly idempotency_key: string;
  readonly state: string;
  readonly last_reason: string;
  readonly reason_detail: string | null;
  readonly waiting_for: WaitingForView;
}

/**
 * Every command that is not final (the sparse `due` index holds exactly those), each read strongly
 * by key for what `waitingFor` needs, soonest wait first. Read-only; at most `limit` keys are read.
 */
export async function listWaiting(
  client: DynamoDBClient,
  tableName: string,
  options: { readonly limit?: number } = {},
): Promise<WaitingItem[]> {
  const doc = DynamoDBDocumentClient.from(client);
  const { dueShardCount } = TableSchema;
  const limit = options.limit ?? 200;
  const keys: string[] = [];
  for (let shard = 0; shard < dueShardCount && keys.length < limit; shard++) {
    for await (const page of dueShardPages(doc, tableName, shard, {
      ProjectionExpression: '#key',
      ExpressionAttributeNames: { '#key': 'idempotency_key' },
    })) {
      for (const item of page) if (keys.length < limit) keys.push(String(item.idempotency_key));
      if (keys.length >= limit) break;
    }
  }
  const fresh = await strongFields(doc, tableName, keys);
  const items: WaitingItem[] = [];
  for (const key of keys) {
    const item = fresh.get(key);
    const waiting = item === undefined ? null : waitingView(item);
    if (item === undefined || waiting === null) continue;
    items.push({
      idempotency_key: key,
      state: String(item.state),
      last_reason: String(item.last_reason ?? ''),
      reason_detail: parseReasonDetail(item.reason_detail) ?? null,
      waiting_for: waiting,
    });
  }
  return items.sort((a, b) => Date.parse(a.waiting_for.until) - Date.parse(b.waiting_for.until));
}
