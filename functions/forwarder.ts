import { Logger } from '@aws-lambda-powertools/logger';
import { queueFor } from '../shared/composition/queue.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import { createForwarderHandler } from '../shared/handlers/forwarder-handler.js';

const config = loadConfig();
const logger = new Logger({ serviceName: 'reset-notifier' });

/** DynamoDB stream event source entry point. */
export const handler = createForwarderHandler({
  queue: queueFor(config),
  clock: systemClock,
  onReport: (report) => logger.info('forwarded', { ...report }),
});
