import { DynamoDBClient, DynamoDBServiceException, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { SendMessageCommand, SQSClient, SQSServiceException } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withKmsAuthorization } from '../../local/iam/cipher.js';
import { runAs } from '../../local/iam/context.js';
import { createIamEnforcer, type IamEnforcer } from '../../local/iam/enforcer.js';
import { installSdkEnforcement } from '../../local/iam/sdk.js';
import { type LocalFunction, type LocalTemplate, localTemplate } from '../../local/iam/template.js';
import { eventually } from '../support/eventually.js';
import { aFreshCode, aRequestBody } from '../support/fixtures.js';
import { type Pipeline, startPipeline } from '../support/pipeline-harness.js';

type Statement = {
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};

/** The logical id of `fn`'s role in `local`. */
function roleOf(local: LocalTemplate, fn: LocalFunction): string {
  const properties = local.template.Resources[local.functions[fn] ?? '']?.Properties ?? {};
  return (properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
}

const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

/** `local` with `edit` applied to each statement of `fn`'s role (return undefined to drop one). */
function withStatements(
  fn: LocalFunction,
  edit: (statement: Statement) => Statement | undefined,
): (local: LocalTemplate) => LocalTemplate {
  return (local) => {
    const role = roleOf(local, fn);
    for (const resource of Object.values(local.template.Resources)) {
      const properties = resource.Properties ?? {};
      const roles = (properties.Roles ?? []) as Array<{ Ref?: string }>;
      if (resource.Type !== 'AWS::IAM::Policy' || !roles.some((r) => r.Ref === role)) continue;
      const document = properties.PolicyDocument as { Statement: Statement[] };
      document.Statement = document.Statement.flatMap((s) => edit(s) ?? []);
    }
    return local;
  };
}

describe('the pipeline under the template IAM', () => {
  let pipe: Pipeline;
  beforeAll(async () => {
    pipe = await startPipeline({ iam: { enforce: true } });
  });
  afterAll(async () => {
    await pipe.stop();
  });

  it('delivers with every call of every function evaluated, none denied', async () => {
    // Act
    const { idempotency_key: key } = await pipe.admit();
    await pipe.waitFor(key, ['delivered']);

    // Assess
    expect(await pipe.messages(key)).toHaveLength(1);
    expect(pipe.stack.iam?.denials()).toEqual([]);
  });
});

/**
 * A safety net, not a budget: the wait ends as soon as the sender has tried twice. On a loaded
 * machine its first poll and its retry after the visibility timeout took longer than 5 s.
 */
const UNTIL_THE_SENDER_TRIED = { timeoutMs: 90_000, intervalMs: 100 };

describe('a template the code does not fit breaks the pipeline with AccessDenied', () => {
  it("without the sender's grant on the dispatch queue, nothing is sent", async () => {
    // Prepare: the event source polls with the sender's role, which no longer names the queue.
    const pipe = await startPipeline({
      iam: {
        enforce: true,
        template: withStatements('sender', (s) =>
          actionsOf(s).includes('sqs:ReceiveMessage') ? undefined : s,
        ),
      },
    });
    try {
      // Act
      const { idempotency_key: key } = await pipe.admit();
      const denied = () =>
        pipe.stack.iam?.denials().filter((d) => d.fn === 'sender' && d.action === 'sqs:ReceiveMessage') ?? [];
      await eventually(() => expect(denied().length).toBeGreaterThanOrEqual(2), UNTIL_THE_SENDER_TRIED);

      // Assess
      expect(denied()[0]?.message).toMatch(
        /^User: arn:aws:sts::\d{12}:assumed-role\/.+ is not authorized to perform: sqs:ReceiveMessage on resource: arn:aws:sqs:/,
      );
      expect(await pipe.messages(key)).toEqual([]);
      expect((await pipe.view(key)).state).not.toBe('delivered');
    } finally {
      await pipe.stop();
    }
  });

  it('with the field-key condition asking for an encryption context the cipher does not send, nothing is sent', async () => {
    // Prepare: the sender may decrypt only under another purpose than the cipher's.
    const tighten = withStatements('sender', (s) => {
      const context = s.Condition?.StringEquals;
      if (!actionsOf(s).includes('kms:Decrypt') || context?.['kms:EncryptionContext:purpose'] === undefined)
        return s;
      return {
        ...s,
        Condition: { StringEquals: { ...context, 'kms:EncryptionContext:purpose': 'another-purpose' } },
      };
    });
    const pipe = await startPipeline({ iam: { enforce: true, template: tighten } });
    try {
      // Act
      const { idempotency_key: key } = await pipe
        .post(aRequestBody({ params: { code: aFreshCode() } }))
        .then((r) => r.json() as Promise<{ idempotency_key: string }>);
      const denied = () =>
        pipe.stack.iam?.denials().filter((d) => d.fn === 'sender' && d.action === 'kms:Decrypt') ?? [];
      await eventually(() => expect(denied().length).toBeGreaterThanOrEqual(2), UNTIL_THE_SENDER_TRIED);

      // Assess
      expect(await pipe.messages(key)).toEqual([]);
      expect((await pipe.view(key)).state).not.toBe('delivered');
    } finally {
      await pipe.stop();
    }
  });
});

describe('a denied call fails as AWS fails it', () => {
  let enforcer: IamEnforcer;
  const localTable = 'local-table';
  const localQueue = 'http://127.0.0.1:9/000000000000/local-dispatch';
  beforeAll(async () => {
    installSdkEnforcement();
    enforcer = createIamEnforcer(await localTemplate('sns'), {
      TABLE_NAME: localTable,
      DISPATCH_QUEUE_URL: localQueue,
    });
  });
  // Denied calls never leave the process: these clients point at a closed port.
  const endpoint = 'http://127.0.0.1:9';
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

  it('DynamoDB: AccessDeniedException, 400, a client fault naming principal, action and table', async () => {
    const client = new DynamoDBClient({ endpoint, region: 'eu-west-1', credentials, maxAttempts: 1 });
    // Act: the forwarder has no grant on the table's items.
    const error = await runAs(enforcer, 'forwarder', () =>
      client.send(new GetItemCommand({ TableName: localTable, Key: { pk: { S: 'k' } } })),
    ).catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(DynamoDBServiceException);
    expect(error).toMatchObject({
      name: 'AccessDeniedException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    expect((error as Error).message).toMatch(
      /is not authorized to perform: dynamodb:GetItem on resource: arn:aws:dynamodb:eu-west-1:\d{12}:table\/.+ because no identity-based policy allows the dynamodb:GetItem action$/,
    );
  });

  it('SQS: AccessDenied, 403', async () => {
    const client = new SQSClient({ endpoint, region: 'eu-west-1', credentials, maxAttempts: 1 });
    // Act: the sender only consumes the dispatch queue.
    const error = await runAs(enforcer, 'sender', () =>
      client.send(new SendMessageCommand({ QueueUrl: localQueue, MessageBody: '{}' })),
    ).catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(SQSServiceException);
    expect(error).toMatchObject({
      name: 'AccessDenied',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
    });
  });

  it('SNS: AuthorizationError, 403', async () => {
    const client = new SNSClient({ endpoint, region: 'eu-west-1', credentials, maxAttempts: 1 });
    // Act: only the sender publishes.
    const error = await runAs(enforcer, 'reconcileWorker', () =>
      client.send(new PublishCommand({ PhoneNumber: '+15005550006', Message: 'x' })),
    ).catch((e: unknown) => e);
    // Assess
    expect(error).toMatchObject({
      name: 'AuthorizationErrorException',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
    });
  });

  it('KMS (the cipher as the field key): AccessDeniedException for a function without the grant', async () => {
    const cipher = withKmsAuthorization({
      encrypt: async () => 'sealed',
      decrypt: async () => new Uint8Array(),
    });
    // Act: the forwarder never opens sealed fields; the api seals them.
    const denied = await runAs(enforcer, 'forwarder', () => cipher.decrypt('sealed', {})).catch(
      (e: unknown) => e,
    );
    const sealed = await runAs(enforcer, 'api', () => cipher.encrypt(new Uint8Array(), {}));
    // Assess
    expect(denied).toMatchObject({
      name: 'AccessDeniedException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    expect(sealed).toBe('sealed');
  });

  it('calls outside any function (the local plumbing) are not evaluated', async () => {
    const client = new DynamoDBClient({
      endpoint: inject('dynamodbEndpoint'),
      region: 'us-east-1',
      credentials,
    });
    await expect(
      client.send(new GetItemCommand({ TableName: 'no-such-table', Key: { pk: { S: 'k' } } })),
    ).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });
});
