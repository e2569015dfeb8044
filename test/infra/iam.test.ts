import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { beforeAll, describe, expect, it } from 'vitest';
import { KMS_ENCRYPTION_CONTEXT } from '../../shared/adapters/kms-cipher.js';
import {
  actionsOf,
  allActions,
  DEPLOYED,
  functionByDescription,
  referencedId,
  resolveIntrinsics,
  type Statement,
  SYNTH_TIMEOUT_MS,
  statementsOfFunction,
  synthTemplate,
} from './support.js';

const DESCRIPTIONS = {
  api: 'HTTP API',
  forwarder: 'table stream -> dispatch queue',
  sender: 'calls the SMS provider once',
  reconciler: 'reconciles unknown outcomes',
} as const;
type FunctionName = keyof typeof DESCRIPTIONS;
type Props = Record<string, unknown>;

/** Actions whose only valid resource is "*" (Service Authorization Reference: no resource type). */
const STAR_ONLY_ACTIONS = new Set([
  'xray:PutTraceSegments',
  'xray:PutTelemetryRecords',
  'sns:Publish',
  'dynamodb:ListStreams',
]);
const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const TABLE_KEY_WRITE = ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'];

function statementsByFunction(template: Template): Record<FunctionName, Statement[]> {
  const entries = Object.entries(DESCRIPTIONS).map(([name, description]) => [
    name,
    statementsOfFunction(template, functionByDescription(template, description).logicalId),
  ]);
  return Object.fromEntries(entries) as Record<FunctionName, Statement[]>;
}

/** The resources a statement names, as a list. */
const resourcesOf = (s: Statement): unknown[] => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);
/** The statements that allow `action`. */
const allowing = (statements: readonly Statement[], action: string) =>
  statements.filter((s) => s.Effect === 'Allow' && actionsOf(s).includes(action));

