/**
 * Budget counters written on their own, outside the admission transaction: the path a hot number
 * takes (docs/abuse-limits.md#a-hot-number). A transaction that meets another on a number's
 * counter item is cancelled (`TransactionConflict`), so a burst of transactions at one number
 * cancel each other; single-item conditional updates of the same item are applied one after the
 * other instead, and a refusal is one failed condition returning the item as it is (`ALL_OLD`).
 * A slot taken here is given back when the command is not written after all.
 */
import { ConditionalCheckFailedException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type BudgetCounter, compactedLog, freesAt, hasRoom, storedLog } from '../../domain/budgets.js';
import type { EpochMs } from '../../domain/notification.js';
import { allOf, tallyBelow } from './conditions.js';
import { StoreWriteError, storeFault } from './errors.js';
import { counterItemKey, counterTtl } from './item-mapping.js';
import { TableSchema } from './schema.js';

/** Tries of one counter write that meets in-flight transactions or a concurrent rewrite. */
const MAX_SLOT_ATTEMPTS = 25;

/** What the slot writes need: the document client and the table. */
interface SlotTable {
  readonly doc: DynamoDBDocumentClient;
  readonly table: string;
}

/** A slot was taken, or the counter is full (nothing written) and frees up at `freesAt`. */
export type SlotResult =
  | { readonly kind: 'taken' }
  | { readonly kind: 'full'; readonly scope: BudgetCounter['scope']; readonly freesAt: EpochMs };

/** Backoff with jitter between tries against the same item. */
const backoff = (attempt: number) => new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));

/**
 * The update of one counter item, in the admission transaction or on its own. A log gets this
 * admission in front, guarded by room in every window and by its length staying under the
 * rewrite length; a log `seen` at that length is rewritten to its entries that still matter,
 * guarded by being as seen (another writer's entry in between fails it, and the next try decides
 * again). Fixed windows each get `ADD :one`, guarded by `tally < limit`.
 */
export function counterUpdate(counter: BudgetCounter, seen: readonly number[] | undefined) {
  const ttl = { '#ttl': TableSchema.ttlAttribute };
  const common = {
    Key: counterItemKey(counter.key),
    // The item as it is tells which window is full, hence when the destination frees up.
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
  if (counter.kind === 'log') {
    const names = { ...ttl, '#log': counter.attribute };
    if (seen) {
      return {
        ...common,
        UpdateExpression: 'SET #log = :log, #ttl = :ttl',
        ConditionExpression: '#log = :seen',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ':log': compactedLog(counter, seen),
          ':seen': seen,
          ':ttl': counterTtl(counter),
        },
      };
    }
    const room = counter.windows.map(
      (w, i) => `(attribute_not_exists(#log[${w.limit - 1}]) OR #log[${w.limit - 1}] <= :cut${i})`,
    );
    return {
      ...common,
      UpdateExpression: 'SET #log = list_append(:entry, if_not_exists(#log, :none)), #ttl = :ttl',
      ConditionExpression: [...room, `attribute_not_exists(#log[${counter.compactAt - 1}])`].join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: {
        ...Object.fromEntries(counter.windows.map((w, i) => [`:cut${i}`, counter.at - w.windowMs])),
        ':entry': [counter.at],
        ':none': [],
        ':ttl': counterTtl(counter),
      },
    };
  }
  const below = allOf(...counter.tallies.map((t, i) => tallyBelow(i, t.attribute, t.limit)));
  const adds = counter.tallies.map((_, i) => `#t${i} :one`).join(', ');
  return {
    ...common,
    UpdateExpression: `SET #ttl = :ttl ADD ${adds}`,
    ConditionExpression: below.ConditionExpression,
    ExpressionAttributeNames: { ...below.ExpressionAttributeNames, ...ttl },
    ExpressionAttributeValues: { ...below.ExpressionAttributeValues, ':one': 1, ':ttl': counterTtl(counter) },
  };
}

/**
 * Takes one slot of `counter` with a single conditional update: `taken`, or `full` (with when it
 * frees up) when a window has no room. A log at its rewrite length is rewritten (with this
 * admission in front) on the next try; an item held by an in-flight transaction is tried again
 * after a backoff. Faults throw (a retry of the request is safe: nothing was counted).
 */
export async function takeSlot(target: SlotTable, counter: BudgetCounter): Promise<SlotResult> {
  let seen: number[] | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      await target.doc.send(new UpdateCommand({ TableName: target.table, ...counterUpdate(counter, seen) }));
      return { kind: 'taken' };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const item = error.Item ? unmarshall(error.Item) : undefined;
        if (!hasRoom(counter, item)) {
          return { kind: 'full', scope: counter.scope, freesAt: freesAt(counter, item) };
        }
        // Room in every window: the log is at its rewrite length, or a rewrite lost to another writer.
        const log = counter.kind === 'log' ? storedLog(item, counter) : [];
        seen = counter.kind === 'log' && log.length >= counter.compactAt ? log : undefined;
      } else if (!(error instanceof TransactionConflictException)) {
        throw storeFault(error, 'budget slot write');
      }
      if (attempt >= MAX_SLOT_ATTEMPTS) {
        throw storeFault(
          error,
          'budget slot write',
          (e) => new StoreWriteError('budget slot write failed', { cause: e }),
        );
      }
      if (error instanceof TransactionConflictException) await backoff(attempt);
    }
  }
}

/**
 * Gives back a slot {@link takeSlot} took for an admission that wrote no command. A log loses one
 * entry equal to this admission's time (entries of one instant are interchangeable: the log's
 * windows count times, not admissions), found by a strong read and removed guarded by still being
 * there; fixed windows count one less. `false` when it could not be given back in its tries: the
 * slot then frees with its window, never later.
 */
export async function giveBackSlot(target: SlotTable, counter: BudgetCounter): Promise<boolean> {
  const Key = counterItemKey(counter.key);
  for (let attempt = 1; attempt <= MAX_SLOT_ATTEMPTS; attempt++) {
    try {
      if (counter.kind !== 'log') {
        const names = Object.fromEntries(counter.tallies.map((t, i) => [`#t${i}`, t.attribute]));
        await target.doc.send(
          new UpdateCommand({
            TableName: target.table,
            Key,
            UpdateExpression: `ADD ${counter.tallies.map((_, i) => `#t${i} :minus`).join(', ')}`,
            ConditionExpression: counter.tallies.map((_, i) => `#t${i} >= :one`).join(' AND '),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ':minus': -1, ':one': 1 },
          }),
        );
        return true;
      }
      const out = await target.doc.send(
        new GetCommand({ TableName: target.table, Key, ConsistentRead: true }),
      );
      const index = storedLog(out.Item, counter).indexOf(counter.at);
      // Not there: nothing of ours is counted (it never landed, or left the log).
      if (index < 0) return true;
      await target.doc.send(
        new UpdateCommand({
          TableName: target.table,
          Key,
          UpdateExpression: `REMOVE #log[${index}]`,
          ConditionExpression: `#log[${index}] = :at`,
          ExpressionAttributeNames: { '#log': counter.attribute },
          ExpressionAttributeValues: { ':at': counter.at },
        }),
      );
      return true;
    } catch (error) {
      // Another writer moved the entries (the next try reads again) or holds the item.
      if (
        !(error instanceof ConditionalCheckFailedException || error instanceof TransactionConflictException)
      ) {
        return false;
      }
      if (error instanceof TransactionConflictException) await backoff(attempt);
    }
  }
  return false;
}
