import { composeEumReceipts, lambdaEntry } from '../shared/composition/handlers.js';

/** SNS subscription entry point: End User Messaging events of our configuration set -> receipts. */
export const handler = await lambdaEntry(composeEumReceipts);
