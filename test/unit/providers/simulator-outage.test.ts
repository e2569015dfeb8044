/**
 * The simulators' outages (local/simulator/fault-catalogue.ts): `down` refuses connections for a
 * while, so every adapter sees ECONNREFUSED before writing a byte and classifies the send as not
 * sent; `brownout` accepts a share of sends and never answers them, an unknown for the sender.
 * Both end on their own, on the simulator's clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningAwsSimulator, startAwsSimulator } from '../../../local/simulator/aws/server.js';
import { ManualClock } from '../../support/manual-clock.js';
import {
  AT_ONCE,
  aSendCommand as anAwsSendCommand,
  eumProvider,
  snsProvider,
} from '../aws-adapters/support.js';
import { aProvider, aSendCommand, type SimHarness, startHarness, TEST_TIMEOUT_MS } from './support.js';

const running: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const stop of running.splice(0).reverse()) await stop();
});

async function aTwilioSimulator(): Promise<SimHarness> {
  const harness = await startHarness();
  running.push(() => harness.stop());
  return harness;
}

async function anAwsSimulator(clock: ManualClock): Promise<RunningAwsSimulator> {
  const sim = await startAwsSimulator({ ...AT_ONCE, clock });
  running.push(() => sim.stop());
  return sim;
}

const post = (url: string, plan: unknown) =>
  fetch(`${url}/_sim/faults`, {
    method: 'POST',
    body: JSON.stringify(plan),
    headers: { 'content-type': 'application/json' },
  });
const ledgerOf = async (url: string) =>
  ((await (await fetch(`${url}/_sim/messages`)).json()) as { messages: unknown[] }).messages;
const faultsOf = async (url: string) =>
  ((await (await fetch(`${url}/_sim/faults`)).json()) as { faults: { mode: string }[] }).faults;

/** The error code a plain request to `url` fails with (null when it is answered). */
async function connectError(url: string): Promise<string | null> {
  try {
    await fetch(`${url}/_sim/health`);
    return null;
  } catch (error) {
    return ((error as { cause?: { code?: string } }).cause?.code ?? 'unknown') as string;
  }
}

describe('down (Twilio simulator)', () => {
  it('refuses connections: the adapter sees ECONNREFUSED and classifies the send as not sent; nothing is recorded', async () => {
    // Prepare: a send first, so the adapter holds a keep-alive connection when the outage starts
    const sim = await aTwilioSimulator();
    const provider = aProvider(sim, sim.clock);
    expect((await provider.send(aSendCommand(sim.clock))).kind).toBe('accepted');

    // Act
    const answer = await post(sim.url, { mode: 'down', ms: 60_000 });
    const during = await provider.send(aSendCommand(sim.clock));
    const plain = await connectError(sim.url);

    // Assess
    expect(answer.status).toBe(200);
    expect(during).toEqual({ kind: 'not_sent_retryable', detail: 'connection_refused' });
    expect(plain).toBe('ECONNREFUSED');
    sim.clock.advance(60_000);
    await sim.sim.whenUp();
    expect(await ledgerOf(sim.url)).toHaveLength(1);
  });

  it('ends on its own after ms: the listener is back on the same port, the plan gone, sends accepted', async () => {
    // Prepare
    const sim = await aTwilioSimulator();
    const provider = aProvider(sim, sim.clock);
    await post(sim.url, { mode: 'down', ms: 30_000 });

    // Act
    sim.clock.advance(29_999);
    const stillDown = await connectError(sim.url);
    sim.clock.advance(1);
    await sim.sim.whenUp();
    const after = await provider.send(aSendCommand(sim.clock));

    // Assess
    expect(stillDown).toBe('ECONNREFUSED');
    expect(after.kind).toBe('accepted');
    expect(await faultsOf(sim.url)).toEqual([]);
    expect(sim.logs).toContain('[sim] up again');
  });

  it('takes ms only: a down without an end, with a count or a probability is refused', async () => {
    // Prepare
    const sim = await aTwilioSimulator();

    // Act
    const statuses = await Promise.all(
      [
        { mode: 'down' },
        { mode: 'down', ms: 1_000, count: 2 },
        { mode: 'down', ms: 1_000, probability: 0.5 },
      ].map(async (plan) => (await post(sim.url, plan)).status),
    );

    // Assess
    expect(statuses).toEqual([400, 400, 400]);
    expect(await connectError(sim.url)).toBeNull();
  });

  it('stops cleanly while down', async () => {
    // Prepare
    const sim = await aTwilioSimulator();
    await post(sim.url, { mode: 'down', ms: 60_000 });

    // Act
    await sim.stop();

    // Assess
    expect(sim.logs).toContain('[sim] stopped');
  });
});

