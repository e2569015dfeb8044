import { Match, type Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTableInput, TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import {
  functionByDescription,
  onlyResource,
  referencedId,
  SYNTH_TIMEOUT_MS,
  statementsOfFunction,
  synthTemplate,
} from './support.js';

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
    // Table key, field key, the alarm topic's key (observability) and, with the default provider
    // SNS, the delivery-status logs' own key.
    template.resourceCountIs('AWS::KMS::Key', 4);
    // Retained when the stack goes, deleted if its first create rolls back (nothing sealed yet).
    expect(template.toJSON().Resources[fieldKeyId as string]).toMatchObject({
      Type: 'AWS::KMS::Key',
      Properties: { EnableKeyRotation: true },
      DeletionPolicy: 'RetainExceptOnCreate',
    });
  });

  it('generates the fingerprint key as a secret under the table key, retained (except on a failed first create)', () => {
    // Prepare
    const tableKeyId = referencedId(
      (
        onlyResource(template, 'AWS::DynamoDB::Table').properties.SSESpecification as {
          KMSMasterKeyId: unknown;
        }
      ).KMSMasterKeyId,
    );

    // Act
    const secret = onlyResource(template, 'AWS::SecretsManager::Secret');

    // Assess
    expect(referencedId(secret.properties.KmsKeyId)).toBe(tableKeyId);
    expect(secret.properties.GenerateSecretString).toMatchObject({
      PasswordLength: 64,
      ExcludePunctuation: true,
      IncludeSpace: false,
    });
    expect(secret.resource.DeletionPolicy).toBe('RetainExceptOnCreate');
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as Array<{
      Properties: { Environment: { Variables: Record<string, unknown> } };
    }>;
    const readers = functions.filter(
      (f) => referencedId(f.Properties.Environment.Variables.FINGERPRINT_KEY_SECRET_ARN) === secret.logicalId,
    );
    // api, forwarder, sender, reconciler and reconcile worker share one environment.
    expect(readers).toHaveLength(5);
  });

  it('uses a given SSM parameter or secret instead, and generates none', () => {
    // Act
    const { template: withParameter } = synthTemplate({ fingerprintKeyParameterName: '/team/fp-key' });
    const secretArn = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:fp-key-AbCdEf';
    const { template: withSecret } = synthTemplate((stack) => ({
      fingerprintKeySecret: Secret.fromSecretCompleteArn(stack, 'Fp', secretArn),
    }));

    // Assess
    withParameter.resourceCountIs('AWS::SecretsManager::Secret', 0);
    withSecret.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const envOf = (t: typeof template) =>
      (
        functionByDescription(t, 'HTTP API').properties.Environment as {
          Variables: Record<string, unknown>;
        }
      ).Variables;
    expect(envOf(withParameter).FINGERPRINT_KEY_PARAMETER).toBe('/team/fp-key');
    const apiStatements = statementsOfFunction(
      withParameter,
      functionByDescription(withParameter, 'HTTP API').logicalId,
    );
    const parameterReads = apiStatements.filter((st) =>
      JSON.stringify(st.Action).includes('ssm:GetParameter'),
    );
    expect(JSON.stringify(parameterReads.map((st) => st.Resource))).toContain(':parameter/team/fp-key');
    expect(JSON.stringify(apiStatements)).not.toContain('secretsmanager:GetSecretValue');
    expect(envOf(withParameter).FINGERPRINT_KEY_SECRET_ARN).toBeUndefined();
    expect(envOf(withSecret).FINGERPRINT_KEY_SECRET_ARN).toBe(secretArn);
    expect(envOf(withSecret).FINGERPRINT_KEY_PARAMETER).toBeUndefined();
  });

  it('tells every function that reads the key which version is current (1 unless given)', () => {
    // Act
    const { template: rotated } = synthTemplate({ fingerprintKeyVersion: 2 });

    // Assess: docs/security.md#fingerprint-key-rotation, step 3.
    const versions = (t: typeof template) =>
      Object.values(t.findResources('AWS::Lambda::Function'))
        .map((f) => f.Properties.Environment?.Variables ?? {})
        .filter((env) => env.FINGERPRINT_KEY_SECRET_ARN !== undefined)
        .map((env) => env.FINGERPRINT_KEY_VERSION);
    expect(versions(rotated).length).toBeGreaterThanOrEqual(2);
    expect(new Set(versions(rotated))).toEqual(new Set(['2']));
    expect(new Set(versions(template))).toEqual(new Set(['1']));
    expect(() => synthTemplate({ fingerprintKeyVersion: 0 })).toThrow(
      /fingerprintKeyVersion must be a whole number/,
    );
  });

  it('rejects fingerprint key settings that cannot work, naming the setting', () => {
    expect(() => synthTemplate({ fingerprintKeyParameterName: 'has space' })).toThrow(
      /fingerprintKeyParameterName "has space" is not an SSM parameter name/,
    );
    expect(() =>
      synthTemplate((stack) => ({
        fingerprintKeyParameterName: '/a',
        fingerprintKeySecret: Secret.fromSecretCompleteArn(
          stack,
          'Fp',
          'arn:aws:secretsmanager:eu-west-1:111111111111:secret:fp-AbCdEf',
        ),
      })),
    ).toThrow(/not both/);
    expect(() =>
      synthTemplate((stack) => ({
        fingerprintKeySecret: Secret.fromSecretCompleteArn(
          stack,
          'Fp',
          'arn:aws:secretsmanager:eu-west-1:1111:secret:fp-AbCdEf',
        ),
      })),
    ).toThrow(/fingerprintKeySecret .* is not arn:aws:secretsmanager/);
  });
});
