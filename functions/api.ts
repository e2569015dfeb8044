import { composeApi } from '../shared/composition/handlers.js';
import { loadConfig } from '../shared/config.js';

/** API Gateway HTTP API (payload v2) entry point. */
export const handler = await composeApi(loadConfig());
