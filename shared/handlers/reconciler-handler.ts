import type { Sleep } from '../usecases/rate-limit.js';
import { type ReconcileDeps, type ReconcileSummary, reconcileDue } from '../usecases/reconcile-due.js';

/** Several passes per invocation: EventBridge schedules run once a minute at most. */
export interface PassSchedule {
  /** Passes per invocation (at least 1). */
  readonly count: number;
  /** Pass `i` starts `i * spacingMs` after the first, or at once if the one before ran late. */
  readonly spacingMs: number;
  readonly sleep: Sleep;
}

export interface ReconcilerDeps extends ReconcileDeps {
  readonly onSummary?: (summary: ReconcileSummary) => void;
  /** Default: one pass per invocation. */
  readonly passes?: PassSchedule;
}

/**
 * The scheduled reconciler: passes over the due index. With a reconcile queue a pass only scans
 * and enqueues keys (workers handle them); without one it handles them itself. It never sends.
 *
 * With a {@link PassSchedule} one invocation runs `count` passes, `spacingMs` apart: in AWS the
 * 1-minute schedule runs 6 passes 10 s apart, so a due entry (an unknown whose token just expired)
 * waits about 10 s for a pass instead of up to a minute. No pass starts once the run's window
 * (`count * spacingMs`) is over, so a slow run ends before the next scheduled one is far along;
 * overlapping passes are harmless (the cursor write is version-guarded, workers re-read strongly).
 * Returns the last pass's summary; every pass's summary goes to `onSummary`.
 */
export function createReconcilerHandler(deps: ReconcilerDeps) {
  return async (): Promise<ReconcileSummary> => {
    const count = Math.max(1, Math.floor(deps.passes?.count ?? 1));
    const spacingMs = deps.passes?.spacingMs ?? 0;
    const start = deps.clock.now();
    let summary = await pass(deps);
    for (let i = 1; i < count && deps.passes; i++) {
      const wait = start + i * spacingMs - deps.clock.now();
      if (deps.clock.now() >= start + count * spacingMs) break;
      if (wait > 0) await deps.passes.sleep(wait);
      summary = await pass(deps);
    }
    return summary;
  };
}

async function pass(deps: ReconcilerDeps): Promise<ReconcileSummary> {
  const summary = await reconcileDue(deps);
  deps.onSummary?.(summary);
  return summary;
}
