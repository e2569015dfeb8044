import { Logger } from '@aws-lambda-powertools/logger';
import { providerFor } from '../shared/composition/provider.js';
import { queueFor } from '../shared/composition/queue.js';
import { cipherFor, fingerprinterFor } from '../shared/composition/secrets.js';
import { storeFor } from '../shared/composition/store.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import { createReconcilerHandler } from '../shared/handlers/reconciler-handler.js';

const config = loadConfig();
const logger = new Logger({ serviceName: 'reset-notifier' });
const fingerprinter = await fingerprinterFor(config, systemClock);

/** EventBridge-scheduled entry point: one reconciliation pass. It reads provider status; it never sends. */
export const handler = createReconcilerHandler({
  store: storeFor(config),
  cipher: cipherFor(config, systemClock),
  provider: providerFor(config, systemClock, fingerprinter),
  queue: queueFor(config),
  clock: systemClock,
  policy: config.policy,
  onSummary: (summary) => logger.info('reconciled', { ...summary }),
});
