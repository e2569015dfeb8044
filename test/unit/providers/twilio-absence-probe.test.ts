/**
 * Absence in a quiet Twilio account: the scheduled-and-canceled probe (shared/providers/twilio/
 * absence-probe.ts) against the simulator, which models Twilio Message Scheduling as documented.
 * Covers the quiet-account `timeout_before_accept` end to end at the adapter, the probe's rate
 * limit, and every half-way failure (create unanswered, cancel failed, a crashed process's leftover).
 */
import { describe, expect, it } from 'vitest';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import type { SmsProvider } from '../../../shared/ports/sms-provider.js';
import { ABSENCE_PROBE_BODY, PROBE_SEND_AFTER_MS } from '../../../shared/providers/twilio/absence-probe.js';
import { createTwilioProvider, type TwilioProviderOptions } from '../../../shared/providers/twilio/index.js';
import type { ManualClock } from '../../support/manual-clock.js';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  anAfterDeadlineRef,
  aProvider,
  aRecordingFetch,
  aSendCommand,
  aSharedHarness,
  basicAuth,
  type SimHarness,
  TEST_TIMEOUT_MS,
} from './support.js';

const SERVICE_SID = `MG${'c'.repeat(32)}`;
/** The number the probe goes to: one of ours (the simulator has no handset anywhere). */
const PROBE_TO = '+15005550010';
const DAY_MS = 86_400_000;
const MESSAGES = `/2010-04-01/Accounts/${ACCOUNT_SID}/Messages`;

interface ListedMessage {
  sid: string;
  status: string;
  to: string;
  body: string;
  date_sent: string | null;
  date_created: string;
  messaging_service_sid: string | null;
}

/** An adapter with the probe on: a messaging service, a number we own, redaction declared off. */
function aProbingProvider(
  harness: SimHarness,
  clock: ManualClock,
  overrides: Partial<TwilioProviderOptions> = {},
) {
  return aProvider(harness, clock, {
    messagingServiceSid: SERVICE_SID,
    absenceProbeTo: PROBE_TO,
    canaryIntervalMs: 60_000,
    ...overrides,
  });
}

async function api(harness: SimHarness, method: string, path: string, form?: Record<string, string>) {
  const response = await fetch(`${harness.url}${MESSAGES}${path}`, {
    method,
    headers: {
      authorization: basicAuth(),
      ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() }),
  });
  return {
    status: response.status,
    json: (await response.json().catch(() => null)) as Record<string, unknown>,
  };
}

/** Every message to the probe number, as Twilio lists it. */
async function probes(harness: SimHarness): Promise<ListedMessage[]> {
  const { json } = await api(harness, 'GET', `.json?To=${encodeURIComponent(PROBE_TO)}&PageSize=1000`);
  return json.messages as ListedMessage[];
}

/** A scheduled probe created directly, as a process that crashed before its cancel left it. */
async function aLeftoverProbe(harness: SimHarness): Promise<string> {
  const { status, json } = await api(harness, 'POST', '.json', {
    To: PROBE_TO,
    MessagingServiceSid: SERVICE_SID,
    Body: ABSENCE_PROBE_BODY,
    ScheduleType: 'fixed',
    SendAt: new Date(harness.clock.now() + PROBE_SEND_AFTER_MS).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  });
  expect(status).toBe(201);
  return json.sid as string;
}

/** A send whose answer never comes and that Twilio never recorded; the call deadline then passes. */
async function aTimedOutSend(harness: SimHarness, provider: SmsProvider, clock: ManualClock) {
  await harness.setFaults({ mode: 'timeout_before_accept', count: 1 });
  const command = aSendCommand(clock, { deadline: clock.now() + TEST_TIMEOUT_MS });
  const outcome = await provider.send(command);
  clock.advance(TEST_TIMEOUT_MS);
  return { command, outcome };
}

