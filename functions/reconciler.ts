import { composeReconciler, lambdaEntry } from '../shared/composition/handlers.js';

/**
 * EventBridge-scheduled entry point: one pass over the due index. With the reconcile queue it
 * only enqueues due keys (the reconcile workers handle them); it never sends.
 */
export const handler = await lambdaEntry((config, parts) => composeReconciler(config, parts));
