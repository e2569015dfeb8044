import { composeReconcileWorker, lambdaEntry } from '../shared/composition/handlers.js';

/** Reconcile queue entry point: reconciles one due key per message (reads provider status; never sends). */
export const handler = await lambdaEntry(composeReconcileWorker);
