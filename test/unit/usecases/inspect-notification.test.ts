import { describe, expect, it } from 'vitest';
import { reasonDetailFrom } from '../../../shared/domain/reason-detail.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import type { NotificationStore } from '../../../shared/ports/store.js';
import { listByEvent } from '../../../shared/usecases/inspect-notification.js';
import { aRecord, omit } from '../domain/fixtures.js';

describe('listByEvent', () => {
  it('shows each command as a strong read by key shows it (the event index projects no reason_detail)', async () => {
    // Prepare: the index copy lags and lacks the detail; the item itself has both.
    const fresh = aRecord({
      state: S.failed,
      lastReason: R.providerRejectedPermanent,
      reasonDetail: reasonDetailFrom('twilio', 'twilio_21211'),
    });
    const indexCopy = omit({ ...fresh, state: S.dispatching, lastReason: R.claimed }, 'reasonDetail');
    const store = {
      byEvent: async () => [indexCopy],
      get: async (key: string) => (key === fresh.idempotencyKey ? { record: fresh } : undefined),
    } as unknown as NotificationStore;

    // Act
    const views = await listByEvent(store, fresh.eventId);

    // Assess
    expect(views).toHaveLength(1);
    expect(views[0]).toMatchObject({ state: 'failed', reason_detail: 'twilio:21211' });
    expect(views[0]?.waiting_for).toBeUndefined();
  });

  it('leaves out a key the index lists but the table no longer holds', async () => {
    // Prepare
    const store = {
      byEvent: async () => [aRecord()],
      get: async () => undefined,
    } as unknown as NotificationStore;

    // Act / Assess
    expect(await listByEvent(store, 'evt-1')).toEqual([]);
  });
});
