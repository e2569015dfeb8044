/**
 * The single-table layout (DESIGN.md section 5). Shared by the DynamoDB adapter, the local stack
 * (which creates the table) and the CDK construct (which declares it), so the three never drift.
 */
export const TableSchema = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Sort key of the command item; evidence items use `EV#<seq, zero-padded>`. */
  commandSortKey: 'CMD',
  evidencePrefix: 'EV#',
  ttlAttribute: 'ttl',
  byEventIndex: { name: 'by-event', partitionKey: 'gsi_event_id', sortKey: 'created_at' },
  /** Sparse: only items the reconciler must look at carry `due_shard`/`due_at`. */
  dueIndex: { name: 'due', partitionKey: 'due_shard', sortKey: 'due_at' },
  /** Spreads the due index over a few partitions so no single one gets hot. */
  dueShardCount: 4,
} as const;

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
        Projection: { ProjectionType: 'ALL' as const },
      },
      {
        IndexName: dueIndex.name,
        KeySchema: [
          { AttributeName: dueIndex.partitionKey, KeyType: 'HASH' as const },
          { AttributeName: dueIndex.sortKey, KeyType: 'RANGE' as const },
        ],
        Projection: { ProjectionType: 'ALL' as const },
      },
    ],
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' as const },
  };
}
