/**
 * The simulators' time: an injected clock drives their timestamps, status schedules and callback
 * (event) timers; without one they run on the real clock, as `npm start` and the soaks use them.
 */
import { PinpointSMSVoiceV2Client, SendTextMessageCommand } from '@aws-sdk/client-pinpoint-sms-voice-v2';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningAwsSimulator, startAwsSimulator } from '../../../local/simulator/aws/server.js';
import { type RunningSimulator, startSimulator } from '../../../local/simulator/server.js';
import { localClient, startReceiver } from '../../support/aws-wire.js';
import { eventually } from '../../support/eventually.js';
import { ManualClock } from '../../support/manual-clock.js';
import { ACCOUNT_SID, AUTH_TOKEN, aPhoneNumber, aResetBody, basicAuth, FROM } from './support.js';

const DELAYS = { sent: 100, delivered: 250 };

/** One End User Messaging send of a reset, as the adapter makes it. */
function sendOneReset(client: PinpointSMSVoiceV2Client) {
  return client.send(
    new SendTextMessageCommand({
      DestinationPhoneNumber: aPhoneNumber(),
      OriginationIdentity: 'pool-local',
      ConfigurationSetName: 'reset-notifier',
      MessageBody: aResetBody(),
    }),
  );
}

/** A started simulator and a send to it whose callbacks go to its own sink. */
async function aSimulator(options: Parameters<typeof startSimulator>[0]) {
  const sim = await startSimulator({ authToken: AUTH_TOKEN, statusDelaysMs: DELAYS, ...options });
  const send = async () => {
    const form = new URLSearchParams({
      To: aPhoneNumber(),
      From: FROM,
      Body: aResetBody(),
      StatusCallback: `${sim.url}/_callbacks/status?client_reference=k%231`,
    });
    const response = await fetch(`${sim.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`, {
      method: 'POST',
      headers: { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    return (await response.json()) as Record<string, unknown>;
  };
  const control = async <T>(path: string, key: string) =>
    ((await (await fetch(`${sim.url}${path}`)).json()) as Record<string, T>)[key] as T;
  return { sim, send, control };
}

describe('ManualClock timers', () => {
  it('fire in due order, each with the clock at its own time, once the clock reaches them', () => {
    // Prepare
    const clock = new ManualClock(1_000);
    const fired: [string, number][] = [];
    clock.setTimer(() => fired.push(['late', clock.now()]), 30);
    clock.setTimer(() => fired.push(['early', clock.now()]), 10);
    clock.setTimer(() => fired.push(['same time, second', clock.now()]), 10);

    // Act
    clock.advance(9);
    const beforeAny = [...fired];
    clock.advance(25);

    // Assess
    expect(beforeAny).toEqual([]);
    expect(fired).toEqual([
      ['early', 1_010],
      ['same time, second', 1_010],
      ['late', 1_030],
    ]);
    expect(clock.now()).toBe(1_034);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('never fire synchronously, fire on advance(0) when due, and a cancelled one never fires', () => {
    // Prepare
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setTimer(() => fired.push('due now'), 0);
    const cancel = clock.setTimer(() => fired.push('cancelled'), 5);
    const firedAtOnce = [...fired];

    // Act
    cancel();
    clock.advance(0);
    clock.set(10);

    // Assess
    expect(firedAtOnce).toEqual([]);
    expect(fired).toEqual(['due now']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('fires a timer set by a firing timer when it falls due within the same advance', () => {
    // Prepare
    const clock = new ManualClock(0);
    const fired: number[] = [];
    clock.setTimer(() => {
      fired.push(clock.now());
      clock.setTimer(() => fired.push(clock.now()), 5);
    }, 5);

    // Act
    clock.advance(20);

    // Assess
    expect(fired).toEqual([5, 10]);
  });
});

describe('simulator clock', () => {
  let sim: RunningSimulator | undefined;

  afterEach(async () => {
    await sim?.stop();
    sim = undefined;
  });

  it('stamps and schedules by the injected clock: nothing changes until it moves', async () => {
    // Prepare
    const clock = new ManualClock(Date.UTC(2026, 10, 29, 12, 0, 0));
    const started = await aSimulator({ clock });
    sim = started.sim;

    // Act
    const created = await started.send();
    const pendingAfterSend = clock.pendingTimers();
    const requests = await started.control<{ received_at: string }[]>('/_sim/requests', 'requests');
    clock.advance(DELAYS.delivered);
    const callbacks = await eventually(async () => {
      const posted = await started.control<{ received_at: string }[]>('/_sim/callbacks', 'callbacks');
      expect(posted).toHaveLength(2);
      return posted;
    });

    // Assess: one timer per callback (sent, delivered), each posted at its own simulated time
    expect(created).toMatchObject({ status: 'queued', date_created: 'Sun, 29 Nov 2026 12:00:00 +0000' });
    expect(pendingAfterSend).toBe(2);
    expect(requests).toMatchObject([{ received_at: '2026-11-29T12:00:00.000Z' }]);
    expect(callbacks.map((c) => c.received_at)).toEqual([
      '2026-11-29T12:00:00.250Z',
      '2026-11-29T12:00:00.250Z',
    ]);
  });

  it('reset and stop cancel the callback timers on the injected clock', async () => {
    // Prepare
    const clock = new ManualClock(0);
    const started = await aSimulator({ clock });
    sim = started.sim;
    await started.send();
    const pendingBeforeReset = clock.pendingTimers();

    // Act
    await fetch(`${started.sim.url}/_sim/reset`, { method: 'POST' });
    const pendingAfterReset = clock.pendingTimers();
    await started.send();
    const pendingBeforeStop = clock.pendingTimers();
    await started.sim.stop();

    // Assess
    expect([pendingBeforeReset, pendingAfterReset, pendingBeforeStop]).toEqual([2, 0, 2]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('runs on the real clock by default: stamped now, callbacks posted by Node timers', async () => {
    // Prepare
    const started = await aSimulator({ statusDelaysMs: { sent: 0, delivered: 0 } });
    sim = started.sim;
    const before = Date.now();

    // Act
    const created = await started.send();
    const callbacks = await eventually(async () => {
      const posted = await started.control<unknown[]>('/_sim/callbacks', 'callbacks');
      expect(posted).toHaveLength(2);
      return posted;
    });

    // Assess: RFC 2822 dates have whole seconds
    const createdAt = Date.parse(String(created.date_created));
    expect(createdAt).toBeGreaterThanOrEqual(Math.floor(before / 1_000) * 1_000);
    expect(createdAt).toBeLessThanOrEqual(Date.now());
    expect(callbacks).toHaveLength(2);
  });
});

describe('AWS simulator clock', () => {
  const EVENT_DELAY_MS = 100;
  const RETRY_DELAY_MS = 20_000;
  let sim: RunningAwsSimulator | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;

  afterEach(async () => {
    await sim?.stop();
    await receiver?.stop();
    sim = undefined;
    receiver = undefined;
  });

  it('posts End User Messaging events, and the 20 s redelivery of a failed one, as the injected clock moves', async () => {
    // Prepare: the receipts endpoint answers the first event 503
    const clock = new ManualClock(Date.UTC(2026, 10, 29, 12, 0, 0));
    receiver = await startReceiver({ failFirst: 1 });
    sim = await startAwsSimulator({
      clock,
      statusDelaysMs: DELAYS,
      eventDelayMs: EVENT_DELAY_MS,
      // In order and once: this test times each event (the default reorders and duplicates them).
      eventReorderMs: 0,
      eventDuplicateShare: 0,
      eventRetryDelayMs: RETRY_DELAY_MS,
      eventsUrl: receiver.url,
    });
    const client = new PinpointSMSVoiceV2Client(localClient(sim.url));
    const eventTypes = (received: { body: string }[]) =>
      received.map((r) => (JSON.parse(JSON.parse(r.body).Message) as { eventType: string }).eventType);

    // Act
    await sendOneReset(client);
    const pendingAfterSend = clock.pendingTimers();
    clock.advance(EVENT_DELAY_MS);
    const queued = eventTypes(await receiver.waitFor(1));
    clock.advance(DELAYS.delivered);
    const all = eventTypes(await receiver.waitFor(3));
    await eventually(() => expect(clock.pendingTimers()).toBe(1)); // the redelivery, once the 503 is in
    clock.advance(RETRY_DELAY_MS);
    const redelivered = eventTypes(await receiver.waitFor(4));
    client.destroy();

    // Assess: one timer per event (queued, successful, delivered); the failed one posted again
    expect(pendingAfterSend).toBe(3);
    expect(queued).toEqual(['TEXT_QUEUED']);
    expect(all).toEqual(['TEXT_QUEUED', 'TEXT_SUCCESSFUL', 'TEXT_DELIVERED']);
    expect(redelivered.at(-1)).toBe('TEXT_QUEUED');
    const ledger = (await (await fetch(`${sim.url}/_sim/messages`)).json()) as {
      messages: { accepted_at: string; status: string }[];
    };
    expect(ledger.messages).toMatchObject([{ accepted_at: '2026-11-29T12:00:00.000Z', status: 'delivered' }]);
  });
  it('holds an End User Messaging message in the queue for queue_delay before hand-off', async () => {
    // Prepare
    const clock = new ManualClock(Date.UTC(2026, 10, 29, 12, 0, 0));
    sim = await startAwsSimulator({ clock, statusDelaysMs: DELAYS });
    await fetch(`${sim.url}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ mode: 'queue_delay', delay_ms: 30_000, count: 1 }),
    });
    const client = new PinpointSMSVoiceV2Client(localClient(sim.url));
    const status = async () =>
      ((await (await fetch(`${sim?.url}/_sim/messages`)).json()) as { messages: { status: string }[] })
        .messages[0]?.status;

    // Act
    await sendOneReset(client);
    clock.advance(DELAYS.delivered);
    const whileQueued = await status();
    clock.advance(30_000);
    const afterDelay = await status();
    client.destroy();

    // Assess
    expect(whileQueued).toBe('queued');
    expect(afterDelay).toBe('delivered');
  });
});
