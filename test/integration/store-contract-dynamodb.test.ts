import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import { uniqueName } from '../support/fixtures.js';
import { describeStoreContract } from '../support/store-contract.js';

let client: DynamoDBClient;
let store: DynamoNotificationStore;

beforeAll(async () => {
  client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const tableName = uniqueName('contract');
  await ensureTable(client, tableName);
  store = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
});
afterAll(() => client.destroy());

describeStoreContract('DynamoDB (DynamoDB Local)', () => store);
