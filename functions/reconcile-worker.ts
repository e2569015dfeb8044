import { Logger } from '@aws-lambda-powertools/logger';
import { providerFor } from '../shared/composition/provider.js';
import { queueFor } from '../shared/composition/queue.js';
import { lookupBoundedProvider } from '../shared/composition/reconcile.js';
import { cipherFor, fingerprinterFor } from '../shared/composition/secrets.js';
import { storeFor } from '../shared/composition/store.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import { createReconcileWorkerHandler } from '../shared/handlers/reconcile-worker-handler.js';

const config = loadConfig();
const logger = new Logger({ serviceName: 'reset-notifier' });
const fingerprinter = await fingerprinterFor(config, systemClock);

/** Reconcile queue entry point: reconciles one due key per message (reads provider status; never sends). */
export const handler = createReconcileWorkerHandler({
  store: storeFor(config),
  cipher: cipherFor(config, systemClock),
  provider: lookupBoundedProvider(config, providerFor(config, systemClock, fingerprinter), systemClock),
  queue: queueFor(config),
  clock: systemClock,
  policy: config.policy,
  receiptGraceMs: config.receiptGraceMs,
  onItemError: (report) => logger.warn('reconcile item failed', { ...report }),
  onSummary: (summary) => logger.info('reconcile batch', { ...summary }),
});
