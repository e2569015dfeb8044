import { composeReceipts } from '../shared/composition/handlers.js';
import { loadConfig } from '../shared/config.js';

/** `POST /v1/receipts/twilio` (public route, API Gateway HTTP API payload 2.0): Twilio status callbacks. */
export const handler = composeReceipts(loadConfig());
