import { type ReconcileDeps, type ReconcileSummary, reconcileDue } from '../usecases/reconcile-due.js';

export interface ReconcilerDeps extends ReconcileDeps {
  readonly onSummary?: (summary: ReconcileSummary) => void;
}

/**
 * The scheduled reconciler: one pass over the due index. With a reconcile queue it only scans and
 * enqueues keys (workers handle them); without one it handles them itself. It never sends.
 */
export function createReconcilerHandler(deps: ReconcilerDeps) {
  return async (): Promise<ReconcileSummary> => {
    const summary = await reconcileDue(deps);
    deps.onSummary?.(summary);
    return summary;
  };
}
