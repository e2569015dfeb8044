import { createServiceRuntime } from '../shared/composition.js';
import { loadConfig } from '../shared/config.js';
import { createReconcilerHandler } from '../shared/handlers/reconciler-handler.js';

const runtime = await createServiceRuntime(loadConfig());

/** EventBridge-scheduled entry point: one reconciliation pass. */
export const handler = createReconcilerHandler({
  ...runtime,
  policy: runtime.config.policy,
  onSummary: (summary) => runtime.logger.info('reconciled', { ...summary }),
});