describe('least privilege per function (provider sns, the default)', () => {
  let template: Template;
  let statements: Record<FunctionName, Statement[]>;
  let resources: Record<string, { Type: string }>;
  beforeAll(() => {
    ({ template } = synthTemplate());
    statements = statementsByFunction(template);
    resources = template.toJSON().Resources;
  }, SYNTH_TIMEOUT_MS);

  it('never allows a wildcard action', () => {
    for (const [name, list] of Object.entries(statements)) {
      for (const action of allActions(list)) expect(action, `${name}: ${action}`).not.toMatch(/\*/);
    }
  });

  it('uses "*" only for actions that have no resource-level permissions; everything else is scoped', () => {
    for (const [name, list] of Object.entries(statements)) {
      for (const statement of list) {
        if (!resourcesOf(statement).includes('*')) continue;
        for (const action of actionsOf(statement))
          expect(STAR_ONLY_ACTIONS.has(action), `${name}: ${action} on *`).toBe(true);
      }
    }
  });

  it('api: admission (with budget counters) and views on the table and the by-event index, seals with the field key', () => {
    expect(allActions(statements.api)).toEqual(
      [
        ...LOGS,
        ...TABLE_KEY_WRITE,
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        // UpdateItem: budget counters at admission, and user confirmations (a transition).
        'dynamodb:UpdateItem',
        'secretsmanager:GetSecretValue',
      ].sort(),
    );
    const indexQuery = allowing(statements.api, 'dynamodb:Query').flatMap(resourcesOf);
    expect(JSON.stringify(indexQuery)).toContain('/index/by-event');
    expect(JSON.stringify(indexQuery)).not.toContain('/index/due');
  });

  it('forwarder: reads the stream and enqueues keys; no table items, no provider', () => {
    expect(allActions(statements.forwarder)).toEqual(
      [
        ...LOGS,
        'dynamodb:DescribeStream',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:ListStreams',
        'kms:Decrypt',
        'kms:DescribeKey',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
      ].sort(),
    );
    // ListStreams has no resource type: only "*" matches it (a stream ARN granted nothing).
    for (const statement of allowing(statements.forwarder, 'dynamodb:ListStreams')) {
      expect(resourcesOf(statement)).toEqual(['*']);
      expect(actionsOf(statement)).toEqual(['dynamodb:ListStreams']);
    }
    for (const action of ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator']) {
      for (const statement of allowing(statements.forwarder, action)) {
        expect(resourcesOf(statement)).toEqual([{ 'Fn::GetAtt': [expect.any(String), 'StreamArn'] }]);
      }
    }
  });

  it('sender: reads and transitions items, opens the payload, publishes SMS; never queries or deletes', () => {
    expect(allActions(statements.sender)).toEqual(
      [
        ...LOGS,
        ...TABLE_KEY_WRITE,
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'sns:Publish',
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
        'secretsmanager:GetSecretValue',
      ].sort(),
    );
  });

  it('reconciler: queries the due index, transitions, re-enqueues and reads SNS delivery logs; never publishes', () => {
    expect(allActions(statements.reconciler)).toEqual(
      [
        ...LOGS,
        ...TABLE_KEY_WRITE,
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'logs:FilterLogEvents',
        'sqs:GetQueueAttributes',
        'sqs:SendMessage',
        'secretsmanager:GetSecretValue',
      ].sort(),
    );
    const queueReads = allowing(statements.reconciler, 'sqs:GetQueueAttributes').flatMap(resourcesOf);
    expect(JSON.stringify(queueReads)).toContain('ReconcileQueue');
    expect(JSON.stringify(queueReads)).toContain('StatusPollQueue');
    expect(JSON.stringify(queueReads)).not.toContain('DispatchQueue');
    const query = allowing(statements.reconciler, 'dynamodb:Query').flatMap(resourcesOf);
    expect(JSON.stringify(query)).toContain('/index/due');
    expect(JSON.stringify(query)).not.toContain('/index/by-event');
    const logGroups = JSON.stringify(
      allowing(statements.reconciler, 'logs:FilterLogEvents').flatMap(resourcesOf),
    );
    expect(logGroups).toContain('DirectPublishToPhoneNumber');
    expect(logGroups).toContain('DirectPublishToPhoneNumber/Failure');
  });

  it('separates the keys: only the api may GenerateDataKey on the field key, sender and reconciler Decrypt', () => {
    // Prepare: the field key is the one every function gets as KMS_KEY_ID.
    const fn = functionByDescription(template, DESCRIPTIONS.api);
    const fieldKeyId = referencedId(
      (fn.properties.Environment as { Variables: Record<string, unknown> }).Variables.KMS_KEY_ID,
    );
    const onFieldKey = (list: readonly Statement[]) =>
      list.filter((s) => resourcesOf(s).some((r) => referencedId(r) === fieldKeyId));

    // Act
    const grants = Object.fromEntries(
      Object.entries(statements).map(([name, list]) => [name, onFieldKey(list).flatMap(actionsOf).sort()]),
    );

    // Assess
    expect(resources[fieldKeyId as string]?.Type).toBe('AWS::KMS::Key');
    expect(grants).toEqual({
      api: ['kms:GenerateDataKey'],
      forwarder: [],
      sender: ['kms:Decrypt'],
      reconciler: ['kms:Decrypt'],
    });
    const context = Object.fromEntries(
      Object.entries(KMS_ENCRYPTION_CONTEXT).map(([k, v]) => [`kms:EncryptionContext:${k}`, v]),
    );
    for (const list of Object.values(statements)) {
      for (const statement of onFieldKey(list))
        expect(statement.Condition).toEqual({ StringEquals: context });
    }
  });

  it('scopes table item actions to the table and Query on indexes to named indexes', () => {
    const tableId = Object.keys(template.findResources('AWS::DynamoDB::Table'))[0];
    for (const [name, list] of Object.entries(statements)) {
      for (const statement of list) {
        if (!actionsOf(statement).some((a) => /^dynamodb:(GetItem|PutItem|UpdateItem|Query)$/.test(a)))
          continue;
        for (const resource of resourcesOf(statement)) {
          const rendered = JSON.stringify(resource);
          expect(rendered, name).toContain(tableId as string);
          expect(rendered, name).toMatch(/"Arn"\]\}(,"\/index\/(by-event|due)")?/);
        }
      }
    }
  });
});

