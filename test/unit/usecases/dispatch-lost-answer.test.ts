import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../../shared/adapters/dynamodb/errors.js';
import { dispatchNotification } from '../../../shared/usecases/dispatch-notification.js';
import { ManualClock } from '../../support/manual-clock.js';
import { type LostAnswer, MemoryNotificationStore } from '../../support/memory-store.js';
import {
  acceptedRecord,
  countingProvider,
  keyOnShard,
  POLICY,
  plant,
  switchableCipher,
  T0,
} from '../../support/reconcile-fixtures.js';

/** A sender over a store whose claim (the first transition) is applied and then loses its answer. */
async function aSenderLosingTheClaimAnswer(how: LostAnswer) {
  let transitions = 0;
  const store = new MemoryNotificationStore({
    afterWrite: (operation) => (operation === 'transition' && ++transitions === 1 ? how : undefined),
  });
  const cipher = switchableCipher();
  const provider = countingProvider();
  const clock = new ManualClock(T0 + 1_000);
  const { next } = acceptedRecord(keyOnShard(0));
  await plant(store, cipher, next);
  const deps = { store, cipher, provider, clock, policy: POLICY, owner: 'test-sender' };
  return { store, provider, deps, key: next.idempotencyKey };
}

describe('dispatchNotification: the claim committed but its answer was lost', () => {
  it.each(['surface', 'retry'] as const)(
    'the sender recognises its claim and sends once (%s)',
    async (how) => {
      // Prepare
      const sender = await aSenderLosingTheClaimAnswer(how);

      // Act
      const report = await dispatchNotification(sender.deps, sender.key);

      // Assess
      expect(report).toMatchObject({ kind: 'sent', outcome: 'accepted', recorded: true, to: 'sent' });
      expect(sender.provider.sends).toBe(1);
      expect((await sender.store.get(sender.key))?.record).toMatchObject({ state: 'sent', attempts: 1 });
      expect((await sender.store.evidence(sender.key)).map((e) => e.reason)).toEqual([
        'admitted',
        'claimed',
        'provider_accepted',
      ]);
    },
  );
});

describe('dispatchNotification: a write after the claim fails transiently once', () => {
  it('records the outcome on the second try instead of leaving the claim to go unknown', async () => {
    // Prepare: the second transition (the outcome write after the send) is throttled once.
    let transitions = 0;
    const store = new MemoryNotificationStore({
      beforeOperation: (operation) => {
        if (operation === 'transition' && ++transitions === 2) {
          throw new StoreUnavailableError('injected: throttled, nothing written');
        }
      },
    });
    const cipher = switchableCipher();
    const provider = countingProvider();
    const { next } = acceptedRecord(keyOnShard(0));
    await plant(store, cipher, next);
    const deps = { store, cipher, provider, clock: new ManualClock(T0 + 1_000), policy: POLICY, owner: 's' };

    // Act
    const report = await dispatchNotification(deps, next.idempotencyKey);

    // Assess
    expect(report).toMatchObject({ kind: 'sent', outcome: 'accepted', recorded: true, to: 'sent' });
    expect(provider.sends).toBe(1);
    expect((await store.get(next.idempotencyKey))?.record.state).toBe('sent');
  });
});