describe('Twilio adapter: absence in a quiet account (the scheduled probe)', () => {
  const harness = aSharedHarness();

  it('a timeout_before_accept in an idle account is proven absent, resent, and delivered once; the probe never goes out', async () => {
    // Prepare: nothing else in the account; adapter and simulator share one clock
    const clock = harness.clock;
    const provider = aProbingProvider(harness, clock);
    const { command, outcome } = await aTimedOutSend(harness, provider, clock);
    const ref = anAfterDeadlineRef(command, clock);

    // Act: the reconciler's two reads, a settle time apart, then the resend
    const first = await provider.lookup(ref);
    clock.advance(1_500);
    const second = await provider.lookup(ref);
    const resent = await provider.send({
      ...command,
      attempt: 2,
      clientReference: `${command.idempotencyKey}#2`,
      deadline: clock.now() + 5_000,
    });
    clock.advance(200);
    clock.advance(8 * DAY_MS); // past every probe's SendAt

    // Assess
    expect(outcome.kind).toBe('unknown');
    expect(first).toEqual({ kind: 'absent' });
    expect(second).toEqual({ kind: 'absent' });
    expect(resent.kind).toBe('accepted');
    const ledger = await harness.ledger();
    const ours = ledger.filter((m) => m.client_reference?.startsWith(`${command.idempotencyKey}#`));
    expect(ours.map((m) => [m.client_reference, m.status])).toEqual([
      [`${command.idempotencyKey}#2`, 'delivered'],
    ]);
    const probeMessages = await probes(harness);
    expect(probeMessages).toHaveLength(1);
    expect(probeMessages.map((m) => [m.status, m.date_sent, m.body])).toEqual([
      ['canceled', null, ABSENCE_PROBE_BODY],
    ]);
  });

  it('without the probe the same idle account never proves absence (what the probe fixes)', async () => {
    // Prepare
    const clock = harness.clock;
    const provider = aProvider(harness, clock, { messagingServiceSid: SERVICE_SID });
    const { command } = await aTimedOutSend(harness, provider, clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:no_canary' });
  });

  it('probes only when an absence waits on freshness, at most once per canary interval', async () => {
    // Prepare
    const clock = harness.clock;
    const recording = aRecordingFetch();
    const provider = aProbingProvider(harness, clock, { fetch: recording.fetch });
    const creates = () =>
      recording.calls.filter((c) => c.method === 'POST' && c.url.endsWith('/Messages.json')).length;
    const fresh = await provider.send(aSendCommand(clock)); // user traffic newer than the attempt below
    expect(fresh.kind).toBe('accepted');
    const before = creates();

    // Act
    const withTraffic = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));
    clock.advance(120_000);
    const quiet1 = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));
    const afterFirstProbe = creates();
    clock.advance(10_000);
    const quiet2 = await provider.lookup(
      anAfterDeadlineRef(aSendCommand(clock), clock, { attemptStartedAt: clock.now() - 1_000 + 120_000 }),
    );
    const withinInterval = creates();
    clock.advance(60_000);
    const quiet3 = await provider.lookup(
      anAfterDeadlineRef(aSendCommand(clock), clock, { attemptStartedAt: clock.now() - 1_000 }),
    );

    // Assess
    expect(withTraffic).toEqual({ kind: 'absent' });
    expect(before).toBe(creates() - 2); // two probes in all, none while traffic was fresh
    expect(quiet1).toEqual({ kind: 'absent' });
    expect(afterFirstProbe - before).toBe(1);
    expect(quiet2).toEqual({ kind: 'inconclusive', detail: 'absence_pending:probe_interval' });
    expect(withinInterval).toBe(afterFirstProbe);
    expect(quiet3).toEqual({ kind: 'absent' });
    expect((await probes(harness)).map((m) => m.status)).toEqual(['canceled', 'canceled']);
  });

  it('a probe create that times out after Twilio recorded it is canceled by the next run, and never sent', async () => {
    // Prepare: the probe's POST is recorded but its answer is lost
    const clock = harness.clock;
    const provider = aProbingProvider(harness, clock, { lookupTimeoutMs: TEST_TIMEOUT_MS * 2 });
    const { command } = await aTimedOutSend(harness, provider, clock);
    await harness.setFaults({ mode: 'timeout_after_accept', count: 1 });

    // Act
    const first = await provider.lookup(anAfterDeadlineRef(command, clock));
    const leftover = await probes(harness);
    clock.advance(60_000);
    const second = await provider.lookup(anAfterDeadlineRef(command, clock));
    clock.advance(8 * DAY_MS);

    // Assess
    expect(first).toEqual({ kind: 'inconclusive', detail: 'absence_pending:probe_create_unanswered' });
    expect(leftover.map((m) => m.status)).toEqual(['scheduled']);
    expect(second).toEqual({ kind: 'absent' });
    const after = await probes(harness);
    expect(after.map((m) => m.status)).toEqual(['canceled', 'canceled']);
    expect(after.every((m) => m.date_sent === null)).toBe(true);
  });

  it('a probe create answered with an error leaves nothing and says why', async () => {
    // Prepare
    const clock = harness.clock;
    const provider = aProbingProvider(harness, clock);
    const { command } = await aTimedOutSend(harness, provider, clock);
    await harness.setFaults({ mode: 'error_5xx_before_accept', count: 1 });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_pending:probe_rejected:twilio_20503' });
    expect(await probes(harness)).toEqual([]);
  });

  it('a failed cancel still proves freshness; the probe is canceled later, even when no absence waits', async () => {
    // Prepare: the first cancel answers 500 without canceling
    const clock = harness.clock;
    let failed = false;
    const flaky = aRecordingFetch(async (url, init) => {
      const cancel = init?.method === 'POST' && /\/Messages\/SM[0-9a-f]{32}\.json$/.test(url);
      if (!cancel || failed) return undefined;
      failed = true;
      return Response.json({ code: 20500, message: 'Internal Server Error', status: 500 }, { status: 500 });
    });
    const provider = aProbingProvider(harness, clock, { fetch: flaky.fetch });
    const { command } = await aTimedOutSend(harness, provider, clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));
    const leftover = await probes(harness);
    clock.advance(60_000);
    // A lookup by sid (no absence waits): the pending cancel is retried all the same.
    const other = await provider.send(aSendCommand(clock));
    await provider.lookup({
      ...anAfterDeadlineRef(aSendCommand(clock), clock),
      messageId: other.kind === 'accepted' ? other.messageId : '',
    });
    clock.advance(8 * DAY_MS);

    // Assess
    expect(outcome).toEqual({ kind: 'absent' });
    expect(leftover.map((m) => m.status)).toEqual(['scheduled']);
    expect((await probes(harness)).map((m) => [m.status, m.date_sent])).toEqual([['canceled', null]]);
  });

  it('a leftover of a crashed process is found by the next process’s sweep and canceled', async () => {
    // Prepare: a scheduled probe nobody remembers, then a new process
    const clock = harness.clock;
    const leftover = await aLeftoverProbe(harness);
    const provider = aProbingProvider(harness, clock);
    const { command } = await aTimedOutSend(harness, provider, clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));
    clock.advance(8 * DAY_MS);

    // Assess
    expect(outcome).toEqual({ kind: 'absent' });
    const after = await probes(harness);
    expect(after.find((m) => m.sid === leftover)?.status).toBe('canceled');
    expect(after.every((m) => m.status === 'canceled' && m.date_sent === null)).toBe(true);
  });

  it('an old probe deleted by another process’s sweep is not taken for list lag', async () => {
    // Prepare: a probe proves one absence (too young then for the list-lag check); two hours later
    // it is gone (deleted by a sweep elsewhere)
    const clock = harness.clock;
    const events: unknown[] = [];
    const provider = aProbingProvider(harness, clock, {
      onEvent: (event) => events.push(event),
      listLagAllowanceMs: 30_000,
    });
    const { command } = await aTimedOutSend(harness, provider, clock);
    clock.advance(30_000);
    expect(
      await provider.lookup(anAfterDeadlineRef(command, clock, { callDeadline: command.deadline })),
    ).toEqual({ kind: 'absent' });
    const [old] = await probes(harness);
    clock.advance(2 * 3_600_000);
    expect((await api(harness, 'DELETE', `/${old?.sid}.json`)).status).toBe(204);

    // Act: a new quiet attempt
    const later = await aTimedOutSend(harness, provider, clock);
    clock.advance(30_000);
    const outcome = await provider.lookup(
      anAfterDeadlineRef(later.command, clock, { callDeadline: later.command.deadline }),
    );

    // Assess
    expect(outcome).toEqual({ kind: 'absent' });
    expect(events).toEqual([]);
  });

  it('a sweep that cannot read the probe number’s listing creates no probe', async () => {
    // Prepare
    const clock = harness.clock;
    const broken = aRecordingFetch(async (url, init) =>
      init?.method === 'GET' && url.includes(`To=${encodeURIComponent(PROBE_TO)}`)
        ? Response.json({ code: 20500, message: 'Internal Server Error', status: 500 }, { status: 500 })
        : undefined,
    );
    const provider = aProbingProvider(harness, clock, { fetch: broken.fetch });
    const { command } = await aTimedOutSend(harness, provider, clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_pending:probe_sweep:http_500' });
    expect(await probes(harness)).toEqual([]);
  });

  it('a probe stored under Message Redaction switches absence off, as any canary', async () => {
    // Prepare: the redaction fault hits the next message, the probe
    const clock = harness.clock;
    const provider = aProbingProvider(harness, clock);
    const { command } = await aTimedOutSend(harness, provider, clock);
    await harness.setFaults({ mode: 'redaction', count: 1 });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:redaction_observed' });
  });

  it('a probe is never taken for a user’s message, even in a listing of its own number', async () => {
    // Prepare: a probe exists; a lookup (misconfigured to the probe number) whose secret is a word of its body
    const clock = harness.clock;
    await aLeftoverProbe(harness);
    const provider = aProbingProvider(harness, clock);
    const command = aSendCommand(clock, { to: PROBE_TO });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock, { secret: 'probe' }));

    // Assess
    expect(outcome.kind).not.toBe('found');
  });

  it('no probe without redaction declared off', async () => {
    // Prepare
    const clock = harness.clock;
    const recording = aRecordingFetch();
    const provider = aProbingProvider(harness, clock, { redaction: 'on', fetch: recording.fetch });
    const command = aSendCommand(clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:redaction_on' });
    expect(recording.calls.filter((c) => c.method === 'POST')).toEqual([]);
  });

  it.each([
    [{ absenceProbeTo: PROBE_TO }, /PROVIDER_MESSAGING_SERVICE_SID/],
    [{ absenceProbeTo: '5005550010', messagingServiceSid: SERVICE_SID }, /E\.164/],
  ])('refuses to start with a probe it could not schedule safely: %j', (settings, message) => {
    // Act
    const build = () =>
      createTwilioProvider({
        baseUrl: harness.url,
        accountSid: ACCOUNT_SID,
        authToken: AUTH_TOKEN,
        from: '+15005550006',
        statusCallbackBase: `${harness.url}/_callbacks/status`,
        redaction: 'off',
        clock: harness.clock,
        ...settings,
      });

    // Assess
    expect(build).toThrow(InvalidConfigurationError);
    expect(build).toThrow(message);
  });
});

