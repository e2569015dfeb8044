import { Logger } from '@aws-lambda-powertools/logger';
import { providerFor } from '../shared/composition/provider.js';
import { cipherFor, fingerprinterFor } from '../shared/composition/secrets.js';
import { storeFor } from '../shared/composition/store.js';
import { abuseLimitsOf, loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import { createApiHandler, REFUSAL_LOG_MESSAGE } from '../shared/handlers/api-handler.js';

const config = loadConfig();
const logger = new Logger({ serviceName: 'reset-notifier' });
const fingerprinter = await fingerprinterFor(config, systemClock);

/** API Gateway HTTP API (payload v2) entry point. */
export const handler = createApiHandler({
  store: storeFor(config),
  cipher: cipherFor(config, systemClock),
  fingerprinter,
  clock: systemClock,
  policy: config.policy,
  providerName: config.provider,
  maxExpiryMs: config.maxExpiryHours * 3_600_000,
  allowedDestinationPrefixes: config.allowedDestinationPrefixes,
  ...abuseLimitsOf(config),
  logError: (error) => logger.error('unhandled error', error as Error),
  onRefusal: (refusal) => logger.info(REFUSAL_LOG_MESSAGE, { ...refusal }),
  // Confirmations are forwarded to the provider's feedback API (built, and its secret read, on first use).
  feedback: providerFor(config, systemClock, fingerprinter),
  onFeedbackFailure: (detail) => logger.warn('confirmation not forwarded', { ...detail }),
});
