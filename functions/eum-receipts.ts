import { Logger } from '@aws-lambda-powertools/logger';
import { storeFor } from '../shared/composition/store.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import { createEumReceiptsHandler } from '../shared/providers/eum/index.js';
import { ingestReceipt } from '../shared/usecases/ingest-receipt.js';

const config = loadConfig();
const logger = new Logger({ serviceName: 'reset-notifier' });
if (!config.eumEventsTopicArn) throw new Error('EUM_EVENTS_TOPIC_ARN is required');

/** SNS subscription entry point: End User Messaging events of our configuration set -> receipts. */
export const handler = createEumReceiptsHandler({
  ingest: ingestReceipt,
  topicArn: config.eumEventsTopicArn,
  store: storeFor(config),
  clock: systemClock,
  policy: config.policy,
  // Reports carry the message id, our reference and the event type; never the number.
  onReport: (report) => logger.info('eum receipt', { ...report }),
});