describe('Twilio simulator: Message Scheduling as Twilio documents it', () => {
  const harness = aSharedHarness();

  const sendAt = (aheadMs: number) =>
    new Date(harness.clock.now() + aheadMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const aSchedule = (overrides: Record<string, string> = {}) => ({
    To: PROBE_TO,
    MessagingServiceSid: SERVICE_SID,
    Body: 'scheduled',
    ScheduleType: 'fixed',
    SendAt: sendAt(DAY_MS),
    ...overrides,
  });

  it('creates a `scheduled` message (no date_sent), listed, cancelable once, never sent once canceled', async () => {
    // Act
    const created = await api(harness, 'POST', '.json', aSchedule());
    const sid = created.json.sid as string;
    const listed = await probes(harness);
    const canceled = await api(harness, 'POST', `/${sid}.json`, { Status: 'canceled' });
    const again = await api(harness, 'POST', `/${sid}.json`, { Status: 'canceled' });
    harness.clock.advance(2 * DAY_MS);
    const later = await api(harness, 'GET', `/${sid}.json`);

    // Assess
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      status: 'scheduled',
      date_sent: null,
      messaging_service_sid: SERVICE_SID,
    });
    expect(listed.map((m) => [m.sid, m.status])).toEqual([[sid, 'scheduled']]);
    expect(canceled).toMatchObject({ status: 200, json: { status: 'canceled' } });
    expect(again).toMatchObject({ status: 400, json: { code: 30409 } });
    expect(later.json).toMatchObject({ status: 'canceled', date_sent: null });
    // The request log tells a schedule from a send (chaos's post-expiry check skips the probe).
    expect((await harness.requests()).map((r) => r.scheduled)).toEqual([true]);
  });

  it('a scheduled message not canceled is sent at SendAt (the simulator is not kinder than Twilio)', async () => {
    // Prepare
    const created = await api(harness, 'POST', '.json', aSchedule({ SendAt: sendAt(20 * 60_000) }));

    // Act
    harness.clock.advance(20 * 60_000 + 200);
    const read = await api(harness, 'GET', `/${created.json.sid as string}.json`);

    // Assess
    expect(read.json).toMatchObject({ status: 'delivered' });
    expect(read.json.date_sent).not.toBeNull();
  });

  it('without a messaging service Twilio drops the schedule and sends at once', async () => {
    // Act
    const created = await api(harness, 'POST', '.json', {
      ...aSchedule(),
      MessagingServiceSid: '',
      From: '+15005550006',
    });
    harness.clock.advance(200);
    const read = await api(harness, 'GET', `/${created.json.sid as string}.json`);

    // Assess
    expect(created.json.status).toBe('queued');
    expect(read.json.status).toBe('delivered');
    expect((await harness.requests()).map((r) => r.scheduled)).toEqual([false]);
  });

  it.each([
    ['ScheduleType other than fixed', { ScheduleType: 'later' }, 35126],
    ['no SendAt', { SendAt: '' }, 35111],
    ['SendAt under 15 minutes ahead', { SendAt: 'soon' }, 35114],
    ['SendAt beyond 7 days', { SendAt: 'far' }, 35114],
    ['SendAt not in UTC ISO 8601', { SendAt: '2030-01-01 10:00:00' }, 35114],
  ] as [string, Record<string, string>, number][])(
    'rejects a schedule with %s (%j)',
    async (_, override, code) => {
      // Prepare
      const value =
        override.SendAt === 'soon'
          ? sendAt(10 * 60_000)
          : override.SendAt === 'far'
            ? sendAt(8 * DAY_MS)
            : override.SendAt;
      const form = aSchedule({ ...override, ...(value === undefined ? {} : { SendAt: value }) });

      // Act
      const response = await api(harness, 'POST', '.json', form);

      // Assess
      expect(response).toMatchObject({ status: 400, json: { code } });
      expect(await harness.ledger()).toEqual([]);
    },
  );

  it('cancels only `scheduled` messages, and `Status` takes only `canceled`', async () => {
    // Prepare
    const immediate = await api(harness, 'POST', '.json', {
      To: PROBE_TO,
      From: '+15005550006',
      Body: 'now',
    });
    const scheduled = await api(harness, 'POST', '.json', aSchedule());

    // Act
    const notScheduled = await api(harness, 'POST', `/${immediate.json.sid as string}.json`, {
      Status: 'canceled',
    });
    const badStatus = await api(harness, 'POST', `/${scheduled.json.sid as string}.json`, { Status: 'sent' });

    // Assess
    expect(notScheduled).toMatchObject({ status: 400, json: { code: 30409 } });
    expect(badStatus).toMatchObject({ status: 400, json: { code: 20001 } });
  });
});
