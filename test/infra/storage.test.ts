import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTableInput, TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { onlyResource, referencedId, SYNTH_TIMEOUT_MS, synthTemplate } from './support.js';

describe('storage: the notification table and its keys', () => {
  let template: Template;
  beforeAll(() => {
    ({ template } = synthTemplate());
  }, SYNTH_TIMEOUT_MS);

  it('declares keys, attribute types and both indexes exactly as the shared schema does', () => {
    // Prepare: the layout the local stack creates from the same constants.
    const local = createTableInput('any');

    // Act
    const table = onlyResource(template, 'AWS::DynamoDB::Table');

    // Assess
    expect(table.properties.KeySchema).toEqual(local.KeySchema);
    expect(new Set(table.properties.AttributeDefinitions as unknown[])).toEqual(
      new Set(local.AttributeDefinitions),
    );
    const indexes = (table.properties.GlobalSecondaryIndexes as Array<Record<string, unknown>>).map(
      (gsi) => ({
        IndexName: gsi.IndexName,
        KeySchema: gsi.KeySchema,
        Projection: gsi.Projection,
      }),
    );
    expect(indexes).toEqual(local.GlobalSecondaryIndexes);
    expect(indexes.map((i) => i.IndexName).sort()).toEqual(
      [TableSchema.byEventIndex.name, TableSchema.dueIndex.name].sort(),
    );
  });

  it('is on-demand, with point-in-time recovery, a NEW_AND_OLD_IMAGES stream and the TTL attribute', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
      TimeToLiveSpecification: { AttributeName: TableSchema.ttlAttribute, Enabled: true },
    });
  });

  it('is protected from deletion and retained when the stack goes', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: Match.objectLike({ DeletionProtectionEnabled: true }),
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('is encrypted with a customer-managed key that rotates and is retained', () => {
    // Prepare
    const table = onlyResource(template, 'AWS::DynamoDB::Table');
    const sse = table.properties.SSESpecification as {
      SSEEnabled: boolean;
      SSEType: string;
      KMSMasterKeyId: unknown;
    };

    // Act
    const keyId = referencedId(sse.KMSMasterKeyId);

    // Assess
    expect(sse).toMatchObject({ SSEEnabled: true, SSEType: 'KMS' });
    expect(keyId).toBeDefined();
    const key = template.toJSON().Resources[keyId as string];
    expect(key).toMatchObject({
      Type: 'AWS::KMS::Key',
      Properties: { EnableKeyRotation: true },
      DeletionPolicy: 'Retain',
    });
  });

  it('has a second, separate rotating key for the sensitive fields (KMS_KEY_ID of every function)', () => {
    // Prepare
    const tableKeyId = referencedId(
      (
        onlyResource(template, 'AWS::DynamoDB::Table').properties.SSESpecification as {
          KMSMasterKeyId: unknown;
        }
      ).KMSMasterKeyId,
    );
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as Array<{
      Properties: { Environment: { Variables: Record<string, unknown> } };
    }>;

    // Act
    const fieldKeyIds = new Set(
      functions.map((f) => referencedId(f.Properties.Environment.Variables.KMS_KEY_ID)),
    );

    // Assess
    expect(fieldKeyIds.size).toBe(1);
    const [fieldKeyId] = [...fieldKeyIds];
    expect(fieldKeyId).toBeDefined();
    expect(fieldKeyId).not.toBe(tableKeyId);
    // Table, sensitive fields, and (default provider SNS) the delivery-status logs' own key.
    template.resourceCountIs('AWS::KMS::Key', 3);
    expect(template.toJSON().Resources[fieldKeyId as string]).toMatchObject({
      Type: 'AWS::KMS::Key',
      Properties: { EnableKeyRotation: true },
      DeletionPolicy: 'Retain',
    });
  });
});
