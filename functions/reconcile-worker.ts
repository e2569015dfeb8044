import { composeReconcileWorker } from '../shared/composition/handlers.js';
import { loadConfig } from '../shared/config.js';

/** Reconcile queue entry point: reconciles one due key per message (reads provider status; never sends). */
export const handler = await composeReconcileWorker(loadConfig());
