import { composeSender } from '../shared/composition/handlers.js';
import { loadConfig } from '../shared/config.js';

/** SQS event source entry point (partial batch responses). The log lines feed the alarms' metric filters. */
export const handler = await composeSender(loadConfig());
