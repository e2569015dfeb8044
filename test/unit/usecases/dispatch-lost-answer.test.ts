import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../../shared/adapters/dynamodb/errors.js';
import { dispatchNotification } from '../../../shared/usecases/dispatch-notification.js';
import type { LostAnswer } from '../../support/memory-store.js';
import { aSender } from './sender-fixture.js';

/** A sender over a store whose claim (the first transition) is applied and then loses its answer. */
function aSenderLosingTheClaimAnswer(how: LostAnswer) {
  let transitions = 0;
  return aSender({
    afterWrite: (operation) => (operation === 'transition' && ++transitions === 1 ? how : undefined),
  });
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
    const sender = await aSender({
      beforeOperation: (operation) => {
        if (operation === 'transition' && ++transitions === 2) {
          throw new StoreUnavailableError('injected: throttled, nothing written');
        }
      },
    });

    // Act
    const report = await dispatchNotification(sender.deps, sender.key);

    // Assess
    expect(report).toMatchObject({ kind: 'sent', outcome: 'accepted', recorded: true, to: 'sent' });
    expect(sender.provider.sends).toBe(1);
    expect((await sender.store.get(sender.key))?.record.state).toBe('sent');
  });
});
