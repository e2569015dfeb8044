import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { CommandImage } from '../../domain/dispatch-trigger.js';
import { NotificationState } from '../../domain/states.js';
import { RECORD_ATTRIBUTES } from './item-mapping.js';
import { TableSchema } from './schema.js';

const STATES = new Set<string>(Object.values(NotificationState));

/**
 * Reads a stream image of the table as a command, or undefined when it is none: an evidence or
 * counter item, a control item, or an image the SDK cannot unmarshall (DynamoDB Local's stream
 * renders an empty map, as in the reconciler's cursor item, as `{}`). The storage format stays
 * here; the forwarder sees only {@link CommandImage}.
 */
export function commandImageOf(image: Record<string, unknown> | undefined): CommandImage | undefined {
  if (image === undefined) return undefined;
  let item: Record<string, unknown>;
  try {
    item = unmarshall(image as Record<string, AttributeValue>);
  } catch {
    return undefined;
  }
  if (item[TableSchema.sortKey] !== TableSchema.commandSortKey) return undefined;
  const key = item[RECORD_ATTRIBUTES.idempotencyKey];
  const state = item[RECORD_ATTRIBUTES.state];
  const version = Number(item[RECORD_ATTRIBUTES.version]);
  if (
    typeof key !== 'string' ||
    typeof state !== 'string' ||
    !STATES.has(state) ||
    !Number.isFinite(version)
  ) {
    return undefined;
  }
  const nextAttemptAt = item[RECORD_ATTRIBUTES.nextAttemptAt];
  return {
    idempotencyKey: key,
    state: state as NotificationState,
    version,
    ...(typeof nextAttemptAt === 'number' ? { nextAttemptAt } : {}),
  };
}
