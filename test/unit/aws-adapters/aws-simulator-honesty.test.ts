/**
 * The AWS simulator is never kinder than AWS (issue 24 item 9). End User Messaging keeps trying to
 * hand a message off until its TimeToLive ends and only then publishes TEXT_TTL_EXPIRED (the
 * `TimeToLive` reference of SendTextMessage: the service stops attempting when the TTL expires and
 * returns that event); a simulator that expires it at hand-off time lets the soaks count resends
 * AWS could never allow.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AwsSimulatorOptions,
  CARRIER_RESULT_HORIZON_MS,
  DEFAULT_EVENT_DUPLICATE_SHARE,
  DEFAULT_EVENT_REORDER_MS,
  type RunningAwsSimulator,
  startAwsSimulator,
} from '../../../local/simulator/aws/server.js';
import { decideDispatch, recordSendOutcome } from '../../../shared/domain/dispatch.js';
import { applyTransition, type NotificationRecord } from '../../../shared/domain/notification.js';
import { NotificationState as S } from '../../../shared/domain/states.js';
import { createEumReceiptsHandler, type SnsNotification } from '../../../shared/providers/eum/index.js';
import { ingestReceipt } from '../../../shared/usecases/ingest-receipt.js';
import { startReceiver } from '../../support/aws-wire.js';
import { ManualClock } from '../../support/manual-clock.js';
import { aDispatchingRecord, T0 as FIXTURE_T0, MINUTE } from '../domain/fixtures.js';
import { seededStore } from '../usecases/seeded-store.js';
import { aSendCommand, eumProvider } from './support.js';

const running: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const stop of running.splice(0).reverse()) await stop();
});

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);

async function aSimulatorOnAManualClock(options: AwsSimulatorOptions = {}) {
  const clock = new ManualClock(T0);
  const receiver = await startReceiver();
  running.push(() => receiver.stop());
  const sim = await startAwsSimulator({
    statusDelaysMs: { sent: 200, delivered: 1_000 },
    logLagMs: 0,
    eventDelayMs: 0,
    eventReorderMs: 0,
    eventDuplicateShare: 0,
    clock,
    ...options,
  });
  running.push(() => sim.stop());
  sim.setEventsUrl(receiver.url);
  return { clock, receiver, sim };
}

const ledger = (sim: RunningAwsSimulator) =>
  fetch(`${sim.url}/_sim/messages`)
    .then((r) => r.json())
    .then((b) => (b as { messages: { status: string; handed_off: boolean }[] }).messages);

const faults = (sim: RunningAwsSimulator, plan: unknown) =>
  fetch(`${sim.url}/_sim/faults`, { method: 'POST', body: JSON.stringify(plan) }).then((r) => r.json());

describe('AWS simulator: TEXT_TTL_EXPIRED when the TimeToLive ends', () => {
  it('a message never handed off (fail_not_sent) expires at acceptance + TimeToLive, not at hand-off time', async () => {
    // Prepare
    const { clock, receiver, sim } = await aSimulatorOnAManualClock();
    await faults(sim, { mode: 'fail_not_sent', count: 1 });
    await eumProvider(sim).send(aSendCommand({ validityPeriodSeconds: 300 }));

    // Act
    clock.advance(1_000);
    const [early] = await ledger(sim);
    clock.advance(299_000);
    const posts = await receiver.waitFor(2);

    // Assess
    expect(early).toMatchObject({ status: 'queued', handed_off: false });
    const events = posts.map(
      (p) => JSON.parse((JSON.parse(p.body) as { Message: string }).Message) as Record<string, unknown>,
    );
    expect(events.map((e) => e.eventType)).toEqual(['TEXT_QUEUED', 'TEXT_TTL_EXPIRED']);
    expect(events[1]).toMatchObject({ eventTimestamp: T0 + 300_000, isFinal: true });
    expect((await ledger(sim))[0]).toMatchObject({ status: 'failed', handed_off: false });
  });
});

describe('AWS simulator: events in no guaranteed order (eventReorderMs)', () => {
  it("publishes some message's final event before its TEXT_QUEUED, each event keeping its own timestamp", async () => {
    // Prepare: a seeded draw, so the run is the same every time.
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const clock = new ManualClock(T0);
    const receiver = await startReceiver();
    running.push(() => receiver.stop());
    const sim = await startAwsSimulator({
      statusDelaysMs: { sent: 200, delivered: 1_000 },
      eventDelayMs: 0,
      eventReorderMs: 5_000,
      random,
      clock,
    });
    running.push(() => sim.stop());
    sim.setEventsUrl(receiver.url);
    for (let i = 0; i < 10; i++) {
      await eumProvider(sim).send(aSendCommand({ idempotencyKey: `reset-${i}` }));
    }

    // Act
    clock.advance(10_000);
    const posts = await receiver.waitFor(30);

    // Assess
    const events = posts.map(
      (p) =>
        JSON.parse((JSON.parse(p.body) as { Message: string }).Message) as {
          eventType: string;
          messageId: string;
          eventTimestamp: number;
          messageRequestTimestamp: number;
        },
    );
    const byMessage = new Map<string, typeof events>();
    for (const e of events) byMessage.set(e.messageId, [...(byMessage.get(e.messageId) ?? []), e]);
    const queuedLast = [...byMessage.values()].filter(
      (list) => list.findIndex((e) => e.eventType === 'TEXT_QUEUED') > 0,
    );
    expect(queuedLast.length).toBeGreaterThan(0);
    for (const e of events) {
      const offset = e.eventTimestamp - e.messageRequestTimestamp;
      expect({ [e.eventType]: offset }).toEqual({
        [e.eventType]: { TEXT_QUEUED: 0, TEXT_SUCCESSFUL: 200, TEXT_DELIVERED: 1_000 }[e.eventType],
      });
    }
  });
});

type PostedEvent = Record<string, unknown> & { eventType: string; isFinal: boolean; messageId: string };
const eventsOf = (posts: readonly { body: string }[]) =>
  posts.map((p) => JSON.parse((JSON.parse(p.body) as { Message: string }).Message) as PostedEvent);

describe('AWS simulator: protect configuration in Monitor mode (protectMonitorShare)', () => {
  const KEY = 'sms:password_reset:evt-1';

  it('sends the message it would have blocked, the recommendation on its events, and the service sends once', async () => {
    // Prepare: every message falls under the Monitor rule; the sender claimed attempt 1.
    const { clock, receiver, sim } = await aSimulatorOnAManualClock({ protectMonitorShare: 1 });
    const p = await seededStore(
      aDispatchingRecord({ provider: { name: 'eum' }, expiresAt: FIXTURE_T0 + 10 * MINUTE }),
    );
    const handler = createEumReceiptsHandler({
      ingest: ingestReceipt,
      topicArn: sim.eventsTopicArn,
      store: p.store,
      clock: p.clock,
      policy: p.policy,
    });
    const current = async () => (await p.store.get(KEY))?.record as NotificationRecord;
    const answer = await eumProvider(sim).send(
      aSendCommand({ idempotencyKey: KEY, clientReference: `${KEY}#1` }),
    );
    const claimed = await current();
    await p.store.transition(
      applyTransition(claimed, recordSendOutcome(claimed, answer, p.clock.now(), p.policy)),
    );

    // Act
    clock.advance(1_000);
    const posts = await receiver.waitFor(4);
    for (const post of posts) await handler({ Records: [{ Sns: JSON.parse(post.body) as SnsNotification }] });

    // Assess: AWS sends it (hand-off, delivery); the recommendation names the Monitor rule.
    const events = eventsOf(posts);
    expect(answer.kind).toBe('accepted');
    expect(events.map((e) => e.eventType)).toEqual([
      'TEXT_QUEUED',
      'TEXT_PROTECT_BLOCKED',
      'TEXT_SUCCESSFUL',
      'TEXT_DELIVERED',
    ]);
    expect(events[1]?.isFinal).toBe(true);
    for (const e of events) expect(e.protectConfiguration).toMatchObject({ protectStatus: 'MONITOR' });
    expect((await ledger(sim))[0]).toMatchObject({
      status: 'delivered',
      handed_off: true,
      protect: 'monitor',
    });
    const record = await current();
    expect(record).toMatchObject({ state: S.delivered, attempts: 1 });
    expect(decideDispatch(record, p.clock.now(), p.policy, 'sender-b').kind).not.toBe('claim');
  });
});

describe('AWS simulator: TEXT_UNKNOWN at the carrier-result horizon (carrierSilentShare)', () => {
  it('a handed-off message whose carrier never answers gets a final TEXT_UNKNOWN 72 hours after the request', async () => {
    // Prepare
    const { clock, receiver, sim } = await aSimulatorOnAManualClock({ carrierSilentShare: 1 });
    await eumProvider(sim).send(aSendCommand());

    // Act
    clock.advance(CARRIER_RESULT_HORIZON_MS - 1);
    const before = await receiver.waitFor(2);
    const ledgerBefore = await ledger(sim);
    clock.advance(1);
    const posts = await receiver.waitFor(3);

    // Assess
    expect(eventsOf(before).map((e) => e.eventType)).toEqual(['TEXT_QUEUED', 'TEXT_SUCCESSFUL']);
    expect(ledgerBefore[0]).toMatchObject({ status: 'sent', handed_off: true });
    expect(eventsOf(posts)[2]).toMatchObject({
      eventType: 'TEXT_UNKNOWN',
      messageStatus: 'UNKNOWN',
      isFinal: true,
      eventTimestamp: T0 + CARRIER_RESULT_HORIZON_MS,
    });
  });

  it('takes a compressed horizon for runs that compress the service timings', async () => {
    // Prepare
    const { clock, receiver, sim } = await aSimulatorOnAManualClock({
      carrierSilentShare: 1,
      unknownAfterMs: 30_000,
    });
    await eumProvider(sim).send(aSendCommand());

    // Act
    clock.advance(30_000);
    const posts = await receiver.waitFor(3);

    // Assess
    expect(eventsOf(posts).map((e) => e.eventType)).toEqual([
      'TEXT_QUEUED',
      'TEXT_SUCCESSFUL',
      'TEXT_UNKNOWN',
    ]);
  });
});

describe('AWS simulator: by default events come in no order, and SNS may deliver one twice', () => {
  /** A seeded draw, so a run is the same every time. */
  const seeded = (start: number) => {
    let seed = start;
    return () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
  };

  async function aDefaultSimulator(options: AwsSimulatorOptions) {
    const clock = new ManualClock(T0);
    const receiver = await startReceiver();
    running.push(() => receiver.stop());
    const sim = await startAwsSimulator({
      statusDelaysMs: { sent: 200, delivered: 1_000 },
      clock,
      ...options,
    });
    running.push(() => sim.stop());
    sim.setEventsUrl(receiver.url);
    return { clock, receiver, sim };
  }

  it(`reorders each event by up to ${DEFAULT_EVENT_REORDER_MS} ms unless told otherwise`, async () => {
    // Prepare
    const { clock, receiver, sim } = await aDefaultSimulator({ random: seeded(11), eventDuplicateShare: 0 });
    for (let i = 0; i < 10; i++) await eumProvider(sim).send(aSendCommand({ idempotencyKey: `reset-${i}` }));

    // Act
    clock.advance(1_000 + 100 + DEFAULT_EVENT_REORDER_MS);
    const events = eventsOf(await receiver.waitFor(30));

    // Assess: some message's TEXT_QUEUED comes after another of its events.
    const queuedLate = events.filter(
      (e, i) => e.eventType === 'TEXT_QUEUED' && events.slice(0, i).some((x) => x.messageId === e.messageId),
    );
    expect(queuedLate.length).toBeGreaterThan(0);
    expect(DEFAULT_EVENT_DUPLICATE_SHARE).toBeGreaterThan(0);
  });

  it('a redelivered event keeps its notification id and is marked a duplicate in the control log', async () => {
    // Prepare
    const { clock, receiver, sim } = await aDefaultSimulator({ random: seeded(3), eventDuplicateShare: 1 });
    await eumProvider(sim).send(aSendCommand());

    // Act
    clock.advance(1_000 + 100 + 50 + 2 * DEFAULT_EVENT_REORDER_MS);
    const posts = await receiver.waitFor(6);

    // Assess
    const ids = posts.map((p) => (JSON.parse(p.body) as { MessageId: string }).MessageId);
    expect(new Set(ids).size).toBe(3);
    const log = (await (await fetch(`${sim.url}/_sim/receipts`)).json()) as {
      receipts: { duplicate: boolean }[];
    };
    expect(log.receipts.filter((r) => r.duplicate)).toHaveLength(3);
  });
});
