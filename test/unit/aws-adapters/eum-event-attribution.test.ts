/**
 * End User Messaging events settle only the attempt whose message they name, and none is lost for
 * arriving early (issue 24 items 3 and 4). Events arrive unordered and can outrun the sender's
 * write of the `SendTextMessage` answer; the sender's steps here are the domain's own (claim,
 * outcome) written through the same store as the real receipts use case.
 */
import { describe, expect, it } from 'vitest';
import { keepProviderMessageIds } from '../../../shared/composition/outcome-write.js';
import { decideDispatch, recordSendOutcome } from '../../../shared/domain/dispatch.js';
import { applyTransition, type NotificationRecord } from '../../../shared/domain/notification.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import { createEumReceiptsHandler, type SnsNotification } from '../../../shared/providers/eum/index.js';
import { ingestReceipt } from '../../../shared/usecases/ingest-receipt.js';
import { aDispatchingRecord, MINUTE, SECOND, T0 } from '../domain/fixtures.js';
import { seededStore } from '../usecases/seeded-store.js';

const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:reset-notifier-eum-events';
const KEY = 'sms:password_reset:evt-1';

let notification = 0;
/** One event as the event destination publishes it (user guide example fields). */
function anEvent(eventType: string, isFinal: boolean, attempt: number, messageId: string): SnsNotification {
  notification++;
  return {
    Type: 'Notification',
    MessageId: `9b7a3c1e-0000-4000-8000-${String(notification).padStart(12, '0')}`,
    TopicArn: TOPIC,
    Message: JSON.stringify({
      eventType,
      eventVersion: '1.0',
      eventTimestamp: T0 + notification,
      isFinal,
      destinationPhoneNumber: '+14155550123',
      messageId,
      messageStatus: eventType.replace('TEXT_', ''),
      context: { client_reference: `${KEY}#${attempt}` },
    }),
  };
}

/** Attempt 1 claimed by a sender, on End User Messaging, with `life` of token left at T0. */
const claimedAttempt1 = (life = 10 * MINUTE) =>
  aDispatchingRecord({ provider: { name: 'eum' }, expiresAt: T0 + life });

async function aPipeline(seed: NotificationRecord) {
  const { store, clock, policy } = await seededStore(seed);
  const handler = createEumReceiptsHandler({ ingest: ingestReceipt, topicArn: TOPIC, store, clock, policy });
  const current = async () => {
    const stored = await store.get(KEY);
    if (stored === undefined) throw new Error('seeded record missing');
    return stored.record;
  };
  return {
    clock,
    current,
    /** Delivers events one notification each, in the order given; answers each one's result. */
    deliver: async (...events: readonly SnsNotification[]) => {
      const results = [];
      for (const event of events) {
        const { reports } = await handler({ Records: [{ Sns: event }] });
        const report = reports[0];
        results.push(report?.kind === 'ingested' ? report.result : report);
      }
      return results;
    },
    /** The sender's store as production composes it: it keeps a returned id as late evidence. */
    writeOutcomeAsComposed: async (claimed: NotificationRecord, messageId: string) =>
      keepProviderMessageIds(store, { clock, policy, sleep: async () => {} }).transition(
        applyTransition(
          claimed,
          recordSendOutcome(claimed, { kind: 'accepted', messageId }, clock.now(), policy),
        ),
      ),
    /** The sender writes its call's answer against the record it claimed (as the sender does). */
    writeOutcome: async (claimed: NotificationRecord, messageId: string) =>
      store.transition(
        applyTransition(
          claimed,
          recordSendOutcome(claimed, { kind: 'accepted', messageId }, clock.now(), policy),
        ),
      ),
    /** A sender claims the next attempt. */
    claim: async () => {
      const decision = decideDispatch(await current(), clock.now(), policy, 'sender-b');
      if (decision.kind !== 'claim') throw new Error(`expected a claim, got ${decision.kind}`);
      const written = await store.transition(applyTransition(await current(), decision.intent));
      if (written.kind !== 'written') throw new Error('claim lost');
      return written.record;
    },
  };
}

