import { randomUUID } from 'node:crypto';
import { type BudgetCounter, counterExpiresAt } from '../../domain/budgets.js';
import { DueLane, dueLaneOf } from '../../domain/due-lane.js';
import { deriveIdempotencyKey } from '../../domain/idempotency-key.js';
import type {
  AttemptMessage,
  AttemptProvider,
  EvidenceRecord,
  NotificationRecord,
} from '../../domain/notification.js';
import { parseReasonDetail, REFUSED_DETAIL, type ReasonDetail } from '../../domain/reason-detail.js';
import { ALL_REASONS, ALL_STATES, type NotificationState, type ReasonCode } from '../../domain/states.js';
import type { EventClaim } from '../../ports/store.js';
import { CorruptItemError } from './errors.js';
import { evidenceSortKey, TableSchema } from './schema.js';

/** A DynamoDB item as the document client sees it. */
export type Item = Record<string, unknown>;

const DAY_SECONDS = 86_400;

/** The due-index shards of each lane: urgent 0..n-1, then poll n..2n-1. */
export const DUE_LANE_SHARDS: Readonly<Record<DueLane, readonly number[]>> = {
  [DueLane.urgent]: Array.from({ length: TableSchema.dueShardsPerLane }, (_, i) => i),
  [DueLane.poll]: Array.from(
    { length: TableSchema.dueShardsPerLane },
    (_, i) => TableSchema.dueShardsPerLane + i,
  ),
};

/**
 * Which due-index shard an item lives on: the lane its state is due in, and within the lane a
 * stable hash of the key, so an item moves only when it changes lanes.
 */
export function dueShardOf(idempotencyKey: string, state: NotificationState): string {
  let hash = 0;
  for (let i = 0; i < idempotencyKey.length; i++) hash = (hash * 31 + idempotencyKey.charCodeAt(i)) >>> 0;
  const shards = DUE_LANE_SHARDS[dueLaneOf(state)];
  return String(shards[hash % shards.length]);
}

/** TTL is clean-up only: long after expiry, so evidence outlives the token by the retention period. */
function ttlFor(expiresAt: number, retentionDays: number): number {
  return Math.ceil(expiresAt / 1000) + retentionDays * DAY_SECONDS;
}

/**
 * Record field -> attribute name. One map drives both directions and the update diff, so a new
 * field cannot be written but forgotten on read.
 */
export const RECORD_ATTRIBUTES = {
  idempotencyKey: 'idempotency_key',
  eventId: 'event_id',
  channel: 'channel',
  template: 'template',
  locale: 'locale',
  state: 'state',
  version: 'version',
  attempts: 'attempts',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  expiresAt: 'expires_at',
  destinationFingerprint: 'destination_fingerprint',
  payloadFingerprint: 'payload_fingerprint',
  lastReason: 'last_reason',
  reasonDetail: 'reason_detail',
  leaseUntil: 'lease_until',
  leaseOwner: 'lease_owner',
  nextAttemptAt: 'next_attempt_at',
  unknownSince: 'unknown_since',
  attemptStartedAt: 'attempt_started_at',
  callDeadline: 'call_deadline',
  attemptMessages: 'attempt_messages',
  attemptProviders: 'attempt_providers',
  absentSince: 'absent_since',
  sentAt: 'sent_at',
  dueAt: 'due_at',
  checks: 'checks',
  closed: 'closed',
} as const satisfies Partial<Record<keyof NotificationRecord, string>>;

/** The command item's attributes for a record (without keys, TTL or sealed payload). */
export function recordAttributes(record: NotificationRecord): Item {
  const item: Item = {};
  for (const [field, attribute] of Object.entries(RECORD_ATTRIBUTES)) {
    const value = record[field as keyof typeof RECORD_ATTRIBUTES];
    if (value !== undefined) item[attribute] = value;
  }
  item.provider_name = record.provider.name;
  if (record.provider.messageId !== undefined) item.provider_message_id = record.provider.messageId;
  if (record.dueAt !== undefined)
    item[TableSchema.dueIndex.partitionKey] = dueShardOf(record.idempotencyKey, record.state);
  return item;
}

/** The full command item written at admission. */
export function commandItem(record: NotificationRecord, sealedPayload: string, retentionDays: number): Item {
  return {
    [TableSchema.partitionKey]: record.idempotencyKey,
    [TableSchema.sortKey]: TableSchema.commandSortKey,
    ...recordAttributes(record),
    [TableSchema.byEventIndex.partitionKey]: record.eventId,
    [TableSchema.ttlAttribute]: ttlFor(record.expiresAt, retentionDays),
    sealed_payload: sealedPayload,
  };
}

/**
 * The writer-chosen random id of the last write to an item (command, reconcile cursor; the poison
 * mark has its own): a writer whose response was lost after DynamoDB applied the write finds its
 * own id on the item and knows the write is its own (docs/design.md, "A lost write response").
 */
