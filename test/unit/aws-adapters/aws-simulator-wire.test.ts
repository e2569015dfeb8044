/**
 * The SNS and End User Messaging adapters driven through the real SDK clients, over HTTP, against
 * the AWS simulator (SNS Query protocol, pinpoint-sms-voice-v2 JSON 1.0, CloudWatch Logs JSON 1.1).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AwsSimulatorOptions,
  type RunningAwsSimulator,
  startAwsSimulator,
} from '../../../local/simulator/aws/server.js';
import { parseEumNotification } from '../../../shared/providers/eum/index.js';
import { startReceiver } from '../../support/aws-wire.js';
import { ManualClock } from '../../support/manual-clock.js';
import { AT_ONCE, aLookupRef, aSendCommand, eumProvider, snsProvider } from './support.js';

const running: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const stop of running.splice(0).reverse()) await stop();
});

async function aSimulator(options: AwsSimulatorOptions = {}): Promise<RunningAwsSimulator> {
  const sim = await startAwsSimulator({ ...AT_ONCE, ...options });
  running.push(() => sim.stop());
  return sim;
}

const setFaults = (sim: RunningAwsSimulator, plan: unknown) =>
  fetch(`${sim.url}/_sim/faults`, { method: 'POST', body: JSON.stringify(plan) }).then((r) => r.json());
const ledger = (sim: RunningAwsSimulator) =>
  fetch(`${sim.url}/_sim/messages`)
    .then((r) => r.json())
    .then((b) => (b as { messages: Record<string, unknown>[] }).messages);

describe('SNS over the wire (real SNSClient and CloudWatchLogsClient)', () => {
  it('publishes, gets the MessageId, and reads the delivery status by that id', async () => {
    // Prepare
    const sim = await aSimulator();
    const provider = snsProvider(sim);

    // Act
    const sent = await provider.send(aSendCommand());
    const looked = sent.kind === 'accepted' ? await provider.lookup(aLookupRef(sent.messageId)) : undefined;

    // Assess
    expect(sent.kind).toBe('accepted');
    expect(looked).toEqual({
      kind: 'found',
      messageId: (sent as { messageId: string }).messageId,
      // SUCCESS is the carrier's acceptance: sent with its own reason, never delivered.
      status: 'sent',
      detail: 'sns:status:SUCCESS',
    });
    const [entry] = await ledger(sim);
    expect(entry).toMatchObject({ protocol: 'sns', client_reference: null, status: 'delivered' });
    expect(JSON.stringify(await ledger(sim))).not.toContain('4155550123');
  });

  it('shows nothing for an unsampled success line: found as sent, never absent', async () => {
    const sim = await aSimulator({ logSuccessSamplingRate: 0 });
    const provider = snsProvider(sim);
    const sent = await provider.send(aSendCommand());
    const id = (sent as { messageId: string }).messageId;
    expect(await provider.lookup(aLookupRef(id))).toEqual({ kind: 'found', messageId: id, status: 'sent' });
  });

  it('reads a failure line from the /Failure group once it exists (fail_not_sent)', async () => {
    const sim = await aSimulator();
    await setFaults(sim, { mode: 'fail_not_sent', count: 1 });
    const provider = snsProvider(sim);
    const sent = await provider.send(aSendCommand());
    const id = (sent as { messageId: string }).messageId;
    expect(await provider.lookup(aLookupRef(id))).toEqual({
      kind: 'found',
      messageId: id,
      status: 'undelivered',
    });
  });

  it('batches concurrent lookups into one FilterLogEvents per group', async () => {
    const sim = await aSimulator();
    const provider = snsProvider(sim);
    const ids = [];
    for (let i = 0; i < 3; i += 1)
      ids.push(((await provider.send(aSendCommand())) as { messageId: string }).messageId);
    const outcomes = await provider.lookupMany(ids.map((id) => aLookupRef(id)));
    expect(outcomes.map((o) => o.kind === 'found' && o.detail)).toEqual([
      'sns:status:SUCCESS',
      'sns:status:SUCCESS',
      'sns:status:SUCCESS',
    ]);
  });

  it.each([
    ['rate_limited', 'not_sent_retryable', 'sns:ThrottledException', 0],
    ['reject_permanent', 'not_sent_permanent', 'sns:InvalidParameterException', 0],
    ['error_5xx_before_accept', 'unknown', 'sns:InternalErrorException', 0],
    ['error_5xx_after_accept', 'unknown', 'sns:InternalErrorException', 1],
  ])('classifies the %s fault as %s (%s)', async (mode, kind, detail, recorded) => {
    const sim = await aSimulator();
    await setFaults(sim, { mode, count: 1 });
    const outcome = await snsProvider(sim).send(aSendCommand());
    expect(outcome).toMatchObject({ kind, detail });
    expect(await ledger(sim)).toHaveLength(recorded);
  });

  it('gives up at the deadline on timeout_after_accept; the message exists all the same', async () => {
    const sim = await aSimulator();
    await setFaults(sim, { mode: 'timeout_after_accept', count: 1 });
    const outcome = await snsProvider(sim).send(aSendCommand({ deadline: Date.now() + 300 }));
    expect(outcome).toMatchObject({ kind: 'unknown', timedOut: true });
    expect(await ledger(sim)).toHaveLength(1);
  });
});

describe('AWS simulator boundary', () => {
  it('answers only requests that name a loopback host', async () => {
    const sim = await aSimulator();
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${sim.url}/_sim/health`, { headers: { host: 'sim.example.com' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    expect((await fetch(`${sim.url}/_sim/health`)).status).toBe(200);
  });
});

describe('End User Messaging over the wire (real PinpointSMSVoiceV2Client)', () => {
  it('sends with TTL and Context, and the events carry the reference back (SNS-shaped, to the receipts path)', async () => {
    // Prepare
    const receiver = await startReceiver();
    running.push(() => receiver.stop());
    const sim = await aSimulator({ eventDelayMs: 0 });
    sim.setEventsUrl(receiver.url);

    // Act
    const sent = await eumProvider(sim).send(aSendCommand({ clientReference: 'reset-1#2', attempt: 2 }));
    const posts = await receiver.waitFor(3);

    // Assess
    expect(sent.kind).toBe('accepted');
    const events = posts.map((p) => parseEumNotification(JSON.parse(p.body), sim.eventsTopicArn));
    expect(
      events.map((e) => (e.kind === 'event' ? `${e.event.eventType}:${e.event.status}` : e.why)).sort(),
    ).toEqual(['TEXT_DELIVERED:delivered', 'TEXT_QUEUED:sent', 'TEXT_SUCCESSFUL:sent']);
    for (const e of events) expect(e).toMatchObject({ event: { clientReference: 'reset-1#2' } });
    expect(posts[0]?.headers['x-amz-sns-message-type']).toBe('Notification');
    const [entry] = await ledger(sim);
    expect(entry).toMatchObject({
      protocol: 'eum',
      client_reference: 'reset-1#2',
      validity_period_seconds: 300,
    });
  });

  it('reports a message never handed off as TEXT_TTL_EXPIRED (not_sent), and duplicates keep their notification id', async () => {
    const receiver = await startReceiver();
    running.push(() => receiver.stop());
    // TEXT_TTL_EXPIRED comes when the TimeToLive ends (aws-simulator-honesty.test.ts), its duplicate 50 ms later.
    const clock = new ManualClock();
    const sim = await aSimulator({ eventDelayMs: 0, clock });
    sim.setEventsUrl(receiver.url);
    await setFaults(sim, [
      { mode: 'fail_not_sent', count: 1 },
      { mode: 'receipt_duplicate', count: 2 },
    ]);

    await eumProvider(sim).send(aSendCommand());
    clock.advance(aSendCommand().validityPeriodSeconds * 1000 + 50);
    const posts = await receiver.waitFor(4);

    const parsed = posts.map((p) => JSON.parse(p.body) as { MessageId: string; Message: string });
    expect(new Set(parsed.map((p) => p.MessageId)).size).toBe(2);
    expect(parsed.map((p) => (JSON.parse(p.Message) as { eventType: string }).eventType)).toContain(
      'TEXT_TTL_EXPIRED',
    );
    const expiredPost = posts.find((p) => p.body.includes('TEXT_TTL_EXPIRED'));
    const expired = parseEumNotification(JSON.parse(expiredPost?.body ?? '{}'), sim.eventsTopicArn);
    expect(expired).toMatchObject({ kind: 'event', event: { status: 'not_sent' } });
  });

  it('redelivers an event the receipts path answered with a 5xx, with the same notification id (SNS policy)', async () => {
    const receiver = await startReceiver({ failFirst: 1 });
    running.push(() => receiver.stop());
    const sim = await aSimulator({ eventDelayMs: 0, eventRetryDelayMs: 5 });
    sim.setEventsUrl(receiver.url);
    await eumProvider(sim).send(aSendCommand());
    const posts = await receiver.waitFor(4);
    const ids = posts.map((p) => (JSON.parse(p.body) as { MessageId: string }).MessageId);
    expect(new Set(ids).size).toBe(3);
    expect(ids.filter((id) => id === ids[0])).toHaveLength(2);
  });

  it.each([
    ['rate_limited', 'not_sent_retryable', 'eum:throttled:ThrottlingException', 0],
    [
      'reject_permanent',
      'not_sent_permanent',
      'eum:blocked_destination:ConflictException:DESTINATION_PHONE_NUMBER_OPTED_OUT',
      0,
    ],
    ['error_5xx_before_accept', 'unknown', 'eum:server:InternalServerException', 0],
    ['error_5xx_after_accept', 'unknown', 'eum:server:InternalServerException', 1],
  ])('classifies the %s fault as %s', async (mode, kind, detail, recorded) => {
    const sim = await aSimulator();
    await setFaults(sim, { mode, count: 1 });
    expect(await eumProvider(sim).send(aSendCommand())).toMatchObject({ kind, detail });
    expect(await ledger(sim)).toHaveLength(recorded);
  });

  it('a configuration error (no such configuration set) is not sent, with its own detail', async () => {
    const sim = await aSimulator({ configurationSets: ['reset-notifier'] });
    const provider = eumProvider(sim, { configurationSetName: 'deleted-set' });
    expect(await provider.send(aSendCommand())).toEqual({
      kind: 'not_sent_retryable',
      detail: 'eum:configuration:ResourceNotFoundException',
    });
  });

  it('records a confirmation with PutMessageFeedback', async () => {
    const sim = await aSimulator();
    const provider = eumProvider(sim);
    const sent = await provider.send(aSendCommand());
    const id = (sent as { messageId: string }).messageId;
    expect(await provider.confirm(id)).toEqual({ kind: 'recorded' });
    expect(await provider.confirm('no-such-message')).toMatchObject({ kind: 'failed' });
    expect((await ledger(sim))[0]).toMatchObject({ feedback: 'RECEIVED' });
  });
});
