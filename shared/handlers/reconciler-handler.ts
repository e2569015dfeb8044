import { type ReconcileDeps, type ReconcileSummary, reconcileDue } from '../usecases/reconcile-due.js';

export interface ReconcilerDeps extends ReconcileDeps {
  readonly onSummary?: (summary: ReconcileSummary) => void;
}

/** The scheduled reconciler: one pass over the due index. It never sends. */
export function createReconcilerHandler(deps: ReconcilerDeps) {
  return async (): Promise<ReconcileSummary> => {
    const summary = await reconcileDue(deps);
    deps.onSummary?.(summary);
    return summary;
  };
}
