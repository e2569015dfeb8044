import type { Clock } from '../domain/clock.js';
import type { NotificationRecord } from '../domain/notification.js';
import type { NotificationStore } from '../ports/store.js';
import type { ReconcileSummary } from '../usecases/reconcile-due.js';
import { formatAge, formatDuration, type TextOut, table, writeJson } from './output.js';

/** What `reconcile` needs: the store for the due list, and (for `--now`) a way to run one pass. */
export interface ReconcileCliDeps {
  readonly store: Pick<NotificationStore, 'due'>;
  /** One reconciler pass, built lazily: only `--now` needs the provider and the cipher. */
  readonly runPass: () => Promise<ReconcileSummary>;
  readonly out: TextOut;
  readonly clock: Clock;
}

/** One due item as `reconcile` lists it. */
export interface DueEntry {
  readonly idempotency_key: string;
  readonly state: string;
  readonly attempts: number;
  readonly checks: number;
  readonly due_at: string | null;
  /** Age of the unknown outcome, for `dispatch_unknown`. */
  readonly unknown_for_seconds: number | null;
  readonly last_reason: string;
}

async function dueItems(deps: ReconcileCliDeps, limit: number): Promise<NotificationRecord[]> {
  const items: NotificationRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.store.due(deps.clock.now(), Math.min(100, limit - items.length), cursor);
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor && items.length < limit);
  return items;
}

function entryOf(record: NotificationRecord, now: number): DueEntry {
  return {
    idempotency_key: record.idempotencyKey,
    state: record.state,
    attempts: record.attempts,
    checks: record.checks,
    due_at: record.dueAt === undefined ? null : new Date(record.dueAt).toISOString(),
    unknown_for_seconds:
      record.state === 'dispatch_unknown' && record.unknownSince !== undefined
        ? Math.round((now - record.unknownSince) / 1000)
        : null,
    last_reason: record.lastReason,
  };
}

/**
 * `reconcile`: lists what the reconciler would look at now (read-only).
 * `reconcile --now`: runs one reconciler pass, exactly what the schedule runs: it reads provider
 * status and moves records, and never sends an SMS.
 */
export async function runReconcile(
  deps: ReconcileCliDeps,
  options: { readonly now?: boolean; readonly json?: boolean; readonly limit?: number },
): Promise<{ due: DueEntry[]; summary?: ReconcileSummary }> {
  const now = deps.clock.now();
  const due = (await dueItems(deps, options.limit ?? 500)).map((r) => entryOf(r, now));
  if (!options.now) {
    if (options.json) writeJson(deps.out, { due_now: due.length, items: due });
    else if (due.length === 0) deps.out.write('nothing is due for reconciliation\n');
    else {
      deps.out.write(`${due.length} item(s) due for reconciliation (run with --now to reconcile them)\n`);
      deps.out.write(`${renderDue(due)}\n`);
    }
    return { due };
  }
  const summary = await deps.runPass();
  if (options.json) writeJson(deps.out, { due_before: due.length, summary });
  else {
    deps.out.write(`reconciler pass done: ${due.length} item(s) were due\n`);
    deps.out.write(
      `${table([
        ['examined', String(summary.examined)],
        ['transitioned', String(summary.transitioned)],
        ['rescheduled', String(summary.rescheduled)],
        ['redriven', String(summary.redriven)],
        ['provider lookups', String(summary.lookups)],
        ['skipped', String(summary.skipped)],
        ['stale', String(summary.stale)],
        ['errors', String(summary.errors)],
        ['oldest unknown', summary.oldestUnknownAgeMs ? formatDuration(summary.oldestUnknownAgeMs) : '-'],
      ])}\n`,
    );
  }
  return { due, summary };
}

function renderDue(due: readonly DueEntry[]): string {
  return table([
    ['idempotency_key', 'state', 'attempts', 'checks', 'due_at', 'unknown_for', 'last_reason'],
    ...due.map((d) => [
      d.idempotency_key,
      d.state,
      String(d.attempts),
      String(d.checks),
      d.due_at ?? '-',
      d.unknown_for_seconds === null ? '-' : formatAge(d.unknown_for_seconds),
      d.last_reason,
    ]),
  ]);
}
