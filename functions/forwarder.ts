import { createServiceRuntime } from '../shared/composition.js';
import { loadConfig } from '../shared/config.js';
import { createForwarderHandler } from '../shared/handlers/forwarder-handler.js';

const runtime = await createServiceRuntime(loadConfig());

/** DynamoDB stream event source entry point. */
export const handler = createForwarderHandler({
  queue: runtime.queue,
  clock: runtime.clock,
  onReport: (report) => runtime.logger.info('forwarded', { ...report }),
});
