/**
 * Variant (c) of the admission benchmark: the same API handler and admission work, but
 * idempotency comes from `@aws-lambda-powertools/idempotency` (`makeIdempotent` with its
 * DynamoDB persistence layer on a second table) and the command is written with a plain,
 * unconditional PutItem. This is the common alternative design the issue compares us with.
 */
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { commandItem } from '../shared/adapters/dynamodb/item-mapping.js';
import { type ApiDeps, createApiHandler } from '../shared/handlers/api-handler.js';
import type { NotificationStore } from '../shared/ports/store.js';

/** Creates the Powertools idempotency table (`id` string key, on demand), as its docs prescribe. */
export async function ensureIdempotencyTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  for (let i = 0; i < 100; i++) {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (out.Table?.TableStatus === 'ACTIVE') return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A store whose admission is a plain PutItem of the same command item: no condition, because the
 * idempotency layer in front of it is what prevents duplicates. Only `admit` is used by a POST.
 */
export function plainPutStore(
  client: DynamoDBClient,
  tableName: string,
  retentionDays: number,
): NotificationStore {
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const unused = () => Promise.reject(new Error('not used by the admission benchmark'));
  return {
    async admit(record, _evidence, sealedPayload) {
      await doc.send(
        new PutCommand({ TableName: tableName, Item: commandItem(record, sealedPayload, retentionDays) }),
      );
      return { kind: 'admitted', stored: { record, sealedPayload } };
    },
    get: unused,
    evidence: unused,
    byEvent: unused,
    transition: unused,
    reschedule: unused,
    due: unused,
    dueShardCount: 8,
    dueLanes: { urgent: [0, 1, 2, 3], poll: [4, 5, 6, 7] },
    dueInShard: unused,
    oldestDue: unused,
    readReconcileCursor: unused,
    writeReconcileCursor: unused,
    markPoison: unused,
  };
}

type Handler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * The API handler wrapped in `makeIdempotent`. The key is the logical command (event, channel,
 * template, like our derived key); payload validation over the whole body gives the same
 * "same key, different payload" protection our payload fingerprint gives.
 */
export function createPowertoolsApiHandler(
  deps: Omit<ApiDeps, 'store'> & {
    readonly client: DynamoDBClient;
    readonly commandTable: string;
    readonly idempotencyTable: string;
    readonly retentionDays: number;
  },
): Handler {
  const { client, commandTable, idempotencyTable, retentionDays, ...apiDeps } = deps;
  const inner = createApiHandler({ ...apiDeps, store: plainPutStore(client, commandTable, retentionDays) });
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: idempotencyTable,
    awsSdkV3Client: client,
  });
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'powertools_json(body).[event_id, channel, template]',
    payloadValidationJmesPath: 'powertools_json(body)',
    throwOnNoIdempotencyKey: true,
  });
  const wrapped = makeIdempotent((event: APIGatewayProxyEventV2, context: Context) => inner(event, context), {
    persistenceStore,
    config,
  });
  return (event, context) => wrapped(event, context) as Promise<APIGatewayProxyStructuredResultV2>;
}
