/** The chaos driver's finality tracker: which admitted keys are not final yet, read from the table. */
import { BatchGetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { isFinal } from '../../shared/domain/notification.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The tracker {@link trackFinality} returns. */
export type FinalityTracker = ReturnType<typeof trackFinality>;

/**
 * Follows admitted keys until their command is final: a background loop re-reads the pending ones
 * (strongly consistent, 100 per request) a second or more after admission.
 */
export function trackFinality(client: DynamoDBClient, tableName: string) {
  const pending = new Map<string, number>();
  // The last state read of each pending key: the settle line says what the stragglers wait in.
  const lastState = new Map<string, string>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const ready = [...pending].filter(([, at]) => Date.now() - at >= 1_000).map(([key]) => key);
      try {
        const read = await finalKeys(client, tableName, ready.slice(0, 2_000), lastState);
        for (const key of read) {
          pending.delete(key);
          lastState.delete(key);
        }
      } catch {
        // An emulator hiccup: the next round reads again.
      }
      await sleep(ready.length > 2_000 ? 50 : 500);
    }
  })();
  return {
    add(key: string) {
      pending.set(key, Date.now());
    },
    pending: () => pending.size,
    /** Pending keys by their last state read, e.g. `sent 12, dispatch_unknown 3`. */
    pendingStates(): string {
      const counts = new Map<string, number>();
      for (const key of pending.keys()) {
        const state = lastState.get(key) ?? 'unread';
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      return [...counts]
        .sort((a, b) => b[1] - a[1])
        .map(([state, n]) => `${state} ${n}`)
        .join(', ');
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

/**
 * The keys among `keys` whose command is final (strongly consistent reads, 100 at a time); the
 * state of every other key read goes into `states`.
 */
async function finalKeys(
  client: DynamoDBClient,
  tableName: string,
  keys: readonly string[],
  states: Map<string, string>,
): Promise<string[]> {
  const done: string[] = [];
  const chunks: string[][] = [];
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100));
  const readChunk = async (chunk: string[]) => {
    let request:
      | Record<
          string,
          {
            Keys: Record<string, { S: string }>[];
            ConsistentRead: boolean;
            ProjectionExpression: string;
            ExpressionAttributeNames: Record<string, string>;
          }
        >
      | undefined = {
      [tableName]: {
        Keys: chunk.map((k) => ({
          [TableSchema.partitionKey]: { S: k },
          [TableSchema.sortKey]: { S: TableSchema.commandSortKey },
        })),
        ConsistentRead: true,
        ProjectionExpression: 'idempotency_key, #s, closed',
        ExpressionAttributeNames: { '#s': 'state' },
      },
    };
    while (request && Object.keys(request).length > 0) {
      const out = await client.send(new BatchGetItemCommand({ RequestItems: request }));
      for (const raw of out.Responses?.[tableName] ?? []) {
        const item = unmarshall(raw);
        if (isFinal({ state: item.state, closed: item.closed === true }))
          done.push(String(item.idempotency_key));
        else states.set(String(item.idempotency_key), String(item.state));
      }
      request = out.UnprocessedKeys as typeof request;
    }
  };
  for (let i = 0; i < chunks.length; i += 4) await Promise.all(chunks.slice(i, i + 4).map(readChunk));
  return done;
}
