import type { CommandStore } from '../ports/command-store.js';
import { type EvidenceView, type NotificationView, toEvidenceView, toView } from './view.js';

/** Read-only use cases: they never write and never trigger work (docs/design.md#reads-have-no-side-effects). */
export async function getNotification(
  store: CommandStore,
  key: string,
): Promise<NotificationView | undefined> {
  const stored = await store.get(key);
  return stored ? toView(stored.record) : undefined;
}

export async function getEvidence(store: CommandStore, key: string): Promise<EvidenceView[] | undefined> {
  const transitions = await store.evidence(key);
  return transitions.length === 0 ? undefined : transitions.map(toEvidenceView);
}

/**
 * The commands of one business event. The event index finds the keys; each command is then read
 * strongly by its key, because the index does not project `reason_detail` or the fields
 * `waiting_for` needs (and an index copy may lag the item). A key gone since is left out.
 */
export async function listByEvent(store: CommandStore, eventId: string): Promise<NotificationView[]> {
  const listed = await store.byEvent(eventId);
  const views: NotificationView[] = [];
  for (const record of listed) {
    const stored = await store.get(record.idempotencyKey);
    if (stored) views.push(toView(stored.record));
  }
  return views;
}
