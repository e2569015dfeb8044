/**
 * The AWS simulator is never kinder than AWS (issue 24 item 9). End User Messaging keeps trying to
 * hand a message off until its TimeToLive ends and only then publishes TEXT_TTL_EXPIRED (the
 * `TimeToLive` reference of SendTextMessage: the service stops attempting when the TTL expires and
 * returns that event); a simulator that expires it at hand-off time lets the soaks count resends
 * AWS could never allow.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningAwsSimulator, startAwsSimulator } from '../../../local/simulator/aws/server.js';
import { startReceiver } from '../../support/aws-wire.js';
import { ManualClock } from '../../support/manual-clock.js';
import { aSendCommand, eumProvider } from './support.js';

const running: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const stop of running.splice(0).reverse()) await stop();
});

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);

async function aSimulatorOnAManualClock() {
  const clock = new ManualClock(T0);
  const receiver = await startReceiver();
  running.push(() => receiver.stop());
  const sim = await startAwsSimulator({
    statusDelaysMs: { sent: 200, delivered: 1_000 },
    logLagMs: 0,
    eventDelayMs: 0,
    clock,
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
