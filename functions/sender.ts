import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { keepProviderMessageIds } from '../shared/composition/outcome-write.js';
import { providerFor } from '../shared/composition/provider.js';
import { cipherFor, fingerprinterFor } from '../shared/composition/secrets.js';
import { storeFor } from '../shared/composition/store.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import { createSenderHandler } from '../shared/handlers/sender-handler.js';

const config = loadConfig();
const logger = new Logger({ serviceName: 'reset-notifier' });
const fingerprinter = await fingerprinterFor(config, systemClock);

/** SQS event source entry point (partial batch responses). The log lines feed the alarms' metric filters. */
export const handler = createSenderHandler({
  // The id a provider returned is the only way to find the message again: its write is retried.
  store: keepProviderMessageIds(storeFor(config), {
    clock: systemClock,
    policy: config.policy,
    onRecovered: (key, how) => logger.warn('provider message id recovered', { idempotency_key: key, how }),
  }),
  cipher: cipherFor(config, systemClock),
  provider: providerFor(config, systemClock, fingerprinter),
  clock: systemClock,
  policy: config.policy,
  owner: `sender-${randomUUID()}`,
  receiptGraceMs: config.receiptGraceMs,
  onReport: (key, report) => logger.info('dispatch', { idempotency_key: key, ...report }),
  onError: (key, error) => logger.error('dispatch failed', { idempotency_key: key, error: error as Error }),
});
