import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { type LostAnswerShape, WRITE_OPERATIONS, withLostAnswers } from '../../local/faults/lost-answer.js';
import { ensureTable } from '../../local/resources.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import { uniqueName } from '../support/fixtures.js';
import {
  describeLostAnswerContract,
  describeStoreContract,
  type LostAnswerMode,
} from '../support/store-contract.js';

let client: DynamoDBClient;
let lossyClient: DynamoDBClient;
let store: DynamoNotificationStore;
let lossy: DynamoNotificationStore;
let armed: LostAnswerMode | undefined;

/** Loses the answer of the next write in the armed place, once. */
const losing =
  (mode: LostAnswerMode, shape: LostAnswerShape) =>
  (operation: string): LostAnswerShape | undefined => {
    if (armed !== mode || !WRITE_OPERATIONS.has(operation)) return undefined;
    armed = undefined;
    return shape;
  };

beforeAll(async () => {
  const config = {
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
  client = new DynamoDBClient(config);
  // The same table through a client whose next write, once armed, is applied and loses its answer.
  lossyClient = new DynamoDBClient(config);
  withLostAnswers(lossyClient, {
    surfacing: losing('surface', 'timeout'),
    retried: losing('retry', 'reset'),
  });
  const tableName = uniqueName('contract');
  await ensureTable(client, tableName);
  store = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
  lossy = new DynamoNotificationStore({ client: lossyClient, tableName, evidenceRetentionDays: 400 });
});
afterAll(() => {
  client.destroy();
  lossyClient.destroy();
});

describeStoreContract('DynamoDB (DynamoDB Local)', () => store);
describeLostAnswerContract('DynamoDB (DynamoDB Local)', {
  store: () => lossy,
  loseNextAnswer: (mode) => {
    armed = mode;
  },
});
