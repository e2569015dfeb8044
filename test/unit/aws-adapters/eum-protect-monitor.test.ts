/**
 * Protect configurations in Monitor mode (issue 24 item 5). A Monitor country rule "Allow[s] sending
 * messages to the destination country, but include[s] the SMS protect blocking recommendation in
 * metrics and events" (user guide, "Country rule modes"): a message it would have blocked went out.
 * An event that carries that recommendation, even one typed `TEXT_PROTECT_BLOCKED` and final, is never
 * read as "not sent": a new attempt on it would be a second SMS. The rule's mode is the service
 * model's `ProtectStatus` (ALLOW | BLOCK | MONITOR | FILTER); only BLOCK and FILTER block.
 */
import { describe, expect, it } from 'vitest';
import { decideDispatch, recordSendOutcome } from '../../../shared/domain/dispatch.js';
import { applyTransition, type NotificationRecord } from '../../../shared/domain/notification.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import { createEumReceiptsHandler, type SnsNotification } from '../../../shared/providers/eum/index.js';
import { ingestReceipt } from '../../../shared/usecases/ingest-receipt.js';
import { aDispatchingRecord, anUnknownRecord, MINUTE, T0 } from '../domain/fixtures.js';
import { seededStore } from '../usecases/seeded-store.js';

const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:reset-notifier-eum-events';
const KEY = 'sms:password_reset:evt-1';

let notification = 0;
/** One event of attempt 1's message `SM-1` (user guide example fields), with `extra` fields. */
function anEvent(eventType: string, isFinal: boolean, extra: Record<string, unknown> = {}): SnsNotification {
  notification++;
  return {
    Type: 'Notification',
    MessageId: `5c1d2e3f-0000-4000-8000-${String(notification).padStart(12, '0')}`,
    TopicArn: TOPIC,
    Message: JSON.stringify({
      eventType,
      eventVersion: '1.0',
      eventTimestamp: T0 + notification,
      isFinal,
      destinationPhoneNumber: '+14155550123',
      messageId: 'SM-1',
      messageStatus: eventType.replace('TEXT_', ''),
      context: { client_reference: `${KEY}#1` },
      ...extra,
    }),
  };
}

/** The recommendation of a Monitor rule, in the two places an event can carry the rule's mode. */
const MONITOR_TOP_LEVEL = { protectStatus: 'MONITOR' };
const MONITOR_NESTED = {
  protectConfiguration: { protectConfigurationId: 'protect-1', protectStatus: 'MONITOR' },
};

async function aPipeline(seed: NotificationRecord) {
  const { store, clock, policy } = await seededStore(seed);
  const handler = createEumReceiptsHandler({ ingest: ingestReceipt, topicArn: TOPIC, store, clock, policy });
  const current = async () => {
    const stored = await store.get(KEY);
    if (stored === undefined) throw new Error('seeded record missing');
    return stored.record;
  };
  return {
    current,
    deliver: async (...events: readonly SnsNotification[]) => {
      const results = [];
      for (const event of events) {
        const { reports } = await handler({ Records: [{ Sns: event }] });
        const report = reports[0];
        results.push(report?.kind === 'ingested' ? report.result : report);
      }
      return results;
    },
    writeOutcome: async (claimed: NotificationRecord, messageId: string) =>
      store.transition(
        applyTransition(
          claimed,
          recordSendOutcome(claimed, { kind: 'accepted', messageId }, clock.now(), policy),
        ),
      ),
    /** What a sender would do with the record now: a claim is a second SMS. */
    senderWould: async () => decideDispatch(await current(), clock.now(), policy, 'sender-b').kind,
  };
}

const claimedAttempt1 = () => aDispatchingRecord({ provider: { name: 'eum' }, expiresAt: T0 + 10 * MINUTE });

describe('Protect Monitor mode: the recommendation never leads to a second send', () => {
  for (const [where, marker] of [
    ['top level', MONITOR_TOP_LEVEL],
    ['in a protect object', MONITOR_NESTED],
  ] as const) {
    it(`a final TEXT_PROTECT_BLOCKED naming MONITOR (${where}) after the answer: no new attempt, the delivery settles`, async () => {
      // Prepare
      const seed = claimedAttempt1();
      const p = await aPipeline(seed);
      await p.writeOutcome(seed, 'SM-1');

      // Act
      const [recommendation] = await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, marker));
      const after = await p.senderWould();
      const [delivered] = await p.deliver(anEvent('TEXT_DELIVERED', true, marker));

      // Assess
      expect(recommendation).toEqual({ kind: 'ignored', why: 'not_newer' });
      expect(after).not.toBe('claim');
      expect(delivered).toEqual({ kind: 'applied', to: S.delivered });
      expect(await p.current()).toMatchObject({ state: S.delivered, attempts: 1 });
    });
  }

  it('a Monitor recommendation that outruns the outcome write leaves the send standing', async () => {
    // Prepare
    const seed = claimedAttempt1();
    const p = await aPipeline(seed);

    // Act
    const [early] = await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, MONITOR_NESTED));
    await p.writeOutcome(seed, 'SM-1');

    // Assess: the recommendation moved the record on as any positive event does.
    expect(early).toEqual({ kind: 'applied', to: S.sent });
    expect(await p.senderWould()).not.toBe('claim');
    expect(await p.current()).toMatchObject({ state: S.sent, attempts: 1, provider: { messageId: 'SM-1' } });
  });

  it('on an unknown outcome it is evidence the message exists: sent, marked as a monitor recommendation', async () => {
    // Prepare
    const p = await aPipeline(anUnknownRecord({ provider: { name: 'eum' } }));

    // Act
    await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, MONITOR_TOP_LEVEL));

    // Assess
    const record = await p.current();
    expect(record).toMatchObject({ state: S.sent, provider: { messageId: 'SM-1' } });
    expect(record.reasonDetail).toBe('eum:event:TEXT_PROTECT_BLOCKED:monitor');
    expect(await p.senderWould()).not.toBe('claim');
  });

  it('a lifecycle event carrying a block recommendation is read by its type (control)', async () => {
    // Prepare
    const seed = claimedAttempt1();
    const p = await aPipeline(seed);
    await p.writeOutcome(seed, 'SM-1');

    // Act
    const [delivered] = await p.deliver(anEvent('TEXT_DELIVERED', true, { protectStatus: 'BLOCK' }));

    // Assess
    expect(delivered).toEqual({ kind: 'applied', to: S.delivered });
  });

  for (const [mode, extra] of [
    ['no mode field', {}],
    ['BLOCK', { protectStatus: 'BLOCK' }],
    ['FILTER', { protectConfiguration: { protectStatus: 'FILTER' } }],
  ] as const) {
    it(`a real block (${mode}) is still not sent: a new attempt while the token allows (control)`, async () => {
      // Prepare
      const seed = claimedAttempt1();
      const p = await aPipeline(seed);
      await p.writeOutcome(seed, 'SM-1');

      // Act
      const [blocked] = await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, extra));

      // Assess
      expect(blocked).toEqual({ kind: 'applied', to: S.accepted });
      expect(await p.current()).toMatchObject({ lastReason: R.providerNotSent });
      expect(await p.senderWould()).toBe('claim');
    });
  }
});
