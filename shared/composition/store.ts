import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoNotificationStore } from '../adapters/dynamodb/store.js';
import type { ServiceConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { ServerTimeSource } from '../ports/server-time.js';
import type { NotificationStore } from '../ports/store.js';
import { clientConfig } from './clients.js';

/**
 * The DynamoDB store for this configuration (a caller may pass its own client). With
 * `serverTimeClock` it samples the server time of its answers on that clock (docs/design.md#clock-skew).
 */
export function storeFor(
  config: ServiceConfig,
  client?: DynamoDBClient,
  serverTimeClock?: Clock,
): NotificationStore {
  return new DynamoNotificationStore({
    client: client ?? new DynamoDBClient(clientConfig(config, config.dynamodbEndpoint)),
    tableName: config.tableName,
    evidenceRetentionDays: config.evidenceRetentionDays,
    ...(serverTimeClock ? { serverTimeClock } : {}),
  });
}

/** The server time a store's answers carry, when it is one that samples them. */
export function serverTimeOf(store: NotificationStore): ServerTimeSource | undefined {
  return store instanceof DynamoNotificationStore ? store : undefined;
}
