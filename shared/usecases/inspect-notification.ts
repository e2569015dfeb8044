import type { NotificationStore } from '../ports/store.js';
import { type EvidenceView, type NotificationView, toEvidenceView, toView } from './view.js';

/** Read-only use cases: they never write and never trigger work (DESIGN.md promise 5). */
export async function getNotification(
  store: NotificationStore,
  key: string,
): Promise<NotificationView | undefined> {
  const stored = await store.get(key);
  return stored ? toView(stored.record) : undefined;
}

export async function getEvidence(
  store: NotificationStore,
  key: string,
): Promise<EvidenceView[] | undefined> {
  const transitions = await store.evidence(key);
  return transitions.length === 0 ? undefined : transitions.map(toEvidenceView);
}

export async function listByEvent(store: NotificationStore, eventId: string): Promise<NotificationView[]> {
  return (await store.byEvent(eventId)).map(toView);
}
