/**
 * Regressions found by the chaos soak, replayed through the real use cases on the model world.
 */
import { describe, expect, it } from 'vitest';
import type { DispatchReport } from '../../../shared/usecases/dispatch-notification.js';
import { createWorld, requestFor, T0 } from './world.js';

describe('regressions found by chaos', () => {
  it('a claim abandoned because its write was slow gives its attempt back: a slow store never exhausts the retries', async () => {
    // Prepare: every claim write takes longer than the claim's own write budget plus the call
    // budget (a throttled, retried TransactWriteItems), so the sender must abandon it without calling.
    let slowWrites = true;
    const world = createWorld({
      pause: async (what) => {
        const { claimWriteBudgetMs, providerTimeoutMs } = world.policy;
        if (slowWrites && what.startsWith('transition'))
          world.clock.advance(claimWriteBudgetMs + providerTimeoutMs);
      },
    });
    const key = 'key-0';
    await world.admit(requestFor(0, 0, T0 + 30 * 60_000));

    // Act: more abandoned claims than the policy allows attempts, then the store is fast again.
    const reports: (DispatchReport | 'crashed' | 'throttled')[] = [];
    for (let i = 0; i < world.policy.maxAttempts + 2; i++) reports.push(await world.dispatch(key));
    const stalled = world.store.records()[0];
    slowWrites = false;
    const final = await world.dispatch(key);

    // Assess
    expect(reports).toEqual(
      reports.map(() => ({ kind: 'transitioned', to: 'accepted', reason: 'call_not_started' })),
    );
    expect(stalled).toMatchObject({ state: 'accepted', lastReason: 'call_not_started', attempts: 0 });
    expect(final).toMatchObject({ kind: 'sent', outcome: 'accepted' });
    expect(world.provider.ledger.map((m) => m.clientReference)).toEqual([`${key}#1`]);
  });

  it('a claim whose write answers late, within its write budget, still calls the provider once', async () => {
    // Prepare: the claim write takes most of its budget plus half the call budget (the lease was
    // decided before the write); before the claim budgeted for its own write this was given back.
    let slowWrites = true;
    const world = createWorld({
      pause: async (what) => {
        const { claimWriteBudgetMs, providerTimeoutMs } = world.policy;
        if (slowWrites && what.startsWith('transition')) {
          slowWrites = false;
          world.clock.advance(claimWriteBudgetMs + providerTimeoutMs / 2);
        }
      },
    });
    const key = 'key-0';
    await world.admit(requestFor(0, 0, T0 + 30 * 60_000));

    // Act
    const report = await world.dispatch(key);

    // Assess
    expect(report).toMatchObject({ kind: 'sent', outcome: 'accepted' });
    expect(world.provider.ledger.map((m) => m.clientReference)).toEqual([`${key}#1`]);
  });
});