describe('End User Messaging events settle only the attempt whose message they name (issue 24 item 3)', () => {
  it("a late TEXT_QUEUED of attempt 1's blocked message never settles attempt 2; attempt 2's delivery does", async () => {
    // Prepare: attempt 1 sent SM-1, which protect blocked; attempt 2 is claimed.
    const seed = claimedAttempt1();
    const p = await aPipeline(seed);
    await p.writeOutcome(seed, 'SM-1');
    await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, 1, 'SM-1'));
    const attempt2 = await p.claim();

    // Act
    const [late] = await p.deliver(anEvent('TEXT_QUEUED', false, 1, 'SM-1'));
    const outcome = await p.writeOutcome(attempt2, 'SM-2');
    const [delivered] = await p.deliver(anEvent('TEXT_DELIVERED', true, 2, 'SM-2'));

    // Assess
    expect(late).toEqual({ kind: 'ignored', why: 'message_not_sent' });
    expect(outcome.kind).toBe('written');
    expect(delivered).toEqual({ kind: 'applied', to: S.delivered });
    expect(await p.current()).toMatchObject({
      state: S.delivered,
      attempts: 2,
      provider: { messageId: 'SM-2' },
    });
  });

  it('an event whose reference names attempt 1 but a message another attempt holds settles nothing', async () => {
    // Prepare: attempt 1 sent SM-1 (blocked), attempt 2 sent SM-2.
    const seed = claimedAttempt1();
    const p = await aPipeline(seed);
    await p.writeOutcome(seed, 'SM-1');
    await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, 1, 'SM-1'));
    await p.writeOutcome(await p.claim(), 'SM-2');

    // Act
    const [mislabelled] = await p.deliver(anEvent('TEXT_DELIVERED', true, 1, 'SM-2'));

    // Assess
    expect(mislabelled).toEqual({ kind: 'ignored', why: 'other_message' });
    expect((await p.current()).state).toBe(S.sent);
  });

  it('every attempt keeps its message id on the record', async () => {
    // Prepare
    const seed = claimedAttempt1();
    const p = await aPipeline(seed);
    await p.writeOutcome(seed, 'SM-1');
    await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, 1, 'SM-1'));

    // Act
    await p.writeOutcome(await p.claim(), 'SM-2');

    // Assess
    expect((await p.current()).attemptMessages).toEqual([
      { attempt: 1, messageId: 'SM-1', notSent: true },
      { attempt: 2, messageId: 'SM-2' },
    ]);
  });

  it('any order of the same events, duplicated, gives the same final record', async () => {
    // Prepare: the events both attempts produce, in three orders, each with duplicates.
    const blocked1 = anEvent('TEXT_PROTECT_BLOCKED', true, 1, 'SM-1');
    const queued1 = anEvent('TEXT_QUEUED', false, 1, 'SM-1');
    const queued2 = anEvent('TEXT_QUEUED', false, 2, 'SM-2');
    const delivered2 = anEvent('TEXT_DELIVERED', true, 2, 'SM-2');
    const orders = [
      [queued1, queued2, delivered2],
      [delivered2, queued1, queued2, queued1],
      [queued2, queued1, delivered2, delivered2],
    ];
    const finals = [];
    for (const after of orders) {
      const seed = claimedAttempt1();
      const p = await aPipeline(seed);
      await p.writeOutcome(seed, 'SM-1');
      await p.deliver(blocked1, blocked1);
      const attempt2 = await p.claim();

      // Act
      await p.deliver(...after);
      await p.writeOutcome(attempt2, 'SM-2');
      const record = await p.current();
      finals.push({ state: record.state, messageId: record.provider.messageId, attempts: record.attempts });
    }

    // Assess
    expect(finals).toEqual(orders.map(() => ({ state: S.delivered, messageId: 'SM-2', attempts: 2 })));
  });
});

describe('an event that outruns the outcome write is not lost (issue 24 item 4)', () => {
  it('TEXT_PROTECT_BLOCKED before the sender wrote the answer: a new attempt, and the late outcome write loses', async () => {
    // Prepare
    const seed = claimedAttempt1();
    const p = await aPipeline(seed);

    // Act
    const [early] = await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, 1, 'SM-1'));
    const outcome = await p.writeOutcome(seed, 'SM-1');

    // Assess
    expect(early).toEqual({ kind: 'applied', to: S.accepted });
    expect(outcome.kind).toBe('stale');
    const record = await p.current();
    expect(record).toMatchObject({ state: S.accepted, lastReason: R.providerNotSent, attempts: 1 });
    expect(record.reasonDetail).toBe('eum:event:TEXT_PROTECT_BLOCKED');
    expect(record.nextAttemptAt).toBeLessThanOrEqual(p.clock.now());
    expect('leaseUntil' in record || 'leaseOwner' in record).toBe(false);
    expect((await p.claim()).attempts).toBe(2);
  });

  it("the sender's composed store does not bring the blocked message back as late evidence", async () => {
    // Prepare
    const seed = claimedAttempt1();
    const p = await aPipeline(seed);
    await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, 1, 'SM-1'));

    // Act
    const outcome = await p.writeOutcomeAsComposed(seed, 'SM-1');

    // Assess
    expect(outcome.kind).toBe('stale');
    expect(await p.current()).toMatchObject({ state: S.accepted, lastReason: R.providerNotSent });
  });

  it('a late TEXT_QUEUED of that blocked message does not bring the record back to sent', async () => {
    // Prepare
    const seed = claimedAttempt1();
    const p = await aPipeline(seed);
    await p.deliver(anEvent('TEXT_PROTECT_BLOCKED', true, 1, 'SM-1'));

    // Act
    const [late] = await p.deliver(anEvent('TEXT_QUEUED', false, 1, 'SM-1'));

    // Assess
    expect(late).toEqual({ kind: 'ignored', why: 'message_not_sent' });
    expect((await p.current()).state).toBe(S.accepted);
  });

  it('TEXT_TTL_EXPIRED before the answer, with no time left for another attempt: undelivered, never sent', async () => {
    // Prepare: the token's dispatch deadline has passed by the time the event comes.
    const seed = claimedAttempt1(8 * SECOND);
    const p = await aPipeline(seed);

    // Act
    const [early] = await p.deliver(anEvent('TEXT_TTL_EXPIRED', true, 1, 'SM-1'));
    const outcome = await p.writeOutcome(seed, 'SM-1');

    // Assess
    expect(early).toEqual({ kind: 'applied', to: S.undelivered });
    expect(outcome.kind).toBe('stale');
    expect(await p.current()).toMatchObject({ state: S.undelivered, lastReason: R.providerNotSent });
  });
});
