import { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsDispatchQueue } from '../adapters/sqs/dispatch-queue.js';
import type { ServiceConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { SmsProvider } from '../domain/provider.js';
import type { DispatchQueue } from '../ports/queue.js';
import {
  createTokenBucket,
  defaultLookupRate,
  rateLimitedLookups,
  realSleep,
  type Sleep,
} from '../usecases/rate-limit.js';
import { clientConfig } from './clients.js';

/** The reconcile queue (same message shape as the dispatch queue: key + version), if configured. */
export function reconcileQueueFor(config: ServiceConfig): DispatchQueue | undefined {
  if (!config.reconcileQueueUrl) return undefined;
  return createSqsDispatchQueue(
    new SQSClient(clientConfig(config, config.sqsEndpoint)),
    config.reconcileQueueUrl,
  );
}

/**
 * The provider with lookups bounded per container by `PROVIDER_LOOKUP_RATE_PER_SECOND` (default:
 * under SNS's 5 FilterLogEvents per second, unbounded otherwise). The stack divides an account-wide
 * limit by the workers' maximum concurrency.
 */
export function lookupBoundedProvider(
  config: ServiceConfig,
  provider: SmsProvider,
  clock: Clock,
  sleep: Sleep = realSleep,
): SmsProvider {
  const rate = config.providerLookupRatePerSecond ?? defaultLookupRate(config.provider);
  if (!(rate > 0)) return provider;
  return rateLimitedLookups(provider, createTokenBucket({ ratePerSecond: rate, clock, sleep }));
}