describe('least privilege per provider', () => {
  it('twilio: sender and reconciler read the auth token secret; nobody publishes to SNS or reads logs', () => {
    // Prepare
    const secretArn = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:twilio-auth-token-AbCdEf';
    const { template } = synthTemplate((stack) => ({
      provider: {
        kind: 'twilio',
        accountSid: 'AC123',
        from: '+15005550006',
        authTokenSecret: Secret.fromSecretCompleteArn(stack, 'Token', secretArn),
      },
    }));

    // Act
    const statements = statementsByFunction(template);

    // Assess
    const secretReads = (name: FunctionName) =>
      allowing(statements[name], 'secretsmanager:GetSecretValue').flatMap(resourcesOf);
    // The api reads it to forward user confirmations to Twilio's feedback API.
    for (const name of ['sender', 'reconciler', 'api'] as const)
      expect(secretReads(name), name).toContain(secretArn);
    expect(secretReads('forwarder')).not.toContain(secretArn);
    for (const list of Object.values(statements)) {
      expect(allActions(list)).not.toContain('sns:Publish');
      expect(allActions(list)).not.toContain('logs:FilterLogEvents');
    }
    const env = (
      functionByDescription(template, DESCRIPTIONS.sender).properties.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
    expect(env).toMatchObject({
      PROVIDER: 'twilio',
      PROVIDER_ACCOUNT_SID: 'AC123',
      PROVIDER_FROM: '+15005550006',
      PROVIDER_BASE_URL: 'https://api.twilio.com',
      PROVIDER_AUTH_TOKEN_SECRET_ARN: secretArn,
    });
  });

  it('simulator: no provider permissions, only its auth token secret besides the fingerprint key', () => {
    const tokenArn = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:simulator-token-AbCdEf';
    const { template } = synthTemplate((stack) => ({
      provider: {
        kind: 'simulator',
        baseUrl: 'https://sim.example.test',
        authTokenSecret: Secret.fromSecretCompleteArn(stack, 'Token', tokenArn),
      },
    }));
    const statements = statementsByFunction(template);
    for (const list of Object.values(statements)) {
      const actions = allActions(list);
      expect(actions).not.toContain('sns:Publish');
      expect(actions).not.toContain('logs:FilterLogEvents');
    }
    // Besides the generated fingerprint key, the only secret anyone reads is the simulator's token.
    const fingerprintKey = Object.keys(template.findResources('AWS::SecretsManager::Secret'));
    for (const list of Object.values(statements)) {
      for (const resource of allowing(list, 'secretsmanager:GetSecretValue').flatMap(resourcesOf)) {
        if (resource !== tokenArn) expect(fingerprintKey).toContain(referencedId(resource));
      }
    }
  });
});

/**
 * The grants issue 22 found wrong, evaluated as IAM evaluates them (`@cloud-copilot/iam-simulate`,
 * AWS's evaluation logic) with the template's intrinsics resolved as a deployment in
 * {@link DEPLOYED} would resolve them: the role policies of one function, and the key policy when
 * the request is on a KMS key.
 */
describe('least privilege, evaluated as IAM would (provider sns)', () => {
  let template: Template;
  let arns: Record<string, string>;
  let tableKeyArn: string;
  let tableKeyPolicy: unknown;
  beforeAll(() => {
    ({ template } = synthTemplate());
    const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Props }>;
    // Every resource an ARN of its own (what Ref / GetAtt resolve to in the simulated deployment).
    arns = Object.fromEntries(
      Object.entries(resources).map(([id, r]) => [
        id,
        r.Type === 'AWS::KMS::Key'
          ? `arn:aws:kms:${DEPLOYED.region}:${DEPLOYED.account}:key/${id}`
          : r.Type === 'AWS::DynamoDB::Table'
            ? `arn:aws:dynamodb:${DEPLOYED.region}:${DEPLOYED.account}:table/${id}/stream/2026-12-02T00:00:00.000`
            : `arn:aws:${id}:${DEPLOYED.region}:${DEPLOYED.account}:${id}`,
      ]),
    );
    const table = Object.values(resources).find((r) => r.Type === 'AWS::DynamoDB::Table');
    if (table === undefined) throw new Error('no table');
    const sse = table.Properties.SSESpecification as { KMSMasterKeyId: unknown };
    const tableKeyId = referencedId(sse.KMSMasterKeyId) as string;
    tableKeyArn = arns[tableKeyId] as string;
    tableKeyPolicy = resolveIntrinsics(resources[tableKeyId]?.Properties.KeyPolicy, arns);
  }, SYNTH_TIMEOUT_MS);

  /** Whether the function's role may make the request. */
  async function decide(
    fn: FunctionName,
    action: string,
    resource: string,
    context: Record<string, string> = {},
  ): Promise<string> {
    const statements = statementsOfFunction(
      template,
      functionByDescription(template, DESCRIPTIONS[fn]).logicalId,
    );
    const onTableKey = resource === tableKeyArn;
    const result = await runSimulation(
      {
        request: {
          principal: `arn:aws:iam::${DEPLOYED.account}:role/${fn}`,
          action,
          resource: { resource, accountId: DEPLOYED.account },
          contextVariables: context,
        },
        identityPolicies: [
          { name: fn, policy: resolveIntrinsics({ Version: '2012-10-17', Statement: statements }, arns) },
        ],
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(onTableKey ? { resourcePolicy: tableKeyPolicy } : {}),
      },
      {},
    );
    if (result.resultType === 'error') throw new Error(JSON.stringify(result.errors));
    return result.overallResult;
  }

  it('lets the forwarder list streams: dynamodb:ListStreams has no resource type, so only "*" matches it', async () => {
    expect(await decide('forwarder', 'dynamodb:ListStreams', '*')).toBe('Allowed');
  });

  it.each<FunctionName>(['api', 'forwarder', 'sender', 'reconciler'])(
    '%s: the table key only through DynamoDB (kms:ViaService), never called directly',
    async (fn) => {
      // Prepare
      const viaDynamoDb = { 'kms:ViaService': `dynamodb.${DEPLOYED.region}.amazonaws.com` };

      // Act / Assess
      expect(await decide(fn, 'kms:Decrypt', tableKeyArn, viaDynamoDb)).toBe('Allowed');
      expect(await decide(fn, 'kms:Decrypt', tableKeyArn)).toBe('ImplicitlyDenied');
      expect(
        await decide(fn, 'kms:Decrypt', tableKeyArn, {
          'kms:ViaService': 'dynamodb.us-east-1.amazonaws.com',
        }),
      ).toBe('ImplicitlyDenied');
    },
  );
});
