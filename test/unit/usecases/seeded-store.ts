/**
 * An in-memory store seeded with one record in whatever state a test needs. The seed goes in as the
 * record's only stored version, with one evidence record; tests look only at what their act adds.
 */

import type { EvidenceRecord, NotificationRecord } from '../../../shared/domain/notification.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore, type MemoryStoreOptions } from '../../support/memory-store.js';
import { aPolicy, T0 } from '../domain/fixtures.js';

export async function seededStore(record: NotificationRecord, options: MemoryStoreOptions = {}) {
  const store = new MemoryNotificationStore(options);
  const seed: EvidenceRecord = {
    idempotencyKey: record.idempotencyKey,
    eventId: record.eventId,
    seq: record.version,
    at: record.updatedAt,
    fromState: null,
    toState: record.state,
    attempt: record.attempts,
    reason: record.lastReason,
    actor: 'api',
    destinationFingerprint: record.destinationFingerprint,
  };
  await store.admit(record, seed, 'aes1.sealed');
  const clock = new ManualClock(T0 + 5_000);
  return { store, clock, policy: aPolicy(), key: record.idempotencyKey };
}

/** The evidence records written after the seed. */
export async function writtenAfterSeed(store: MemoryNotificationStore, key: string, seedVersion: number) {
  return (await store.evidence(key)).filter((e) => e.seq > seedVersion);
}
