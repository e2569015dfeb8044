import { composeApi, lambdaEntry } from '../shared/composition/handlers.js';

/** API Gateway HTTP API (payload v2) entry point. */
export const handler = await lambdaEntry(composeApi);
