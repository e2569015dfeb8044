/**
 * The single-table layout (docs/design.md#data). Shared by the DynamoDB adapter, the local stack
 * (which creates the table) and the CDK construct (which declares it), so the three never drift.
 */
export const TableSchema = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Sort key of the command item; evidence items use `EV#<seq, zero-padded>`. */
  commandSortKey: 'CMD',
  evidencePrefix: 'EV#',
  /** Sort key of budget counter items (`pk` = `LIMIT#...`, see `domain/budgets.ts`); they carry no record attributes. */
  counterSortKey: 'LIMIT',
  ttlAttribute: 'ttl',
  byEventIndex: { name: 'by-event', partitionKey: 'gsi_event_id', sortKey: 'created_at' },
  /** Sparse: only items the reconciler must look at carry `due_shard`/`due_at`. */
  dueIndex: { name: 'due', partitionKey: 'due_shard', sortKey: 'due_at' },
  /**
   * Spreads each lane of the due index over a few partitions so no single one gets hot. Shards
   * 0-3 are the urgent lane, 4-7 the status-poll lane (`domain/due-lane.ts`); items written before
   * the lanes existed sit in 0-3 and are read as urgent until their next write moves them.
   */
  dueShardsPerLane: 4,
  dueShardCount: 8,
  /**
   * The scheduled reconciler's cursor: one small control item in the same table, under a partition
   * key no idempotency key can take (keys are derived hex digests), never in an index.
   */
  reconcileCursorKey: { pk: '_control#reconciler', sk: 'CURSOR' },
  /**
   * Each provider's circuit (docs/providers/failover.md#circuit): one control item per provider,
   * `pk` = prefix + provider name, never in an index; its own partition, so one provider's
   * per-send counter writes never share a partition with another's.
   */
  circuitKey: { prefix: '_control#circuit#', sortKey: 'CIRCUIT' },
  /** Consecutive failures of an item the reconciler could not read or handle (never indexed). */
  poisonCountAttribute: 'poison_count',
} as const;

/**
 * What the indexes carry besides their keys: the record's attributes, never `sealed_payload`.
 * The encrypted phone number and params live on the command item only, and a transition does
 * not rewrite them into index copies. (`item-mapping.test.ts` keeps this list in step with the mapping.)
 */
export const INDEXED_RECORD_ATTRIBUTES = [
  'idempotency_key',
  'event_id',
  'channel',
  'template',
  'locale',
  'state',
  'version',
  'attempts',
  'created_at',
  'updated_at',
  'expires_at',
  'destination_fingerprint',
  'payload_fingerprint',
  'last_reason',
  'lease_until',
  'lease_owner',
  'next_attempt_at',
  'unknown_since',
  'sent_at',
  'due_at',
  'checks',
  'closed',
  'provider_name',
  'provider_message_id',
] as const;

/**
 * Record attributes the indexes do not project: only a strong read of the command item uses them
 * (the reconciler re-reads before every lookup). Keeping them out leaves the deployed indexes'
 * projections unchanged: DynamoDB cannot change a GSI's projection in place.
 */
export const STRONG_READ_ONLY_ATTRIBUTES = [
  'attempt_started_at',
  'call_deadline',
  'absent_since',
  'reason_detail',
  'attempt_messages',
  'attempt_providers',
] as const;

/** The INCLUDE projection of an index whose own keys are `keys`. */
function projectionWithout(...keys: readonly string[]) {
  return {
    ProjectionType: 'INCLUDE' as const,
    NonKeyAttributes: INDEXED_RECORD_ATTRIBUTES.filter((a) => !keys.includes(a)),
  };
}

/** `EV#000000012` style sort key: lexicographic order equals numeric order. */
export function evidenceSortKey(seq: number): string {
  return `${TableSchema.evidencePrefix}${String(seq).padStart(9, '0')}`;
}

/** Attribute definitions and key schema in the shape CreateTable wants (used locally and in tests). */
export function createTableInput(tableName: string) {
  const { partitionKey, sortKey, byEventIndex, dueIndex } = TableSchema;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      { AttributeName: partitionKey, AttributeType: 'S' as const },
      { AttributeName: sortKey, AttributeType: 'S' as const },
      { AttributeName: byEventIndex.partitionKey, AttributeType: 'S' as const },
      { AttributeName: byEventIndex.sortKey, AttributeType: 'N' as const },
      { AttributeName: dueIndex.partitionKey, AttributeType: 'S' as const },
      { AttributeName: dueIndex.sortKey, AttributeType: 'N' as const },
    ],
    KeySchema: [
      { AttributeName: partitionKey, KeyType: 'HASH' as const },
      { AttributeName: sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: byEventIndex.name,
        KeySchema: [
          { AttributeName: byEventIndex.partitionKey, KeyType: 'HASH' as const },
          { AttributeName: byEventIndex.sortKey, KeyType: 'RANGE' as const },
        ],
        Projection: projectionWithout(byEventIndex.partitionKey, byEventIndex.sortKey),
      },
      {
        IndexName: dueIndex.name,
        KeySchema: [
          { AttributeName: dueIndex.partitionKey, KeyType: 'HASH' as const },
          { AttributeName: dueIndex.sortKey, KeyType: 'RANGE' as const },
        ],
        Projection: projectionWithout(dueIndex.partitionKey, dueIndex.sortKey),
      },
    ],
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' as const },
  };
}
