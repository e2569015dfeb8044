import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { twilioAuthTokenFor } from '../shared/composition/receipts.js';
import { storeFor } from '../shared/composition/store.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import {
  createTwilioReceiptsHandler,
  RECEIPT_SIGNATURE_FAILURES,
} from '../shared/handlers/receipts-handler.js';

const config = loadConfig();
const logger = new Logger({ serviceName: 'reset-notifier' });
// Namespace from POWERTOOLS_METRICS_NAMESPACE (the stack sets the service's namespace).
const metrics = new Metrics({ serviceName: 'reset-notifier' });

/** `POST /v1/receipts/twilio` (public route, API Gateway HTTP API payload 2.0): Twilio status callbacks. */
export const handler = createTwilioReceiptsHandler({
  store: storeFor(config),
  clock: systemClock,
  policy: config.policy,
  authToken: twilioAuthTokenFor(config),
  ...(config.providerStatusCallbackBase ? { publicBase: config.providerStatusCallbackBase } : {}),
  countSignatureFailure: () => {
    // One EMF line per rejected callback: the alarm counts them; nothing else about the request is kept.
    metrics.addMetric(RECEIPT_SIGNATURE_FAILURES, MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
  },
  log: (message, fields) => logger.info(message, { ...fields }),
  logError: (error) => logger.error('receipt failed', error as Error),
});
