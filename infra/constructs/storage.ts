import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { createTableInput, TableSchema } from '../../shared/adapters/dynamodb/schema.js';

/**
 * The notification table (DESIGN.md section 5) and the two customer-managed keys: one encrypts the
 * table at rest, the other wraps the data keys that seal the sensitive fields (so reading the
 * table, or a backup of it, never reveals a phone number without a second, separately audited key).
 *
 * Keys, indexes and attribute types come from `TableSchema`/`createTableInput`, the same source
 * the local stack creates its table from, so AWS and local never drift.
 */
export class Storage extends Construct {
  // `Table`, not `TableV2`: a GlobalTable with a customer-managed key cannot be synthesized
  // environment-agnostic, and the stack must synthesize without an account.
  readonly table: Table;
  /** Encrypts the table, its indexes, stream and backups. */
  readonly tableKey: Key;
  /** Wraps the envelope data keys of the sensitive fields (`KMS_KEY_ID`). */
  readonly fieldKey: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.tableKey = new Key(this, 'TableKey', {
      description: 'reset-notifier: DynamoDB table encryption at rest',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.fieldKey = new Key(this, 'FieldKey', {
      description: 'reset-notifier: envelope key of the sensitive fields (phone number, params)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const definition = createTableInput('schema-only');
    const attribute = (name: string) => {
      const found = definition.AttributeDefinitions.find((a) => a.AttributeName === name);
      if (found === undefined) throw new Error(`TableSchema declares no type for attribute ${name}`);
      return { name, type: found.AttributeType === 'N' ? AttributeType.NUMBER : AttributeType.STRING };
    };
    const keyAttribute = (
      schema: ReadonlyArray<{ AttributeName: string; KeyType: string }>,
      keyType: string,
    ) => {
      const found = schema.find((k) => k.KeyType === keyType);
      if (found === undefined) throw new Error(`TableSchema index lacks a ${keyType} key`);
      return attribute(found.AttributeName);
    };
    this.table = new Table(this, 'Table', {
      partitionKey: attribute(TableSchema.partitionKey),
      sortKey: attribute(TableSchema.sortKey),
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      timeToLiveAttribute: TableSchema.ttlAttribute,
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: this.tableKey,
      deletionProtection: true,
      // Evidence is the product: never deleted with the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of definition.GlobalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.IndexName,
        partitionKey: keyAttribute(index.KeySchema, 'HASH'),
        sortKey: keyAttribute(index.KeySchema, 'RANGE'),
        // The same projection as the local table: record attributes only, never the sealed payload.
        projectionType: ProjectionType.INCLUDE,
        nonKeyAttributes: [...index.Projection.NonKeyAttributes],
      });
    }
  }
}