export const WRITE_ID_ATTRIBUTE = 'write_id';
/** The id of the last poison mark of an item (see {@link WRITE_ID_ATTRIBUTE}). */
export const POISON_WRITE_ID_ATTRIBUTE = 'poison_write_id';

/** A fresh write id: unguessable and unique per write, never derived from the command. */
export function newWriteId(): string {
  return randomUUID();
}

/** Seconds a counter item outlives its window before TTL may delete it (TTL deletion is lazy anyway). */
const COUNTER_TTL_SLACK_SECONDS = 3_600;

/** The key of a budget counter item: the counter's key holds the fingerprint or country, never a number. */
export function counterItemKey(counterKey: string): Item {
  return { [TableSchema.partitionKey]: counterKey, [TableSchema.sortKey]: TableSchema.counterSortKey };
}

/**
 * TTL of a counter item: when nothing in it can matter any more (the longest window after this
 * admission) plus a slack. Every admission to a log moves it on; correctness never relies on it.
 */
export function counterTtl(counter: BudgetCounter): number {
  return Math.ceil(counterExpiresAt(counter) / 1000) + COUNTER_TTL_SLACK_SECONDS;
}

/**
 * The event guard: one item per (`event_id`, channel, template), written in the same transaction
 * as the command, so a second idempotency key for the same event cannot admit a second command.
 * It is a limit item ("one per event"): `pk` = `LIMIT#evt#<derived key>` (a digest of the event,
 * never the event id itself; `#` cannot occur in an idempotency key) and the counters' sort key,
 * so every reader that skips budget counters skips it too. It holds the first command's key and
 * fingerprints (no number, no params), and lives as long as the command (same TTL).
 */
export function eventGuardItemKey(
  record: Pick<NotificationRecord, 'eventId' | 'channel' | 'template'>,
): Item {
  return counterItemKey(
    `${EVENT_GUARD_PREFIX}${deriveIdempotencyKey(record.eventId, record.channel, record.template)}`,
  );
}

/** The partition-key prefix of event guards (see {@link eventGuardItemKey}). */
export const EVENT_GUARD_PREFIX = 'LIMIT#evt#';

/** The event guard item written with the admission of `record`. */
export function eventGuardItem(record: NotificationRecord, retentionDays: number): Item {
  return {
    ...eventGuardItemKey(record),
    idempotency_key: record.idempotencyKey,
    payload_fingerprint: record.payloadFingerprint,
    destination_fingerprint: record.destinationFingerprint,
    created_at: record.createdAt,
    [TableSchema.ttlAttribute]: ttlFor(record.expiresAt, retentionDays),
  };
}

/** Reads an event guard item back; throws {@link CorruptItemError} on a malformed item. */
export function eventClaimFromItem(item: Item): EventClaim {
  return {
    idempotencyKey: str(item, 'idempotency_key'),
    payloadFingerprint: str(item, 'payload_fingerprint'),
    destinationFingerprint: str(item, 'destination_fingerprint'),
  };
}

/** The evidence item for one transition. */
export function evidenceItem(evidence: EvidenceRecord, expiresAt: number, retentionDays: number): Item {
  return {
    [TableSchema.partitionKey]: evidence.idempotencyKey,
    [TableSchema.sortKey]: evidenceSortKey(evidence.seq),
    idempotency_key: evidence.idempotencyKey,
    event_id: evidence.eventId,
    seq: evidence.seq,
    at: evidence.at,
    from_state: evidence.fromState,
    to_state: evidence.toState,
    attempt: evidence.attempt,
    reason: evidence.reason,
    ...(evidence.reasonDetail === undefined ? {} : { reason_detail: evidence.reasonDetail }),
    actor: evidence.actor,
    ...(evidence.provider === undefined ? {} : { provider: evidence.provider }),
    ...(evidence.providerMessageId === undefined ? {} : { provider_message_id: evidence.providerMessageId }),
    destination_fingerprint: evidence.destinationFingerprint,
    [TableSchema.ttlAttribute]: ttlFor(expiresAt, retentionDays),
  };
}

function str(item: Item, name: string): string {
  const value = item[name];
  if (typeof value !== 'string') throw new CorruptItemError(`attribute ${name} is not a string`);
  return value;
}

function num(item: Item, name: string): number {
  const value = item[name];
  if (typeof value !== 'number') throw new CorruptItemError(`attribute ${name} is not a number`);
  return value;
}

function optNum<K extends string>(key: K, item: Item, name: string): { [P in K]?: number } {
  return (item[name] === undefined ? {} : { [key]: num(item, name) }) as { [P in K]?: number };
}

/** Every attempt's message id (a list of maps); a malformed entry makes the item corrupt. */
function optAttemptMessages(item: Item): { attemptMessages?: readonly AttemptMessage[] } {
  const value = item.attempt_messages;
  if (value === undefined) return {};
  if (!Array.isArray(value)) throw new CorruptItemError('attribute attempt_messages is not a list');
  const messages = value.map((entry: unknown): AttemptMessage => {
    const m = (typeof entry === 'object' && entry !== null ? entry : {}) as Item;
    return {
      attempt: num(m, 'attempt'),
      messageId: str(m, 'messageId'),
      ...(m.notSent === true ? { notSent: true } : {}),
    };
  });
  return { attemptMessages: messages };
}

