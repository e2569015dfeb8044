import { Logger } from '@aws-lambda-powertools/logger';
import { providerFor } from '../shared/composition/provider.js';
import { queueFor } from '../shared/composition/queue.js';
import { lookupBoundedProvider, reconcileQueueFor } from '../shared/composition/reconcile.js';
import { cipherFor, fingerprinterFor } from '../shared/composition/secrets.js';
import { storeFor } from '../shared/composition/store.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import { createReconcilerHandler } from '../shared/handlers/reconciler-handler.js';

const config = loadConfig();
const logger = new Logger({ serviceName: 'reset-notifier' });
const fingerprinter = await fingerprinterFor(config, systemClock);
const reconcileQueue = reconcileQueueFor(config);

/**
 * EventBridge-scheduled entry point: one pass over the due index. With the reconcile queue it
 * only enqueues due keys (the reconcile workers handle them); it never sends.
 */
export const handler = createReconcilerHandler({
  store: storeFor(config),
  cipher: cipherFor(config, systemClock),
  provider: lookupBoundedProvider(config, providerFor(config, systemClock, fingerprinter), systemClock),
  queue: queueFor(config),
  ...(reconcileQueue ? { reconcileQueue } : {}),
  clock: systemClock,
  policy: config.policy,
  maxItems: config.reconcileMaxItemsPerPass,
  receiptGraceMs: config.receiptGraceMs,
  onItemError: (report) => logger.warn('reconcile item failed', { ...report }),
  onSummary: (summary) => logger.info('reconciled', { ...summary }),
});
