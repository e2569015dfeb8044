import { composeReceipts, lambdaEntry } from '../shared/composition/handlers.js';

/** `POST /v1/receipts/twilio` (public route, API Gateway HTTP API payload 2.0): Twilio status callbacks. */
export const handler = await lambdaEntry(composeReceipts);
