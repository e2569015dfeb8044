import { Arn, ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { KMS_ENCRYPTION_CONTEXT } from '../../shared/adapters/kms-cipher.js';

/** The part of a table the grants need (CDK's `ITableV2` is not `exactOptionalPropertyTypes`-clean). */
export interface TableRef {
  readonly tableArn: string;
}

/** The part of a secret the grants need (CDK's `Secret` is not `exactOptionalPropertyTypes`-clean). */
export interface SecretRef {
  readonly secretArn: string;
  readonly encryptionKey?: IKey | undefined;
}

/**
 * Least-privilege statements, one helper per kind of access. Each names exact actions (never a
 * wildcard) on exact resources, so a function's policy reads as the list of what it does.
 */

/** DynamoDB item actions on the table itself (not its indexes). */
export function allowTableItems(grantee: iam.IGrantable, table: TableRef, actions: readonly string[]): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: actions.map((a) => `dynamodb:${a}`), resources: [table.tableArn] }),
  );
}

/** `dynamodb:Query` on named indexes only. */
export function allowIndexQuery(
  grantee: iam.IGrantable,
  table: TableRef,
  indexNames: readonly string[],
): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:Query'],
      resources: indexNames.map((name) => `${table.tableArn}/index/${name}`),
    }),
  );
}

/**
 * What a Lambda event source mapping needs to read a table stream (Lambda checks all four on the
 * execution role), scoped to that stream, plus the table key to decrypt its records.
 * `dynamodb:ListStreams` has no resource type (Service Authorization Reference, DynamoDB; the
 * AWSLambdaDynamoDBExecutionRole managed policy grants it on "*"): scoped to a stream ARN it
 * matched nothing, so it is granted on "*", alone in its statement. It lists stream ARNs only.
 */
export function allowStreamRead(grantee: iam.IGrantable, streamArn: string, tableKey: IKey): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
      resources: [streamArn],
    }),
  );
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: ['*'] }),
  );
  allowTableKey(grantee, tableKey, 'read');
}

/**
 * Use of the table's encryption key through DynamoDB: `Decrypt`/`DescribeKey` to read, plus
 * `Encrypt`/`GenerateDataKey` to write, only in requests DynamoDB makes on the function's behalf
 * (`kms:ViaService` = `dynamodb.<region>.amazonaws.com`, as the key policy examples of the
 * DynamoDB developer guide's encryption-at-rest pages): the function itself cannot call KMS
 * with the table key. Reading the generated fingerprint secret, encrypted under the same key, is
 * granted through Secrets Manager apart ({@link allowSecretRead}).
 */
export function allowTableKey(grantee: iam.IGrantable, key: IKey, access: 'read' | 'write'): void {
  const actions = ['kms:Decrypt', 'kms:DescribeKey'];
  if (access === 'write') actions.push('kms:Encrypt', 'kms:GenerateDataKey');
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions,
      resources: [key.keyArn],
      conditions: {
        StringEquals: { 'kms:ViaService': `dynamodb.${Stack.of(key).region}.amazonaws.com` },
      },
    }),
  );
}

/**
 * The envelope key of the sensitive fields: `GenerateDataKey` to seal (api), `Decrypt` to open
 * (sender, reconciler), both only with the cipher's fixed encryption context.
 */
export function allowFieldKey(
  grantee: iam.IGrantable,
  key: IKey,
  action: 'kms:GenerateDataKey' | 'kms:Decrypt',
): void {
  const conditions = Object.fromEntries(
    Object.entries(KMS_ENCRYPTION_CONTEXT).map(([name, value]) => [`kms:EncryptionContext:${name}`, value]),
  );
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: [action],
      resources: [key.keyArn],
      conditions: { StringEquals: conditions },
    }),
  );
}

/** `ssm:GetParameter` on one parameter (with decryption through SSM when it uses its own key). */
export function allowParameterRead(
  scope: Construct,
  grantee: iam.IGrantable,
  parameterName: string,
  encryptionKey?: IKey,
): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['ssm:GetParameter'],
      resources: [parameterArn(scope, parameterName)],
    }),
  );
  if (encryptionKey !== undefined) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [encryptionKey.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `ssm.${Stack.of(scope).region}.amazonaws.com` } },
      }),
    );
  }
}

/** `secretsmanager:GetSecretValue` on one secret (and its key through Secrets Manager, if it has one). */
export function allowSecretRead(scope: Construct, grantee: iam.IGrantable, secret: SecretRef): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secret.secretArn] }),
  );
  if (secret.encryptionKey !== undefined) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [secret.encryptionKey.keyArn],
        conditions: {
          StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(scope).region}.amazonaws.com` },
        },
      }),
    );
  }
}

/** The ARN of an SSM parameter by name (`/a/b` and `a/b` both work). */
export function parameterArn(scope: Construct, parameterName: string): string {
  return Stack.of(scope).formatArn({
    service: 'ssm',
    resource: 'parameter',
    resourceName: parameterName.replace(/^\//, ''),
  });
}

/**
 * The ARNs of log groups by name, in both forms IAM matches for CloudWatch Logs actions
 * (`log-group:<name>` and `log-group:<name>:*`).
 */
export function logGroupArns(scope: Construct, names: readonly string[]): string[] {
  return names.flatMap((name) => {
    const arn = Arn.format(
      {
        service: 'logs',
        resource: 'log-group',
        resourceName: name,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      },
      Stack.of(scope),
    );
    return [arn, `${arn}:*`];
  });
}
