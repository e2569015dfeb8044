import { composeForwarder } from '../shared/composition/handlers.js';
import { loadConfig } from '../shared/config.js';

/** DynamoDB stream event source entry point. */
export const handler = composeForwarder(loadConfig());