describe('brownout (Twilio simulator)', () => {
  it('accepts a share of sends and never answers them (unknown), for ms, then answers every send', async () => {
    // Prepare: every send browns out while the plan lasts
    const sim = await aTwilioSimulator();
    const provider = aProvider(sim, sim.clock);
    await post(sim.url, { mode: 'brownout', probability: 1, ms: 10_000 });
    const deadline = () => sim.clock.now() + TEST_TIMEOUT_MS;

    // Act
    const during = await provider.send(aSendCommand(sim.clock, { deadline: deadline() }));
    const plansDuring = await faultsOf(sim.url);
    sim.clock.advance(10_000);
    const after = await provider.send(aSendCommand(sim.clock));

    // Assess
    expect(during).toMatchObject({ kind: 'unknown', timedOut: true });
    expect(plansDuring.map((p) => p.mode)).toEqual(['brownout']);
    expect(after.kind).toBe('accepted');
    expect(await ledgerOf(sim.url)).toHaveLength(2);
    const requests = await sim.requests();
    expect(requests.map((r) => [r.fault, r.outcome, r.http_status])).toEqual([
      ['brownout', 'recorded', null],
      [null, 'recorded', 201],
    ]);
  });

  it('fires before the send lane, which keeps its budget for the sends it spares', async () => {
    // Prepare: a brownout that spares every send, beside a one-shot rate limit
    const sim = await aTwilioSimulator();
    const provider = aProvider(sim, sim.clock);
    await post(sim.url, [
      { mode: 'brownout', probability: 0, ms: 10_000 },
      { mode: 'rate_limited', count: 1 },
    ]);

    // Act
    const first = await provider.send(aSendCommand(sim.clock));
    const second = await provider.send(aSendCommand(sim.clock));

    // Assess
    expect(first.kind).toBe('not_sent_retryable');
    expect(second.kind).toBe('accepted');
  });

  it('needs ms', async () => {
    const sim = await aTwilioSimulator();
    expect((await post(sim.url, { mode: 'brownout', probability: 0.3 })).status).toBe(400);
  });
});

describe('down and brownout (AWS simulator)', () => {
  it('down: End User Messaging and SNS sends are refused before connecting (not sent), then it recovers', async () => {
    // Prepare
    const clock = new ManualClock(Date.now());
    const sim = await anAwsSimulator(clock);
    expect((await eumProvider(sim).send(anAwsSendCommand())).kind).toBe('accepted');

    // Act
    const answer = await post(sim.url, { mode: 'down', delay_ms: 60_000 });
    const eum = await eumProvider(sim).send(anAwsSendCommand());
    const sns = await snsProvider(sim).send(anAwsSendCommand());
    clock.advance(60_000);
    await sim.whenUp();
    const after = await eumProvider(sim).send(anAwsSendCommand());

    // Assess
    expect(answer.status).toBe(200);
    expect(eum).toEqual({ kind: 'not_sent_retryable', detail: 'eum:transport:ECONNREFUSED' });
    expect(sns).toEqual({ kind: 'not_sent_retryable', detail: 'sns:ECONNREFUSED' });
    expect(after.kind).toBe('accepted');
    expect(await ledgerOf(sim.url)).toHaveLength(2);
    expect(await faultsOf(sim.url)).toEqual([]);
  });

  it('down needs an end', async () => {
    const sim = await anAwsSimulator(new ManualClock(Date.now()));
    expect((await post(sim.url, { mode: 'down' })).status).toBe(400);
    expect((await post(sim.url, { mode: 'down', ms: 1_000, count: 1 })).status).toBe(400);
  });

  it('brownout: the send is accepted and never answered (unknown); it ends after its delay_ms', async () => {
    // Prepare
    const clock = new ManualClock(Date.now());
    const sim = await anAwsSimulator(clock);
    await post(sim.url, { mode: 'brownout', probability: 1, delay_ms: 5_000 });

    // Act
    const during = await eumProvider(sim).send(anAwsSendCommand({ deadline: Date.now() + TEST_TIMEOUT_MS }));
    clock.advance(5_000);
    const after = await eumProvider(sim).send(anAwsSendCommand());

    // Assess
    expect(during).toMatchObject({ kind: 'unknown', timedOut: true });
    expect(after.kind).toBe('accepted');
    expect(await ledgerOf(sim.url)).toHaveLength(2);
    expect(await faultsOf(sim.url)).toEqual([]);
  });
});
