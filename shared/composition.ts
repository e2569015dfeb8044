import { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { providerFor } from './composition/provider.js';
import { queueFor } from './composition/queue.js';
import { cipherFor, fingerprinterFor } from './composition/secrets.js';
import { storeFor } from './composition/store.js';
import type { ServiceConfig } from './config.js';
import { type Clock, systemClock } from './domain/clock.js';
import type { Fingerprinter } from './domain/fingerprint.js';
import type { Cipher } from './ports/cipher.js';
import type { DispatchQueue } from './ports/queue.js';
import type { SmsProvider } from './ports/sms-provider.js';
import type { NotificationStore } from './ports/store.js';

/**
 * Everything any handler needs, for the local stack and the operator CLI, which run all handlers
 * in one process. Each Lambda entry point composes only its own part (see `functions/`), so its
 * bundle carries only the SDK clients it uses.
 */
export interface ServiceRuntime {
  readonly config: ServiceConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: NotificationStore;
  readonly queue: DispatchQueue;
  readonly cipher: Cipher;
  readonly fingerprinter: Fingerprinter;
  readonly provider: SmsProvider;
}

/** Builds the whole runtime from configuration. */
export async function createServiceRuntime(
  config: ServiceConfig,
  overrides: {
    readonly clock?: Clock;
    readonly logger?: Logger;
    readonly dynamoClient?: DynamoDBClient;
  } = {},
): Promise<ServiceRuntime> {
  const clock = overrides.clock ?? systemClock;
  const fingerprinter = await fingerprinterFor(config, clock);
  return {
    config,
    clock,
    logger: overrides.logger ?? new Logger({ serviceName: 'reset-notifier' }),
    store: storeFor(config, overrides.dynamoClient),
    queue: queueFor(config),
    cipher: cipherFor(config, clock),
    fingerprinter,
    provider: providerFor(config, clock, fingerprinter),
  };
}