/** Which provider each attempt went to (a list of maps); a malformed entry makes the item corrupt. */
function optAttemptProviders(item: Item): { attemptProviders?: readonly AttemptProvider[] } {
  const value = item.attempt_providers;
  if (value === undefined) return {};
  if (!Array.isArray(value)) throw new CorruptItemError('attribute attempt_providers is not a list');
  const providers = value.map((entry: unknown): AttemptProvider => {
    const m = (typeof entry === 'object' && entry !== null ? entry : {}) as Item;
    return {
      attempt: num(m, 'attempt'),
      provider: str(m, 'provider'),
      ...(m.refusedAccount === true ? { refusedAccount: true } : {}),
    };
  });
  return { attemptProviders: providers };
}

/** A stored detail, re-checked on read: one that fails the grammar is shown as refused, never as itself. */
function optDetail<K extends string>(key: K, item: Item): { [P in K]?: ReasonDetail } {
  const value = item.reason_detail;
  if (value === undefined) return {};
  return { [key]: parseReasonDetail(value) ?? REFUSED_DETAIL } as { [P in K]?: ReasonDetail };
}

function state(item: Item, name: string): NotificationState {
  const value = str(item, name);
  if (!(ALL_STATES as readonly string[]).includes(value))
    throw new CorruptItemError(`unknown state ${value}`);
  return value as NotificationState;
}

function reason(item: Item, name: string): ReasonCode {
  const value = str(item, name);
  if (!(ALL_REASONS as readonly string[]).includes(value))
    throw new CorruptItemError(`unknown reason ${value}`);
  return value as ReasonCode;
}

/** Reads a command item back into a record; throws {@link CorruptItemError} on a malformed item. */
export function recordFromItem(item: Item): NotificationRecord {
  const messageId = item.provider_message_id;
  return {
    idempotencyKey: str(item, 'idempotency_key'),
    eventId: str(item, 'event_id'),
    channel: 'sms',
    template: str(item, 'template'),
    locale: str(item, 'locale'),
    state: state(item, 'state'),
    version: num(item, 'version'),
    attempts: num(item, 'attempts'),
    createdAt: num(item, 'created_at'),
    updatedAt: num(item, 'updated_at'),
    expiresAt: num(item, 'expires_at'),
    destinationFingerprint: str(item, 'destination_fingerprint'),
    payloadFingerprint: str(item, 'payload_fingerprint'),
    provider: {
      name: str(item, 'provider_name'),
      ...(typeof messageId === 'string' ? { messageId } : {}),
    },
    lastReason: reason(item, 'last_reason'),
    ...optDetail('reasonDetail', item),
    ...optNum('leaseUntil', item, 'lease_until'),
    ...(typeof item.lease_owner === 'string' ? { leaseOwner: item.lease_owner } : {}),
    ...optNum('nextAttemptAt', item, 'next_attempt_at'),
    ...optNum('unknownSince', item, 'unknown_since'),
    ...optNum('attemptStartedAt', item, 'attempt_started_at'),
    ...optNum('callDeadline', item, 'call_deadline'),
    ...optAttemptMessages(item),
    ...optAttemptProviders(item),
    ...optNum('absentSince', item, 'absent_since'),
    ...optNum('sentAt', item, 'sent_at'),
    ...optNum('dueAt', item, 'due_at'),
    checks: num(item, 'checks'),
    closed: item.closed === true,
  };
}

/** Reads an evidence item back. */
export function evidenceFromItem(item: Item): EvidenceRecord {
  const from = item.from_state;
  return {
    idempotencyKey: str(item, 'idempotency_key'),
    eventId: str(item, 'event_id'),
    seq: num(item, 'seq'),
    at: num(item, 'at'),
    fromState: from === null || from === undefined ? null : state(item, 'from_state'),
    toState: state(item, 'to_state'),
    attempt: num(item, 'attempt'),
    reason: reason(item, 'reason'),
    ...optDetail('reasonDetail', item),
    actor: str(item, 'actor') as EvidenceRecord['actor'],
    ...(typeof item.provider === 'string' ? { provider: item.provider } : {}),
    ...(typeof item.provider_message_id === 'string' ? { providerMessageId: item.provider_message_id } : {}),
    destinationFingerprint: str(item, 'destination_fingerprint'),
  };
}

/** The admission evidence (seq 1) is not a separate item: admission is one PutItem. It is read off the command. */
export function admissionEvidence(record: NotificationRecord): EvidenceRecord {
  return {
    idempotencyKey: record.idempotencyKey,
    eventId: record.eventId,
    seq: 1,
    at: record.createdAt,
    fromState: null,
    toState: 'accepted',
    attempt: 0,
    reason: 'admitted',
    actor: 'api',
    provider: record.provider.name,
    destinationFingerprint: record.destinationFingerprint,
  };
}
