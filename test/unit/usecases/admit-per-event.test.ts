/**
 * admitNotification: one command per (`event_id`, channel, template), whatever keys arrive
 * (issue 25 item 1), over the in-memory store (the contract suite holds both stores to it).
 */
import { describe, expect, it } from 'vitest';
import { createLocalCipher } from '../../../shared/adapters/local-cipher.js';
import { type BudgetPolicy, parseDestinationLimits } from '../../../shared/domain/budgets.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import type { NotificationRequest } from '../../../shared/domain/notification.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';
import { type AdmissionDeps, admitNotification } from '../../../shared/usecases/admit-notification.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

function aWorld(budgets?: BudgetPolicy) {
  const clock = new ManualClock(T0);
  const store = new MemoryNotificationStore();
  const deps: AdmissionDeps = {
    store,
    clock,
    cipher: createLocalCipher(new Uint8Array(32).fill(3)),
    fingerprinter: createFingerprinter(new Uint8Array(32).fill(5)),
    policy: DEFAULT_POLICY,
    providerName: 'simulator',
    ...(budgets ? { budgets } : {}),
  };
  return { clock, store, deps };
}

let serial = 0;
function aRequest(overrides: Partial<NotificationRequest> = {}): NotificationRequest {
  serial += 1;
  return {
    idempotencyKey: `key-${serial}`,
    eventId: 'evt-one',
    channel: 'sms',
    template: 'password_reset',
    locale: 'en',
    expiresAt: T0 + 10 * 60_000,
    sensitive: { phone: '+14155550123', params: { code: '483920' } },
    ...overrides,
  };
}

describe('admitNotification: one command per event', () => {
  it("answers a second key with the same payload with the first command's view", async () => {
    // Prepare
    const { deps } = aWorld();
    const first = aRequest();
    await admitNotification(deps, first);
    // Act
    const second = await admitNotification(deps, aRequest());
    // Assess
    expect(second).toMatchObject({ kind: 'replayed', view: { idempotency_key: first.idempotencyKey } });
  });

  it('answers a second key with another payload as an event conflict naming the first key', async () => {
    // Prepare
    const { deps, store } = aWorld();
    const first = aRequest();
    await admitNotification(deps, first);
    const other = aRequest({ sensitive: { phone: '+14155550123', params: { code: '111111' } } });
    // Act
    const outcome = await admitNotification(deps, other);
    // Assess
    expect(outcome).toEqual({ kind: 'event_conflict', idempotencyKey: first.idempotencyKey });
    expect(await store.get(other.idempotencyKey)).toBeUndefined();
  });

  it('finds the first command also when the second key comes after the dispatch deadline', async () => {
    // Prepare
    const { deps, clock } = aWorld();
    const first = aRequest();
    await admitNotification(deps, first);
    clock.advance(10 * 60_000);
    // Act
    const same = await admitNotification(deps, aRequest());
    const other = await admitNotification(deps, aRequest({ locale: 'fr' }));
    const unknownEvent = await admitNotification(deps, aRequest({ eventId: 'evt-never' }));
    // Assess
    expect(same).toMatchObject({ kind: 'replayed', view: { idempotency_key: first.idempotencyKey } });
    expect(other).toEqual({ kind: 'event_conflict', idempotencyKey: first.idempotencyKey });
    expect(unknownEvent.kind).toBe('expired');
  });

  it('charges the budget once per event, never for its second keys', async () => {
    // Prepare: 2 per 15 minutes to one number.
    const { deps } = aWorld({ destination: parseDestinationLimits('2/15m'), country: [] });
    await admitNotification(deps, aRequest());
    // Act
    const seconds = [await admitNotification(deps, aRequest()), await admitNotification(deps, aRequest())];
    const otherEvent = await admitNotification(deps, aRequest({ eventId: 'evt-two' }));
    const thirdEvent = await admitNotification(deps, aRequest({ eventId: 'evt-three' }));
    // Assess
    expect(seconds.map((o) => o.kind)).toEqual(['replayed', 'replayed']);
    expect(otherEvent.kind).toBe('admitted');
    expect(thirdEvent.kind).toBe('rate_limited');
  });
});
