import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoNotificationStore } from '../adapters/dynamodb/store.js';
import type { ServiceConfig } from '../config.js';
import type { NotificationStore } from '../ports/store.js';
import { clientConfig } from './clients.js';

/** The DynamoDB store for this configuration (a caller may pass its own client). */
export function storeFor(config: ServiceConfig, client?: DynamoDBClient): NotificationStore {
  return new DynamoNotificationStore({
    client: client ?? new DynamoDBClient(clientConfig(config, config.dynamodbEndpoint)),
    tableName: config.tableName,
    evidenceRetentionDays: config.evidenceRetentionDays,
  });
}
