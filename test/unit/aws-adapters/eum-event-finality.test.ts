/**
 * End User Messaging events as AWS sends them, through the real receipts use case (issue 24 items 1
 * and 2): a non-final `TEXT_CARRIER_UNREACHABLE` ("a temporary error") is not terminal and the later
 * `TEXT_DELIVERED` settles; `TEXT_UNKNOWN` ("we do not know what happened") changes no final state
 * and is never read as non-delivery.
 */
import { describe, expect, it } from 'vitest';
import type { NotificationRecord } from '../../../shared/domain/notification.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import { createEumReceiptsHandler, type SnsNotification } from '../../../shared/providers/eum/index.js';
import { ingestReceipt } from '../../../shared/usecases/ingest-receipt.js';
import { anUnknownRecord, aSentRecord } from '../domain/fixtures.js';
import { seededStore, writtenAfterSeed } from '../usecases/seeded-store.js';

const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:reset-notifier-eum-events';
const KEY = 'sms:password_reset:evt-1';

/** One event of attempt 1's message `SM-1`, as the event destination publishes it (user guide example fields). */
function anEvent(eventType: string, isFinal: boolean, n: number): SnsNotification {
  return {
    Type: 'Notification',
    MessageId: `9b7a3c1e-0000-4000-8000-00000000000${n}`,
    TopicArn: TOPIC,
    Message: JSON.stringify({
      eventType,
      eventVersion: '1.0',
      eventTimestamp: 1_764_590_400_000 + n,
      isFinal,
      destinationPhoneNumber: '+14155550123',
      messageId: 'SM-1',
      messageStatus: eventType.replace('TEXT_', ''),
      context: { client_reference: `${KEY}#1` },
    }),
  };
}

async function deliver(seed: NotificationRecord, events: readonly SnsNotification[]) {
  const { store, clock, policy } = await seededStore(seed);
  const handler = createEumReceiptsHandler({ ingest: ingestReceipt, topicArn: TOPIC, store, clock, policy });
  const { reports } = await handler({ Records: events.map((Sns) => ({ Sns })) });
  const [record] = store.records();
  return { record, reports, written: await writtenAfterSeed(store, KEY, seed.version) };
}

const sentSM1 = () => aSentRecord({ provider: { name: 'eum', messageId: 'SM-1' } });

describe('End User Messaging events: isFinal', () => {
  it('a non-final TEXT_CARRIER_UNREACHABLE leaves the record sent, and the later TEXT_DELIVERED settles it', async () => {
    // Act
    const { record, reports, written } = await deliver(sentSM1(), [
      anEvent('TEXT_CARRIER_UNREACHABLE', false, 1),
      anEvent('TEXT_DELIVERED', true, 2),
    ]);

    // Assess
    expect(reports.map((r) => (r.kind === 'ingested' ? r.result : r))).toEqual([
      { kind: 'ignored', why: 'not_newer' },
      { kind: 'applied', to: S.delivered },
    ]);
    expect(record?.state).toBe(S.delivered);
    expect(written.map((e) => e.toState)).toEqual([S.delivered]);
  });

  it('a non-final event settles an unknown outcome only as far as sent (the message exists)', async () => {
    // Act
    const { record, written } = await deliver(anUnknownRecord(), [
      anEvent('TEXT_CARRIER_UNREACHABLE', false, 1),
    ]);

    // Assess
    expect(record).toMatchObject({ state: S.sent, provider: { messageId: 'SM-1' } });
    expect(written[0]).toMatchObject({
      reason: R.deliveryReceipt,
      reasonDetail: 'eum:event:TEXT_CARRIER_UNREACHABLE:not_final',
    });
  });

  it('a final TEXT_CARRIER_UNREACHABLE is still undelivered', async () => {
    const { record } = await deliver(sentSM1(), [anEvent('TEXT_CARRIER_UNREACHABLE', true, 1)]);
    expect(record?.state).toBe(S.undelivered);
  });
});

describe('End User Messaging events: TEXT_UNKNOWN (the provider does not know)', () => {
  it('never makes a sent record undelivered', async () => {
    const { record, written } = await deliver(sentSM1(), [anEvent('TEXT_UNKNOWN', true, 1)]);
    expect(record?.state).toBe(S.sent);
    expect(written).toEqual([]);
  });

  it('changes nothing on a record that ended unknown_at_expiry', async () => {
    // Prepare
    const seed = anUnknownRecord({
      state: S.expired,
      lastReason: R.unknownAtExpiry,
      provider: { name: 'eum' },
    });

    // Act
    const { record, reports, written } = await deliver(seed, [anEvent('TEXT_UNKNOWN', true, 1)]);

    // Assess
    expect(record).toMatchObject({ state: S.expired, lastReason: R.unknownAtExpiry });
    expect(reports[0]).toMatchObject({ kind: 'ingested', result: { kind: 'ignored', why: 'final' } });
    expect(written).toEqual([]);
  });

  it('after a delivery, changes nothing', async () => {
    const { record, written } = await deliver(sentSM1(), [
      anEvent('TEXT_DELIVERED', true, 1),
      anEvent('TEXT_UNKNOWN', true, 2),
    ]);
    expect(record?.state).toBe(S.delivered);
    expect(written.map((e) => e.toState)).toEqual([S.delivered]);
  });

  it('settles an unknown outcome as sent, never as a failure a new attempt could follow', async () => {
    const { record, written } = await deliver(anUnknownRecord(), [anEvent('TEXT_UNKNOWN', true, 1)]);
    expect(record).toMatchObject({ state: S.sent, provider: { messageId: 'SM-1' } });
    expect(written[0]).toMatchObject({ reasonDetail: 'eum:event:TEXT_UNKNOWN' });
  });
});
