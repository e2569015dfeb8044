import { composeSender, lambdaEntry } from '../shared/composition/handlers.js';

/** SQS event source entry point (partial batch responses). The log lines feed the alarms' metric filters. */
export const handler = await lambdaEntry((config, parts) => composeSender(config, parts));
