/**
 * A sender (the dispatch use case's dependencies) over the in-memory store, with one accepted
 * command planted on shard 0, a counting provider and a clock one second after it was accepted.
 */
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore, type MemoryStoreOptions } from '../../support/memory-store.js';
import {
  acceptedRecord,
  countingProvider,
  keyOnShard,
  POLICY,
  plant,
  switchableCipher,
  T0,
} from '../../support/reconcile-fixtures.js';

/** `storeOptions` hook the store's writes (a lost answer, a throttled write). */
export async function aSender(storeOptions: MemoryStoreOptions = {}) {
  const store = new MemoryNotificationStore(storeOptions);
  const cipher = switchableCipher();
  const provider = countingProvider();
  const clock = new ManualClock(T0 + 1_000);
  const { next } = acceptedRecord(keyOnShard(0));
  await plant(store, cipher, next);
  const deps = { store, cipher, provider, clock, policy: POLICY, owner: 'test-sender' };
  return { store, cipher, provider, clock, deps, key: next.idempotencyKey };
}
