import { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsDispatchQueue } from '../adapters/sqs/dispatch-queue.js';
import type { ServiceConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { DispatchQueue } from '../ports/queue.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import { providerModule } from '../providers/registry.js';
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

/** The status-poll queue, if configured: the poll lane's keys, consumed by the same workers. */
export function pollQueueFor(config: ServiceConfig): DispatchQueue | undefined {
  if (!config.reconcilePollQueueUrl) return undefined;
  return createSqsDispatchQueue(
    new SQSClient(clientConfig(config, config.sqsEndpoint)),
    config.reconcilePollQueueUrl,
  );
}

/**
 * The provider with lookups bounded per container by `PROVIDER_LOOKUP_RATE_PER_SECOND` (default
 * unbounded). For SNS the same setting bounds the adapter's `FilterLogEvents` calls instead (default
 * 4, under the account's 5 per second). The stack divides an account-wide limit by the workers'
 * maximum concurrency.
 */
export function lookupBoundedProvider(
  config: ServiceConfig,
  provider: SmsProvider,
  clock: Clock,
  sleep: Sleep = realSleep,
): SmsProvider {
  // An adapter that bounds its own calls (SNS: one FilterLogEvents call serves a batch of lookups):
  // a per-lookup bucket in front would serialise the batch away and cap it at a few lookups per second.
  if (providerModule(config.provider).boundsOwnLookups) return provider;
  const rate = config.providerLookupRatePerSecond ?? defaultLookupRate(config.provider);
  if (!(rate > 0)) return provider;
  return rateLimitedLookups(provider, createTokenBucket({ ratePerSecond: rate, clock, sleep }));
}
