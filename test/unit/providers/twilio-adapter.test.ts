/**
 * The Twilio adapter against the real simulator over HTTP (in-process, port 0): every fault mode
 * at the socket level, both lookup paths, pagination, ValidityPeriod and privacy.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SendOutcome } from '../../../shared/domain/provider.js';
import {
  DEFAULT_CLOCK_SKEW_MS,
  MESSAGE_SID,
  parseStatusCallback,
} from '../../../shared/providers/twilio/index.js';
import { eventually } from '../../support/eventually.js';
import {
  ACCOUNT_SID,
  aClock,
  aClosedPortUrl,
  aLookupRef,
  anAfterDeadlineRef,
  aPhoneNumber,
  aProvider,
  aRecordingFetch,
  aSendCommand,
  primeCanary,
  type SimHarness,
  startHarness,
  TEST_TIMEOUT_MS,
} from './support.js';

const DELAYS = { sent: 100, delivered: 250 };

describe('Twilio adapter against the simulator', () => {
  let harness: SimHarness;

  beforeAll(async () => {
    harness = await startHarness({ statusDelaysMs: DELAYS });
  });

  afterAll(async () => {
    await harness.stop();
  });

  beforeEach(async () => {
    await harness.reset();
  });

  describe('send', () => {
    it('is accepted and leaves exactly one ledger entry carrying the client reference', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      const command = aSendCommand(clock);

      // Act
      const outcome = await provider.send(command);

      // Assess
      expect(outcome.kind).toBe('accepted');
      const messageId = outcome.kind === 'accepted' ? outcome.messageId : '';
      expect(messageId).toMatch(MESSAGE_SID);
      const ledger = await harness.ledger();
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({
        id: messageId,
        client_reference: command.clientReference,
        status: 'queued',
      });
      expect(ledger[0]?.destination_fingerprint).toMatch(/^sim1:[0-9a-f]{32}$/);
    });

    it.each([
      ['the command value', 600, 600],
      ['a fraction floored (never more than the token life)', 90.9, 90],
      ['capped at 36000 s', 86_400, 36_000],
      ['exactly 5 s (Twilio recommends more than 5)', 5, 5],
    ])('sends ValidityPeriod as %s', async (_, given, expected) => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);

      // Act
      const outcome = await provider.send(aSendCommand(clock, { validityPeriodSeconds: given }));

      // Assess
      expect(outcome).toMatchObject({ kind: 'accepted' });
      const [entry] = await harness.ledger();
      expect(entry?.validity_period_seconds).toBe(expected);
    });

    it.each([
      [
        'under one second of validity',
        { validityPeriodSeconds: 0.5 },
        { kind: 'not_sent_permanent', detail: 'no_validity_left' },
      ],
      [
        'under 5 s of validity (below what Twilio recommends)',
        { validityPeriodSeconds: 4.9 },
        { kind: 'not_sent_permanent', detail: 'no_validity_left' },
      ],
      [
        'a negative validity',
        { validityPeriodSeconds: -3 },
        { kind: 'not_sent_permanent', detail: 'no_validity_left' },
      ],
      [
        'a NaN validity',
        { validityPeriodSeconds: Number.NaN },
        { kind: 'not_sent_permanent', detail: 'invalid_validity_period' },
      ],
      [
        'a deadline already reached',
        { deadline: 0 },
        { kind: 'not_sent_retryable', detail: 'deadline_passed' },
      ],
    ] as const)('does not call the provider with %s', async (_, overrides, expected) => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      const command = aSendCommand(clock, overrides);

      // Act
      const outcome = await provider.send(command);

      // Assess
      expect(outcome).toEqual(expected);
      expect(await harness.requests()).toEqual([]);
    });

    it('asks for status callbacks that carry the client reference and a valid Twilio signature', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      const command = aSendCommand(clock);

      // Act
      const outcome = await provider.send(command);
      harness.clock.advance(DELAYS.delivered);
      const callbacks = await eventually(async () => {
        const posted = await harness.callbacks();
        expect(posted).toHaveLength(2);
        return posted;
      });

      // Assess
      expect(callbacks.map((c) => c.params.MessageStatus)).toEqual(['sent', 'delivered']);
      const last = callbacks.at(-1);
      const parsed = parseStatusCallback({
        body: new URLSearchParams(last?.params).toString(),
        query: last?.query ?? '',
      });
      expect(parsed).toEqual({
        ok: true,
        value: {
          messageSid: outcome.kind === 'accepted' ? outcome.messageId : '',
          status: 'delivered',
          providerStatus: 'delivered',
          clientReference: command.clientReference,
          errorCode: null,
        },
      });
      // The sink verified the signature over everything posted (To and From included, which it
      // does not keep); the conformance test checks the same with the official twilio helper.
      expect(callbacks.every((c) => c.signature_valid)).toBe(true);
    });

    it('classifies a refused connection as definitely not sent', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider({ url: await aClosedPortUrl() }, clock);

      // Act
      const outcome = await provider.send(aSendCommand(clock));

      // Assess
      expect(outcome).toEqual({ kind: 'not_sent_retryable', detail: 'connection_refused' });
    });
  });

  describe('fault modes at the socket level', () => {
    const cases: readonly {
      mode: string;
      expected: SendOutcome;
      ledger: number;
      times_out: boolean;
      plan?: Record<string, unknown>;
    }[] = [
      {
        mode: 'timeout_before_accept',
        expected: { kind: 'unknown', detail: 'timeout', timedOut: true },
        ledger: 0,
        times_out: true,
      },
      {
        mode: 'timeout_after_accept',
        expected: { kind: 'unknown', detail: 'timeout', timedOut: true },
        ledger: 1,
        times_out: true,
      },
      {
        mode: 'hang',
        expected: { kind: 'unknown', detail: 'timeout', timedOut: true },
        ledger: 0,
        times_out: true,
      },
      {
        mode: 'error_5xx_before_accept',
        expected: { kind: 'unknown', detail: 'twilio_20503', timedOut: false },
        ledger: 0,
        times_out: false,
      },
      {
        mode: 'error_5xx_after_accept',
        expected: { kind: 'unknown', detail: 'twilio_20500', timedOut: false },
        ledger: 1,
        times_out: false,
      },
      {
        mode: 'rate_limited',
        expected: { kind: 'not_sent_retryable', detail: 'rate_limited', retryAfterMs: 7_000 },
        ledger: 0,
        times_out: false,
        plan: { retry_after_seconds: 7 },
      },
      {
        mode: 'reject_permanent',
        expected: { kind: 'not_sent_permanent', detail: 'twilio_21211' },
        ledger: 0,
        times_out: false,
      },
    ];

    it.each(cases)(
      '$mode -> $expected.kind, $ledger ledger entry',
      async ({ mode, expected, ledger, times_out, plan }) => {
        // Prepare
        const clock = aClock();
        const provider = aProvider(harness, clock);
        const command = aSendCommand(clock, { deadline: clock.now() + TEST_TIMEOUT_MS });
        expect((await harness.setFaults({ mode, count: 1, ...plan })).status).toBe(200);

        // Act
        const started = performance.now();
        const outcome = await provider.send(command);
        const elapsed = performance.now() - started;

        // Assess
        expect(outcome).toEqual(expected);
        if (times_out) expect(elapsed).toBeGreaterThanOrEqual(TEST_TIMEOUT_MS - 20);
        expect(elapsed).toBeLessThan(TEST_TIMEOUT_MS + 2_000);
        const entries = await harness.ledger();
        expect(entries).toHaveLength(ledger);
        for (const entry of entries) expect(entry.client_reference).toBe(command.clientReference);
        const requests = await harness.requests();
        expect(requests).toHaveLength(1);
        expect(requests[0]).toMatchObject({
          client_reference: command.clientReference,
          fault: mode,
          outcome: ledger === 1 ? 'recorded' : 'not_recorded',
        });
      },
    );

    it('after timeout_after_accept, a lookup by client reference finds the message, later delivered', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      const command = aSendCommand(clock, { deadline: clock.now() + TEST_TIMEOUT_MS });
      await harness.setFaults({ mode: 'timeout_after_accept', count: 1 });
      const sent = await provider.send(command);

      // Act
      harness.clock.advance(DELAYS.delivered);
      const found = await provider.lookup(aLookupRef(command, clock));

      // Assess
      expect(sent).toMatchObject({ kind: 'unknown', timedOut: true });
      const [entry] = await harness.ledger();
      expect(found).toEqual({ kind: 'found', messageId: entry?.id, status: 'delivered' });
    });

    it('after error_5xx_before_accept, a content lookup after the call deadline proves absence', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      await primeCanary(provider, clock);
      const command = aSendCommand(clock);
      await harness.setFaults({ mode: 'error_5xx_before_accept', count: 1 });
      const sent = await provider.send(command);

      // Act
      const lookup = await provider.lookup(anAfterDeadlineRef(command, clock));

      // Assess
      expect(sent.kind).toBe('unknown');
      expect(lookup).toEqual({ kind: 'absent' });
    });

    it('hang holds lookups too: by sid and by reference are inconclusive, the control API still answers', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock, { lookupTimeoutMs: TEST_TIMEOUT_MS });
      const command = aSendCommand(clock);
      const accepted = await provider.send(command);
      const messageId = accepted.kind === 'accepted' ? accepted.messageId : 'none';
      await harness.setFaults({ mode: 'hang' });

      // Act
      const [bySid, byReference] = await Promise.all([
        provider.lookup(aLookupRef(command, clock, { messageId })),
        provider.lookup(aLookupRef(command, clock)),
      ]);
      const ledgerDuringHang = await harness.ledger();
      await harness.clearFaults();
      const afterClear = await provider.lookup(aLookupRef(command, clock, { messageId }));

      // Assess
      expect(accepted.kind).toBe('accepted');
      expect(bySid).toEqual({ kind: 'inconclusive', detail: 'timeout' });
      expect(byReference).toEqual({ kind: 'inconclusive', detail: 'timeout' });
      expect(ledgerDuringHang).toHaveLength(1);
      expect(afterClear).toMatchObject({ kind: 'found', messageId });
    });

    it('count limits the fault to that many sends', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      await harness.setFaults({ mode: 'error_5xx_before_accept', count: 2 });

      // Act
      const outcomes = [];
      for (let i = 0; i < 3; i += 1) outcomes.push(await provider.send(aSendCommand(clock)));

      // Assess
      expect(outcomes.map((o) => o.kind)).toEqual(['unknown', 'unknown', 'accepted']);
      expect(await harness.ledger()).toHaveLength(1);
    });

    it('applies an array of plans in order', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      await harness.setFaults([
        { mode: 'rate_limited', count: 1 },
        { mode: 'reject_permanent', count: 1 },
      ]);

      // Act
      const outcomes = [];
      for (let i = 0; i < 3; i += 1) outcomes.push(await provider.send(aSendCommand(clock)));

      // Assess
      expect(outcomes.map((o) => o.kind)).toEqual(['not_sent_retryable', 'not_sent_permanent', 'accepted']);
      expect(outcomes[0]).toMatchObject({ retryAfterMs: 1_000 });
    });

    it('probability 0 never fires, probability 1 always does', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);

      // Act
      await harness.setFaults({ mode: 'reject_permanent', probability: 0 });
      const never = [await provider.send(aSendCommand(clock)), await provider.send(aSendCommand(clock))];
      await harness.setFaults({ mode: 'reject_permanent', probability: 1 });
      const always = [await provider.send(aSendCommand(clock)), await provider.send(aSendCommand(clock))];

      // Assess
      expect(never.map((o) => o.kind)).toEqual(['accepted', 'accepted']);
      expect(always.map((o) => o.kind)).toEqual(['not_sent_permanent', 'not_sent_permanent']);
    });
  });

  describe('lookup by sid', () => {
    it('follows the status from pending to delivered', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      const command = aSendCommand(clock);
      const sent = await provider.send(command);
      const messageId = sent.kind === 'accepted' ? sent.messageId : 'none';
      const ref = aLookupRef(command, clock, { messageId });

      // Act
      const early = await provider.lookup(ref);
      harness.clock.advance(DELAYS.sent);
      const middle = await provider.lookup(ref);
      harness.clock.advance(DELAYS.delivered - DELAYS.sent);
      const late = await provider.lookup(ref);

      // Assess: the sid came back for this attempt, so the attempt is known
      const attempt = command.attempt;
      expect(early).toEqual({ kind: 'found', messageId, status: 'pending', attempt });
      expect(middle).toEqual({ kind: 'found', messageId, status: 'sent', attempt });
      expect(late).toEqual({ kind: 'found', messageId, status: 'delivered', attempt });
    });

    it('is inconclusive, never absent, for a sid the provider does not know', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      const command = aSendCommand(clock);

      // Act
      const outcome = await provider.lookup(aLookupRef(command, clock, { messageId: `SM${'f'.repeat(32)}` }));

      // Assess
      expect(outcome).toEqual({ kind: 'inconclusive', detail: 'sid_not_found' });
    });

    it('reads a sid with uppercase hex digits and a failed-in-queue status as not_sent', async () => {
      // Prepare: Twilio's sid pattern allows either case; 30001 is "queue overflow", never sent
      const clock = aClock();
      const upper = `SM${'ABCDEF0123456789'.repeat(2)}`;
      const fake = aRecordingFetch(async () =>
        Response.json({ sid: upper, status: 'failed', error_code: 30001, to: '+14155550100', body: 'x' }),
      );
      const provider = aProvider(harness, clock, { fetch: fake.fetch });
      const command = aSendCommand(clock);

      // Act
      const outcome = await provider.lookup(aLookupRef(command, clock, { messageId: upper }));

      // Assess
      expect(outcome).toEqual({
        kind: 'found',
        messageId: upper,
        status: 'not_sent',
        detail: 'twilio:30001',
        attempt: command.attempt,
      });
      expect(fake.calls.map((c) => c.url)).toEqual([
        `${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/${upper}.json`,
      ]);
    });

    it('is inconclusive when the provider cannot be reached', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider({ url: await aClosedPortUrl() }, clock);
      const command = aSendCommand(clock);

      // Act
      const outcome = await provider.lookup(aLookupRef(command, clock, { messageId: `SM${'f'.repeat(32)}` }));

      // Assess
      expect(outcome).toEqual({ kind: 'inconclusive', detail: 'transport_ECONNREFUSED' });
    });
  });

  describe('lookup by client reference', () => {
    it('finds the attempt among other messages to the same number', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      const to = aPhoneNumber();
      const before = await provider.send(aSendCommand(clock, { to }));
      const target = aSendCommand(clock, { to });
      const sent = await provider.send(target);
      const after = await provider.send(aSendCommand(clock, { to }));

      // Act
      const outcome = await provider.lookup(aLookupRef(target, clock));

      // Assess
      expect([before.kind, sent.kind, after.kind]).toEqual(['accepted', 'accepted', 'accepted']);
      expect(outcome).toEqual({
        kind: 'found',
        messageId: sent.kind === 'accepted' ? sent.messageId : '',
        status: 'pending',
      });
    });

    it("is absent after a complete, readable listing in which no message carries this key's secret", async () => {
      // Prepare: other keys' messages to the same number (another secret each)
      const clock = aClock();
      const provider = aProvider(harness, clock);
      const to = aPhoneNumber();
      await provider.send(aSendCommand(clock, { to }));
      await provider.send(aSendCommand(clock, { to }));
      const neverSent = aSendCommand(clock, { to });

      // Act
      const outcome = await provider.lookup(anAfterDeadlineRef(neverSent, clock));

      // Assess
      expect(outcome).toEqual({ kind: 'absent' });
    });

    it('is absent when nothing was ever sent to the number (once the canary has a sid)', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      await primeCanary(provider, clock);

      // Act
      const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

      // Assess
      expect(outcome).toEqual({ kind: 'absent' });
    });

    it('follows every page: finds the oldest of five messages with pages of two', async () => {
      // Prepare
      const clock = aClock();
      const recording = aRecordingFetch();
      const provider = aProvider(harness, clock, { lookupPageSize: 2, fetch: recording.fetch });
      const to = aPhoneNumber();
      const target = aSendCommand(clock, { to });
      const sent = await provider.send(target);
      for (let i = 0; i < 4; i += 1) await provider.send(aSendCommand(clock, { to }));
      recording.calls.length = 0;

      // Act
      const outcome = await provider.lookup(aLookupRef(target, clock));

      // Assess
      expect(outcome).toMatchObject({
        kind: 'found',
        messageId: sent.kind === 'accepted' ? sent.messageId : '',
      });
      expect(recording.calls.map((c) => c.method)).toEqual(['GET', 'GET', 'GET']);
    });

    it('follows every page before concluding absent', async () => {
      // Prepare
      const clock = aClock();
      const recording = aRecordingFetch();
      const provider = aProvider(harness, clock, { lookupPageSize: 2, fetch: recording.fetch });
      const to = aPhoneNumber();
      for (let i = 0; i < 5; i += 1) await provider.send(aSendCommand(clock, { to }));
      recording.calls.length = 0;

      // Act
      const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock, { to }), clock));

      // Assess: three pages, the canary's fetch, the list-lag probe (the first sid, on page 3), and
      // the account's three pages down to the window's start (no redacted message in it)
      expect(outcome).toEqual({ kind: 'absent' });
      expect(recording.calls).toHaveLength(10);
    });

    it('is inconclusive when a later page fails', async () => {
      // Prepare
      const clock = aClock();
      const failing = aRecordingFetch((_, init, call) =>
        init?.method === 'GET' && call === 7
          ? Promise.resolve(new Response('{}', { status: 500 }))
          : undefined,
      );
      const provider = aProvider(harness, clock, { lookupPageSize: 2, fetch: failing.fetch });
      const to = aPhoneNumber();
      for (let i = 0; i < 5; i += 1) await provider.send(aSendCommand(clock, { to }));

      // Act
      const outcome = await provider.lookup(aLookupRef(aSendCommand(clock, { to }), clock));

      // Assess
      expect(failing.calls.map((c) => c.method)).toEqual([...Array(5).fill('POST'), 'GET', 'GET']);
      expect(outcome).toEqual({ kind: 'inconclusive', detail: 'http_500' });
    });

    it('is inconclusive when the listing exceeds the page limit', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock, { lookupPageSize: 1, lookupMaxPages: 2 });
      const to = aPhoneNumber();
      for (let i = 0; i < 3; i += 1) await provider.send(aSendCommand(clock, { to }));

      // Act
      const outcome = await provider.lookup(aLookupRef(aSendCommand(clock, { to }), clock));

      // Assess
      expect(outcome).toEqual({ kind: 'inconclusive', detail: 'too_many_pages' });
    });

    it('ignores unreadable messages created before the attempt window (start minus the skew allowance)', async () => {
      // Prepare: bodies blanked in every read, but the message is older than the window
      const clock = aClock();
      const blanking = aRecordingFetch(async (url, init) => {
        if (init?.method !== 'GET' || !url.includes('Messages.json')) return undefined;
        const page = (await (await fetch(url, init)).json()) as { messages: Record<string, unknown>[] };
        for (const message of page.messages) message.body = '';
        return Response.json(page);
      });
      // The canary (the same old message) is trusted despite its age: this test is about the window.
      const provider = aProvider(harness, clock, { fetch: blanking.fetch, canarySkewMs: 3_600_000 });
      const to = aPhoneNumber();
      await provider.send(aSendCommand(clock, { to }));
      const laterAttempt = aSendCommand(clock, { to });
      clock.advance(DEFAULT_CLOCK_SKEW_MS + 60_000);

      // Act
      const outcome = await provider.lookup(
        anAfterDeadlineRef(laterAttempt, clock, { attemptStartedAt: clock.now() }),
      );

      // Assess
      expect(outcome).toEqual({ kind: 'absent' });
    });

    it('never follows a next page on another host', async () => {
      // Prepare
      const clock = aClock();
      const redirecting = aRecordingFetch(async (url, init) => {
        if (init?.method !== 'GET') return undefined;
        const page = (await (await fetch(url, init)).json()) as Record<string, unknown>;
        return Response.json({ ...page, next_page_uri: 'http://elsewhere.invalid/2010-04-01/steal' });
      });
      const provider = aProvider(harness, clock, { fetch: redirecting.fetch });
      const command = aSendCommand(clock);

      // Act
      const outcome = await provider.lookup(aLookupRef(command, clock));

      // Assess
      expect(outcome).toEqual({ kind: 'inconclusive', detail: 'foreign_next_page' });
      expect(redirecting.calls.every((c) => c.url.startsWith(harness.url))).toBe(true);
    });

    it('is inconclusive when the provider cannot be reached', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider({ url: await aClosedPortUrl() }, clock);

      // Act
      const outcome = await provider.lookup(aLookupRef(aSendCommand(clock), clock));

      // Assess
      expect(outcome).toEqual({ kind: 'inconclusive', detail: 'transport_ECONNREFUSED' });
    });

    it('lookups of every kind never send', async () => {
      // Prepare
      const clock = aClock();
      const recording = aRecordingFetch();
      const provider = aProvider(harness, clock, { fetch: recording.fetch });
      const command = aSendCommand(clock);
      const sent = await provider.send(command);
      recording.calls.length = 0;

      // Act
      await provider.lookup(aLookupRef(command, clock));
      await provider.lookup(
        aLookupRef(command, clock, { messageId: sent.kind === 'accepted' ? sent.messageId : 'x' }),
      );
      await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

      // Assess: the last one lists, asks the canary (a fetch and a listing), then scans the account's window
      expect(recording.calls.map((c) => c.method)).toEqual(['GET', 'GET', 'GET', 'GET', 'GET', 'GET']);
      expect(await harness.ledger()).toHaveLength(1);
      expect(await harness.requests()).toHaveLength(1);
    });
  });

  describe('privacy', () => {
    it('no phone number or message body reaches the log lines, ledger, request log or callbacks', async () => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);
      const commands = [aSendCommand(clock), aSendCommand(clock), aSendCommand(clock), aSendCommand(clock)];
      harness.logs.length = 0;

      // Act
      const accepted = await provider.send(commands[0] ?? aSendCommand(clock));
      await harness.setFaults({ mode: 'timeout_after_accept', count: 1 });
      await provider.send({
        ...(commands[1] ?? aSendCommand(clock)),
        deadline: clock.now() + TEST_TIMEOUT_MS,
      });
      await harness.setFaults({ mode: 'reject_permanent', count: 1 });
      await provider.send(commands[2] ?? aSendCommand(clock));
      await provider.send({ ...(commands[3] ?? aSendCommand(clock)), to: '4155550100' }); // invalid: 400
      harness.clock.advance(DELAYS.delivered);
      // Both accepted messages' callbacks (sent and delivered) reached the sink.
      await eventually(async () => expect(await harness.callbacks()).toHaveLength(4));
      const exposed = [
        ...harness.logs,
        JSON.stringify(await harness.ledger()),
        JSON.stringify(await harness.requests()),
        JSON.stringify(await harness.callbacks()),
      ].join('\n');

      // Assess: the logs did say something (so the check below is not vacuous)
      expect(accepted.kind).toBe('accepted');
      expect(exposed).toContain(accepted.kind === 'accepted' ? accepted.messageId : 'missing');
      expect(exposed).toContain(encodeURIComponent(commands[0]?.clientReference ?? 'missing').slice(0, 8));
      for (const command of commands) {
        expect(exposed).not.toContain(command.to);
        expect(exposed).not.toContain(command.to.slice(2)); // national number without "+1"
        expect(exposed).not.toContain(command.body);
        expect(exposed).not.toContain(command.body.slice(-6)); // the reset code itself
      }
      expect(exposed).not.toContain('4155550100');
    });
  });
});

describe('Twilio adapter: ValidityPeriod and queued messages (slow sending simulator)', () => {
  let harness: SimHarness;

  beforeAll(async () => {
    harness = await startHarness({ statusDelaysMs: { sent: 8_000, delivered: 9_000 } });
  });

  afterAll(async () => {
    await harness.stop();
  });

  it('finds a queued, not yet sent message by client reference (no date_sent filter)', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock);
    const command = aSendCommand(clock);
    const sent = await provider.send(command);

    // Act
    const outcome = await provider.lookup(aLookupRef(command, clock));

    // Assess
    expect(outcome).toEqual({
      kind: 'found',
      messageId: sent.kind === 'accepted' ? sent.messageId : '',
      status: 'pending',
    });
  });

  it('a message whose ValidityPeriod ends in the queue reads as not_sent (30036: Twilio does not send it)', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock);
    const command = aSendCommand(clock, { validityPeriodSeconds: 5 });
    const sent = await provider.send(command);
    const messageId = sent.kind === 'accepted' ? sent.messageId : 'none';

    // Act
    const before = await provider.lookup(aLookupRef(command, clock, { messageId }));
    harness.clock.advance(5_000);
    const after = await provider.lookup(aLookupRef(command, clock, { messageId }));

    // Assess
    expect(before).toEqual({ kind: 'found', messageId, status: 'pending', attempt: 1 });
    expect(after).toEqual({
      kind: 'found',
      messageId,
      status: 'not_sent',
      attempt: 1,
      detail: 'twilio:30036',
    });
    const entry = (await harness.ledger()).find((e) => e.id === messageId);
    expect(entry).toMatchObject({ status: 'failed', error_code: 30036 });
  });
});
