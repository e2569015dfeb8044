import { composeForwarder, lambdaEntry } from '../shared/composition/handlers.js';

/** DynamoDB stream event source entry point. */
export const handler = await lambdaEntry(composeForwarder);
