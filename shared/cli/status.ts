import type { Clock } from '../domain/clock.js';
import type { CircuitView, ProviderHealth } from '../ports/provider-health.js';
import type { NotificationStore } from '../ports/store.js';
import { getEvidence, getNotification, listByEvent } from '../usecases/inspect-notification.js';
import type { EvidenceView, NotificationView } from '../usecases/view.js';
import { formatDuration, type TextOut, table, writeJson } from './output.js';

/** What `status` needs: a store to read (never to write), where to print, and "now" for ages. */
export interface StatusDeps {
  readonly store: NotificationStore;
  readonly out: TextOut;
  readonly err: TextOut;
  readonly clock: Clock;
  /** The providers' circuits, read as an observer (never a write): one `circuits` line. */
  readonly circuits?: { readonly health: ProviderHealth; readonly providers: readonly string[] };
}

/** Look up one key, or every command of one business event. */
export interface StatusOptions {
  readonly key?: string;
  readonly eventId?: string;
  readonly json?: boolean;
}

/** One notification with its evidence trail, as `status --json` prints it. */
export interface StatusEntry {
  readonly notification: NotificationView;
  readonly evidence: readonly EvidenceView[];
}

/**
 * `reset-notifier status <key> | --event-id <id>`: the public view and the evidence timeline.
 * Read-only (docs/design.md#reads-have-no-side-effects). Returns the exit code: 0 found, 1 not found, 2 bad usage.
 */
export async function runStatus(deps: StatusDeps, options: StatusOptions): Promise<number> {
  if ((options.key === undefined) === (options.eventId === undefined)) {
    deps.err.write('error: give exactly one of <idempotency_key> or --event-id <id>\n');
    return 2;
  }
  const entries: StatusEntry[] = [];
  if (options.key !== undefined) {
    const notification = await getNotification(deps.store, options.key);
    if (notification) {
      entries.push({ notification, evidence: (await getEvidence(deps.store, options.key)) ?? [] });
    }
  } else {
    for (const notification of await listByEvent(deps.store, options.eventId ?? '')) {
      const evidence = (await getEvidence(deps.store, notification.idempotency_key)) ?? [];
      entries.push({ notification, evidence });
    }
  }
  const what = options.key !== undefined ? `idempotency key ${options.key}` : `event ${options.eventId}`;
  if (options.json) {
    if (options.key !== undefined) writeJson(deps.out, entries[0] ?? null);
    else writeJson(deps.out, { event_id: options.eventId, items: entries });
  } else if (entries.length === 0) {
    deps.err.write(`not found: no notification for ${what}\n`);
  } else {
    deps.out.write(entries.map((entry) => renderEntry(entry, deps.clock.now())).join('\n'));
  }
  if (!options.json && deps.circuits !== undefined) {
    const now = deps.clock.now();
    deps.out.write(`${renderCircuits(await deps.circuits.health.view(deps.circuits.providers, now), now)}\n`);
  }
  return entries.length === 0 ? 1 : 0;
}

/** The human rendering of one notification and its timeline. */
export function renderEntry(entry: StatusEntry, now: number): string {
  const n = entry.notification;
  const expiresIn = Date.parse(n.expires_at) - now;
  const provider = n.provider.message_id
    ? `${n.provider.name}  message ${n.provider.message_id}`
    : n.provider.name;
  const head = table([
    ['notification', n.idempotency_key],
    ['state', `${n.state}${n.last_reason ? `  (last reason: ${n.last_reason})` : ''}`],
    ...(n.reason_detail ? [['reason_detail', n.reason_detail]] : []),
    ...(n.waiting_for ? [['waiting_for', renderWaiting(n.waiting_for, now)]] : []),
    ['event_id', n.event_id],
    ['template', `${n.template} via ${n.channel}`],
    ['attempts', String(n.attempts)],
    ['created_at', n.created_at],
    ['updated_at', n.updated_at],
    [
      'expires_at',
      `${n.expires_at}  (${expiresIn > 0 ? `in ${formatDuration(expiresIn)}` : `${formatDuration(-expiresIn)} ago`})`,
    ],
    ['destination', `fingerprint ${n.destination_fingerprint}`],
    ['provider', provider],
  ]);
  return `${head}\n\n${renderTimeline(entry.evidence)}\n`;
}

/** `second_absence_read until 2026-...Z (in 4.2s)`, with `, then expires` when expiry ends the wait. */
function renderWaiting(waiting: NonNullable<NotificationView['waiting_for']>, now: number): string {
  const left = Date.parse(waiting.until) - now;
  const when = left > 0 ? `in ${formatDuration(left)}` : `${formatDuration(-left)} ago`;
  return `${waiting.what} until ${waiting.until}  (${when}${waiting.bounded_by_expiry ? ', then expires' : ''})`;
}

/** The evidence trail as a table, with each record's offset from admission. */
function renderTimeline(evidence: readonly EvidenceView[]): string {
  if (evidence.length === 0) return 'timeline: no evidence records';
  const start = Date.parse(evidence[0]?.at ?? '');
  const rows = evidence.map((e) => [
    String(e.seq),
    e.at,
    `+${formatDuration(Date.parse(e.at) - start)}`,
    `${e.from_state ?? '(new)'} -> ${e.to_state}`,
    e.reason,
    e.reason_detail ?? '',
    e.actor,
    String(e.attempt),
    e.provider_message_id ?? '',
  ]);
  return `timeline (${evidence.length} records)\n${table([
    ['seq', 'at', 'offset', 'transition', 'reason', 'reason_detail', 'actor', 'attempt', 'message_id'],
    ...rows,
  ])}`;
}

/**
 * `circuits  twilio closed, eum open since 2026-...Z (12.0s ago)`: each provider's circuit, in the
 * order the sender tries them (docs/providers/failover.md#circuit).
 */
export function renderCircuits(views: readonly CircuitView[], now: number): string {
  const one = (v: CircuitView) =>
    v.since === undefined
      ? `${v.provider} ${v.state}`
      : `${v.provider} ${v.state} since ${new Date(v.since).toISOString()} (${formatDuration(now - v.since)} ago)`;
  return `circuits  ${views.map(one).join(', ')}`;
}
