/**
 * When the Twilio adapter may say `absent`, and when it must not: every condition of the absence
 * proof, content matching, messaging services, configuration errors and the start-up checks.
 * Against the real simulator over HTTP, with a rewriting fetch where Twilio's behaviour (masked
 * numbers, re-encoded bodies, odd pages) is easier to stage than to simulate.
 */
import { describe, expect, it } from 'vitest';
import { providerFor } from '../../../shared/composition/provider.js';
import { loadConfig } from '../../../shared/config.js';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import {
  bodyCarriesSecret,
  createTwilioProvider,
  type TwilioAdapterEvent,
} from '../../../shared/providers/twilio/index.js';
import { ManualClock } from '../../support/manual-clock.js';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  aClock,
  anAfterDeadlineRef,
  aPhoneNumber,
  aProvider,
  aRecordingFetch,
  aSendCommand,
  aSharedHarness,
  basicAuth,
  FROM,
  primeCanary,
  QUICK_STATUS_DELAYS_MS,
  type SimHarness,
  startHarness,
  TEST_TIMEOUT_MS,
} from './support.js';

const SERVICE_SID = `MG${'b'.repeat(32)}`;

/** A fetch that rewrites every listed message (list pages only) before the adapter reads it. */
function rewritingListings(rewrite: (message: Record<string, unknown>) => void) {
  return aRecordingFetch(async (url, init) => {
    if (init?.method !== 'GET' || !new URL(url).pathname.endsWith('/Messages.json')) return undefined;
    const page = (await (await fetch(url, init)).json()) as { messages: Record<string, unknown>[] };
    for (const message of page.messages) rewrite(message);
    return Response.json(page);
  });
}

describe('Twilio adapter: the absence proof', () => {
  const harness = aSharedHarness();

  it('is absent when every condition holds (the baseline the cases below break one by one)', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock);
    await primeCanary(provider, clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'absent' });
  });

  it('redaction on (the default declaration) disables absence', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock, { redaction: 'on' });
    await primeCanary(provider, clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:redaction_on' });
  });

  it('is redaction on when nothing is declared', async () => {
    // Prepare
    const clock = aClock();
    const provider = createTwilioProvider({
      baseUrl: harness.url,
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      from: FROM,
      statusCallbackBase: `${harness.url}/_callbacks/status`,
      listLagAllowanceMs: 0,
      clock,
    });
    await primeCanary(provider, clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:redaction_on' });
  });

  it('without a canary sid (nothing sent or found in this process) there is no absence', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:no_canary' });
  });

  it('a canary read with a masked number switches absence off for the process, with one event', async () => {
    // Prepare: the canary message is stored under Message Redaction
    const clock = aClock();
    const events: TwilioAdapterEvent[] = [];
    const provider = aProvider(harness, clock, { onEvent: (event) => events.push(event) });
    await harness.setFaults({ mode: 'redaction', count: 1 });
    const canary = await primeCanary(provider, clock);

    // Act
    const first = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));
    await primeCanary(provider, clock); // a clean message later does not switch it back on
    clock.advance(120_000);
    const later = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(first).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:redaction_observed' });
    expect(later).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:redaction_observed' });
    expect(events).toEqual([{ kind: 'redaction_observed', messageSid: canary, why: 'masked_to' }]);
    expect(JSON.stringify(events)).not.toMatch(/\+1415/);
  });

  it('a message redacted while its send timed out is never proven absent, although redaction is off again', async () => {
    // Prepare: Message Redaction is on for the attempt's message only (its answer was lost, so the
    // adapter never saw its sid); a later message of ours, the canary, reads clean.
    const clock = aClock();
    const events: TwilioAdapterEvent[] = [];
    const provider = aProvider(harness, clock, { onEvent: (event) => events.push(event) });
    const attempt = aSendCommand(clock);
    await harness.setFaults({ mode: 'redaction', count: 1 });
    const accepted = await fetch(`${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`, {
      method: 'POST',
      headers: { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ To: attempt.to, From: FROM, Body: attempt.body }).toString(),
    });
    expect(accepted.status).toBe(201);
    await primeCanary(provider, clock);

    // Act: the listing by To cannot show a message stored with a masked number
    const outcome = await provider.lookup(anAfterDeadlineRef(attempt, clock));

    // Assess: the account-wide scan of the attempt's window finds the redacted message
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:redaction_in_window' });
    expect(events).toMatchObject([{ kind: 'redaction_observed', why: 'masked_to' }]);
  });

  it('a canary read with a blank body (POST Body="") switches absence off', async () => {
    // Prepare
    const clock = aClock();
    const events: TwilioAdapterEvent[] = [];
    const provider = aProvider(harness, clock, { onEvent: (event) => events.push(event) });
    const canary = await primeCanary(provider, clock);
    await fetch(`${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/${canary}.json`, {
      method: 'POST',
      headers: { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Body=',
    });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:redaction_observed' });
    expect(events).toMatchObject([{ kind: 'redaction_observed', why: 'blank_body' }]);
  });

  it('a deleted canary confirms nothing', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock);
    const canary = await primeCanary(provider, clock);
    await fetch(`${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/${canary}.json`, {
      method: 'DELETE',
      headers: { authorization: basicAuth() },
    });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:canary_gone' });
  });

  it('a canary created before the attempt cannot speak for it, even when a verdict is cached', async () => {
    // Prepare: an unredacted canary message created now; redaction could be switched on after it
    // (Twilio redacts messages as they are processed, so an old message would still read clean).
    const clock = aClock();
    const provider = aProvider(harness, clock, { canaryIntervalMs: 3_600_000 });
    await primeCanary(provider, clock);
    const before = clock.now();

    // Act
    const forOlderAttempt = await provider.lookup(
      anAfterDeadlineRef(aSendCommand(clock), clock, { attemptStartedAt: before - 10_000 }),
    );
    const forNewerAttempt = await provider.lookup(
      anAfterDeadlineRef(aSendCommand(clock), clock, { attemptStartedAt: before + 120_000 }),
    );

    // Assess: the first confirms (and caches) the canary; the cache does not carry over to the newer attempt.
    expect(forOlderAttempt).toEqual({ kind: 'absent' });
    expect(forNewerAttempt).toEqual({
      kind: 'inconclusive',
      detail: 'absence_pending:canary_older_than_attempt',
    });
  });

  it('a cached canary verdict read before the attempt’s call deadline is read again', async () => {
    // Prepare
    const clock = aClock();
    const recording = aRecordingFetch();
    const provider = aProvider(harness, clock, { fetch: recording.fetch, canaryIntervalMs: 3_600_000 });
    const canary = await primeCanary(provider, clock);
    const canaryFetches = () => recording.calls.filter((c) => c.url.includes(`${canary}.json`)).length;
    const start = clock.now() - 1_000;
    await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock, { attemptStartedAt: start }));

    // Act: a second attempt whose call ended after that read
    clock.advance(5_000);
    await provider.lookup(
      anAfterDeadlineRef(aSendCommand(clock), clock, {
        attemptStartedAt: start,
        callDeadline: clock.now() - 1,
      }),
    );

    // Assess
    expect(canaryFetches()).toBe(2);
  });

  it('asks the canary at most once per interval', async () => {
    // Prepare
    const clock = aClock();
    const recording = aRecordingFetch();
    const provider = aProvider(harness, clock, { fetch: recording.fetch, canaryIntervalMs: 60_000 });
    const canary = await primeCanary(provider, clock);
    const canaryFetches = () => recording.calls.filter((c) => c.url.includes(`${canary}.json`)).length;

    // Act
    await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));
    await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));
    const withinInterval = canaryFetches();
    clock.advance(60_000);
    await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(withinInterval).toBe(1);
    expect(canaryFetches()).toBe(2);
  });

  it('a masked number in the window forbids absence (Message Redaction masks the last 4 digits)', async () => {
    // Prepare
    const clock = aClock();
    const masking = rewritingListings((message) => {
      message.to = `${String(message.to).slice(0, -4)}XXXX`;
    });
    const provider = aProvider(harness, clock, { fetch: masking.fetch });
    await primeCanary(provider, clock);
    const to = aPhoneNumber();
    await provider.send(aSendCommand(clock, { to }));

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock, { to }), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'content:masked_number' });
  });

  it('a blank body in the window forbids absence', async () => {
    // Prepare: another message to the number, its body redacted through the API
    const clock = aClock();
    const provider = aProvider(harness, clock);
    await primeCanary(provider, clock);
    const to = aPhoneNumber();
    const other = await provider.send(aSendCommand(clock, { to }));
    const sid = other.kind === 'accepted' ? other.messageId : 'none';
    await fetch(`${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/${sid}.json`, {
      method: 'POST',
      headers: { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Body=',
    });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock, { to }), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'content:blank_body' });
  });

  it.each([
    [
      'a page that links to itself',
      (page: Record<string, unknown>) => ({ ...page, next_page_uri: page.uri }),
      'pagination_loop',
    ],
    [
      'a page without a messages array',
      (page: Record<string, unknown>) => ({ ...page, messages: 'none' }),
      'unreadable_page',
    ],
    [
      'a message that is not an object',
      (page: Record<string, unknown>) => ({ ...page, messages: [42] }),
      'content:unreadable_message',
    ],
  ])('an incomplete listing forbids absence: %s', async (_, rewrite, detail) => {
    // Prepare
    const clock = aClock();
    const odd = aRecordingFetch(async (url, init) => {
      if (init?.method !== 'GET' || !new URL(url).pathname.endsWith('/Messages.json')) return undefined;
      return Response.json(rewrite((await (await fetch(url, init)).json()) as Record<string, unknown>));
    });
    const provider = aProvider(harness, clock, { fetch: odd.fetch });
    await primeCanary(provider, clock);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail });
  });

  it.each([[''], ['123']])(
    'without a usable secret (%j) nothing is matched and nothing is absent',
    async (secret) => {
      // Prepare
      const clock = aClock();
      const recording = aRecordingFetch();
      const provider = aProvider(harness, clock, { fetch: recording.fetch });
      await primeCanary(provider, clock);
      recording.calls.length = 0;

      // Act
      const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock, { secret }));

      // Assess
      expect(outcome).toEqual({ kind: 'inconclusive', detail: 'content:no_secret' });
      expect(recording.calls).toEqual([]);
    },
  );

  it('a listing that runs out of time is inconclusive', async () => {
    // Prepare: the listing answers only when the adapter's own lookup deadline aborts it
    const clock = aClock();
    const stalled = aRecordingFetch((_, init) => {
      if (init?.method !== 'GET') return undefined;
      return new Promise<Response>((_resolve, reject) => {
        const signal = init.signal;
        if (!signal) return reject(new Error('the adapter gave the listing no deadline'));
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    });
    const provider = aProvider(harness, clock, { fetch: stalled.fetch, lookupTimeoutMs: TEST_TIMEOUT_MS });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'timeout' });
    expect(stalled.calls).toHaveLength(1);
  });

  it('before the call deadline plus the list-lag allowance, no listing counts towards absence', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock, { listLagAllowanceMs: 30_000 });
    await primeCanary(provider, clock);
    const command = aSendCommand(clock);
    const ref = anAfterDeadlineRef(command, clock, { callDeadline: clock.now() - 10_000 });

    // Act
    const early = await provider.lookup(ref);
    clock.advance(20_001);
    const late = await provider.lookup(ref);

    // Assess
    expect(early).toEqual({ kind: 'inconclusive', detail: 'absence_pending:list_lag_allowance' });
    expect(late).toEqual({ kind: 'absent' });
  });

  it('list lag longer than the settle time: two reads a settle time apart are never both absent', async () => {
    // Prepare: the send timed out after acceptance, and the message lags behind list reads; the
    // adapter and the simulator share one clock
    const clock = harness.clock;
    const settleMs = 300;
    const lagMs = 1_200;
    const provider = aProvider(harness, clock, { listLagAllowanceMs: 2_000 });
    await primeCanary(provider, clock);
    await harness.setFaults([
      { mode: 'timeout_after_accept', count: 1 },
      { mode: 'list_lag', ms: lagMs, count: 1 },
    ]);
    const command = aSendCommand(clock, { deadline: clock.now() + TEST_TIMEOUT_MS });
    const sent = await provider.send(command);
    clock.advance(TEST_TIMEOUT_MS);
    const ref = anAfterDeadlineRef(command, clock);

    // Act: the reconciler's two reads, settle apart, after the call deadline
    const first = await provider.lookup(ref);
    clock.advance(settleMs);
    const second = await provider.lookup(ref);
    clock.advance(lagMs);
    const afterLag = await provider.lookup(ref);

    // Assess
    expect(sent).toMatchObject({ kind: 'unknown', timedOut: true });
    expect([first.kind, second.kind]).not.toEqual(['absent', 'absent']);
    expect(first).toEqual({ kind: 'inconclusive', detail: 'absence_pending:list_lag_allowance' });
    expect(second).toEqual({ kind: 'inconclusive', detail: 'absence_pending:list_lag_allowance' });
    const [entry] = (await harness.ledger()).filter((e) => e.client_reference === command.clientReference);
    expect(afterLag).toMatchObject({ kind: 'found', messageId: entry?.id });
  });

  it("a canary missing from its own number's listing past the allowance switches absence off (list lag observed)", async () => {
    // Prepare: the canary message itself lags behind list reads
    const clock = aClock();
    const events: TwilioAdapterEvent[] = [];
    const provider = aProvider(harness, clock, { onEvent: (event) => events.push(event) });
    await harness.setFaults({ mode: 'list_lag', ms: 5_000, count: 1 });
    const canary = await primeCanary(provider, clock);
    clock.advance(1_000);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:list_lag_observed' });
    expect(events).toEqual([{ kind: 'list_lag_observed', messageSid: canary, ageMs: 1_000 }]);
  });
});

describe('Twilio adapter: the window scan in either list order', () => {
  it.each(['date_sent', 'date_created'] as const)(
    'a message created before the window but queued until after it does not end the scan (%s order)',
    async (listOrder) => {
      // Prepare: an older message waits 200 s in Twilio's queue; meanwhile the attempt's message is
      // stored redacted (its answer lost) and sent at once. Listed by date_sent, the older message
      // now comes first, ahead of the redacted one.
      const harness = await startHarness({ statusDelaysMs: QUICK_STATUS_DELAYS_MS, listOrder });
      try {
        const clock = harness.clock;
        const provider = aProvider(harness, clock);
        await harness.setFaults({ mode: 'queue_delay', ms: 200_000, count: 1 });
        const queued = await provider.send(aSendCommand(clock));
        expect(queued.kind).toBe('accepted');
        clock.advance(100_000);
        const attempt = aSendCommand(clock);
        const attemptStartedAt = clock.now() - 1_000;
        await harness.setFaults({ mode: 'redaction', count: 1 });
        const stored = await fetch(`${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`, {
          method: 'POST',
          headers: { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ To: attempt.to, From: FROM, Body: attempt.body }).toString(),
        });
        expect(stored.status).toBe(201);
        clock.advance(150_000);
        await primeCanary(provider, clock);

        // Act
        const outcome = await provider.lookup(anAfterDeadlineRef(attempt, clock, { attemptStartedAt }));

        // Assess: the scan read past the queued message (created before the window) to the redacted one
        expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:redaction_in_window' });
      } finally {
        await harness.stop();
      }
    },
  );

  it('lists by date_sent by default: a message sent late lists before one created after it', async () => {
    // Prepare
    const harness = await startHarness({ statusDelaysMs: QUICK_STATUS_DELAYS_MS });
    try {
      const clock = harness.clock;
      const provider = aProvider(harness, clock);
      await harness.setFaults({ mode: 'queue_delay', ms: 10_000, count: 1 });
      const late = await provider.send(aSendCommand(clock));
      clock.advance(1_000);
      const prompt = await provider.send(aSendCommand(clock));
      clock.advance(1_000);
      const whileQueued = await listSids(harness);
      clock.advance(10_000);

      // Act
      const afterSend = await listSids(harness);

      // Assess: queued (no date_sent) first; once sent, the latest date_sent first
      const ids = [late, prompt].map((o) => (o.kind === 'accepted' ? o.messageId : ''));
      expect(whileQueued).toEqual([ids[0], ids[1]]);
      expect(afterSend).toEqual([ids[0], ids[1]]);
    } finally {
      await harness.stop();
    }
  });
});

/** The sids of the account's listing, in the order the simulator lists them. */
async function listSids(harness: SimHarness): Promise<string[]> {
  const response = await fetch(`${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`, {
    headers: { authorization: basicAuth() },
  });
  const page = (await response.json()) as { messages: { sid: string }[] };
  return page.messages.map((m) => m.sid);
}

describe('Twilio adapter: the list-lag probe under a busy sender', () => {
  const harness = aSharedHarness({ resetBeforeEach: false });

  it('keeps probing the first sid it saw although newer sids keep arriving', async () => {
    // Prepare: the first message lags behind list reads; later ones do not
    const clock = aClock();
    const events: TwilioAdapterEvent[] = [];
    const provider = aProvider(harness, clock, {
      listLagAllowanceMs: 500,
      onEvent: (event) => events.push(event),
    });
    await harness.setFaults({ mode: 'list_lag', ms: 10_000, count: 1 });
    const lagging = await primeCanary(provider, clock);
    clock.advance(600);
    await primeCanary(provider, clock); // newer, and younger than the allowance

    // Act
    const outcome = await provider.lookup(
      anAfterDeadlineRef(aSendCommand(clock), clock, { callDeadline: clock.now() - 1_000 }),
    );

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'absence_disabled:list_lag_observed' });
    expect(events).toEqual([{ kind: 'list_lag_observed', messageSid: lagging, ageMs: 600 }]);
  });
});

describe('Twilio adapter: content matching', () => {
  const harness = aSharedHarness();

  it('finds the secret inside a body a messaging service re-encoded', async () => {
    // Prepare: smart encoding swaps punctuation, a prefix is added; the code itself survives
    const clock = aClock();
    const reencoding = rewritingListings((message) => {
      message.body = `[Acme] ${String(message.body).replace('code is', 'code is:').replace(/ /g, '\u00a0')}`;
    });
    const provider = aProvider(harness, clock, { fetch: reencoding.fetch });
    const command = aSendCommand(clock);
    await harness.setFaults({ mode: 'timeout_after_accept', count: 1 });
    await provider.send({ ...command, deadline: clock.now() + TEST_TIMEOUT_MS });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));

    // Assess
    const [entry] = await harness.ledger();
    expect(outcome).toEqual({ kind: 'found', messageId: entry?.id, status: expect.any(String) });
  });

  it("does not match another key's message to the same number, even when its code contains ours", async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock);
    await primeCanary(provider, clock);
    const to = aPhoneNumber();
    await provider.send(aSendCommand(clock, { to, body: 'Your password reset code is 483920' }));
    const ours = aSendCommand(clock, { to, body: 'Your password reset code is 48392' });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(ours, clock, { secret: '48392' }));

    // Assess
    expect(outcome).toEqual({ kind: 'absent' });
  });

  it('finds an earlier attempt of the key outside the window (any attempt counts), without naming the attempt', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock);
    const first = aSendCommand(clock);
    const sent = await provider.send(first);
    clock.advance(30 * 60_000);

    // Act
    const outcome = await provider.lookup(
      anAfterDeadlineRef({ ...first, attempt: 2 }, clock, { attemptStartedAt: clock.now() }),
    );

    // Assess
    expect(outcome).toEqual({
      kind: 'found',
      messageId: sent.kind === 'accepted' ? sent.messageId : '',
      status: 'pending',
    });
  });

  it.each([
    ['off', { kind: 'found', status: 'not_sent', detail: 'twilio:30001' }],
    // "Only never-sent messages carry the secret" is a negative claim: it needs the absence proof.
    ['on', { kind: 'inconclusive', detail: 'content:not_sent_only:absence_disabled:redaction_on' }],
  ] as const)(
    'with redaction %s, a message that failed in the queue (fail_not_sent) reads as %j',
    async (redaction, expected) => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock, { redaction });
      await primeCanary(provider, clock);
      await harness.setFaults([
        { mode: 'timeout_after_accept', count: 1 },
        { mode: 'fail_not_sent', count: 1, error_code: 30001 },
      ]);
      const command = aSendCommand(clock, { deadline: clock.now() + TEST_TIMEOUT_MS });
      await provider.send(command);
      harness.clock.advance(50);

      // Act
      const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));

      // Assess
      const entry = (await harness.ledger()).find((e) => e.client_reference === command.clientReference);
      expect(entry).toMatchObject({ status: 'failed', error_code: 30001 });
      expect(outcome).toEqual(expected.kind === 'found' ? { ...expected, messageId: entry?.id } : expected);
    },
  );

  it('prefers a match that may have reached the user over a newer not-sent one', async () => {
    // Prepare: attempt 1 delivered, attempt 2 (same secret) failed in the queue
    const clock = aClock();
    const provider = aProvider(harness, clock);
    const command = aSendCommand(clock);
    const delivered = await provider.send(command);
    await harness.setFaults({ mode: 'fail_not_sent', count: 1 });
    await provider.send({ ...command, attempt: 2 });
    harness.clock.advance(100);

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef({ ...command, attempt: 2 }, clock));

    // Assess
    expect(outcome).toEqual({
      kind: 'found',
      messageId: delivered.kind === 'accepted' ? delivered.messageId : '',
      status: 'delivered',
    });
  });

  it.each([
    ['483920', 'Your code is 483920.', true],
    ['483920', 'Your code is 483920', true],
    ['483920', '483920 is your code', true],
    ['48392', 'Your code is 483920', false],
    ['83920', 'Your code is 483920', false],
    ['https://x.example/r?t=abc', 'Reset: https://x.example/r?t=abc now', true],
    ['https://x.example/r?t=abc', 'Reset: https://x.example/r?t=abcd', false],
    ['', 'anything', false],
  ])('bodyCarriesSecret(%j) in %j is %s', (secret, body, expected) => {
    // Act + Assess
    expect(bodyCarriesSecret(body, secret)).toBe(expected);
  });
});

describe('Twilio adapter: sender and configuration', () => {
  const harness = aSharedHarness();

  it('sends MessagingServiceSid instead of From, and lists by To alone (Twilio has no service filter)', async () => {
    // Prepare
    const clock = aClock();
    const bodies: string[] = [];
    const recording = aRecordingFetch(async (_, init) => {
      if (init?.method === 'POST') bodies.push(String(init.body));
      return undefined;
    });
    const provider = createTwilioProvider({
      baseUrl: harness.url,
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      messagingServiceSid: SERVICE_SID,
      statusCallbackBase: `${harness.url}/_callbacks/status`,
      redaction: 'off',
      listLagAllowanceMs: 0,
      clock,
      fetch: recording.fetch,
    });
    const command = aSendCommand(clock);
    await harness.setFaults({ mode: 'timeout_after_accept', count: 1 });
    await provider.send({ ...command, deadline: clock.now() + TEST_TIMEOUT_MS });

    // Act
    const outcome = await provider.lookup(anAfterDeadlineRef(command, clock));

    // Assess
    const form = new URLSearchParams(bodies[0]);
    expect(form.get('MessagingServiceSid')).toBe(SERVICE_SID);
    expect(form.has('From')).toBe(false);
    const listing = new URL(recording.calls.find((c) => c.url.includes('Messages.json?'))?.url ?? '');
    expect([...listing.searchParams.keys()].sort()).toEqual(['PageSize', 'To']);
    const [entry] = await harness.ledger();
    expect(outcome).toMatchObject({ kind: 'found', messageId: entry?.id });
    expect(entry?.messaging_service_sid).toBe(SERVICE_SID);
  });

  it('lists by To and From when it sends from a fixed number', async () => {
    // Prepare
    const clock = aClock();
    const recording = aRecordingFetch();
    const provider = aProvider(harness, clock, { fetch: recording.fetch });

    // Act
    await provider.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    const listing = new URL(recording.calls[0]?.url ?? '');
    expect(listing.searchParams.get('From')).toBe(FROM);
    expect(listing.searchParams.has('DateSent')).toBe(false);
  });

  it('puts the client reference, URL-encoded, on the status callback base', async () => {
    // Prepare
    const clock = aClock();
    const bodies: string[] = [];
    const recording = aRecordingFetch(async (_, init) => {
      if (init?.method === 'POST') bodies.push(String(init.body));
      return undefined;
    });
    const provider = aProvider(harness, clock, {
      fetch: recording.fetch,
      statusCallbackBase: 'https://api.example.com/v1/receipts/twilio',
    });
    const command = aSendCommand(clock);

    // Act
    await provider.send(command);

    // Assess
    const callback = new URLSearchParams(bodies[0]).get('StatusCallback') ?? '';
    expect(callback).toBe(
      `https://api.example.com/v1/receipts/twilio?client_reference=${encodeURIComponent(command.clientReference)}`,
    );
  });

  it('a send to +15005550003 (Twilio error 21408, geo permissions) is not sent, permanent: never retried', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock);

    // Act
    const outcome = await provider.send(aSendCommand(clock, { to: '+15005550003' }));

    // Assess
    expect(outcome).toEqual({ kind: 'not_sent_permanent', detail: 'twilio:21408' });
  });

  it.each([['+15005550002', 21612]])(
    'a send to %s (Twilio error %i) is our configuration: retryable, with its own detail',
    async (to, code) => {
      // Prepare
      const clock = aClock();
      const provider = aProvider(harness, clock);

      // Act
      const outcome = await provider.send(aSendCommand(clock, { to }));

      // Assess
      expect(outcome).toEqual({ kind: 'not_sent_retryable', detail: `twilio:config:${code}` });
    },
  );

  it.each([
    ['no status callback base', { statusCallbackBase: '' }, /PROVIDER_STATUS_CALLBACK_BASE/],
    ['a status callback base that is not http(s)', { statusCallbackBase: 'ftp://x' }, /http\(s\)/],
    ['neither From nor a messaging service', { from: '' }, /PROVIDER_FROM or PROVIDER_MESSAGING_SERVICE_SID/],
    ['a malformed messaging service sid', { messagingServiceSid: 'MG123' }, /PROVIDER_MESSAGING_SERVICE_SID/],
  ])('refuses to start with %s', (_, overrides, message) => {
    // Prepare
    const clock = new ManualClock(0);

    // Act
    const start = () =>
      createTwilioProvider({
        baseUrl: harness.url,
        accountSid: ACCOUNT_SID,
        authToken: AUTH_TOKEN,
        from: FROM,
        statusCallbackBase: `${harness.url}/_callbacks/status`,
        clock,
        ...overrides,
      });

    // Assess
    expect(start).toThrow(InvalidConfigurationError);
    expect(start).toThrow(message);
  });

  it('the composed provider refuses to start for PROVIDER=twilio without PROVIDER_STATUS_CALLBACK_BASE', () => {
    // Prepare
    const config = loadConfig({ PROVIDER: 'twilio', PROVIDER_BASE_URL: 'https://api.twilio.com' });
    const fingerprinter = createFingerprinter(Buffer.alloc(32, 1));

    // Act
    const start = () => providerFor(config, new ManualClock(0), fingerprinter);

    // Assess
    expect(start).toThrow(/PROVIDER_STATUS_CALLBACK_BASE/);
  });

  it('configuration reads the Twilio settings (redaction defaults to on)', () => {
    // Act
    const defaults = loadConfig({ PROVIDER: 'twilio' });
    const set = loadConfig({
      PROVIDER: 'twilio',
      PROVIDER_MESSAGING_SERVICE_SID: SERVICE_SID,
      PROVIDER_REDACTION: 'off',
      PROVIDER_STATUS_CALLBACK_BASE: 'https://api.example.com/v1/receipts/twilio',
      PROVIDER_LIST_LAG_ALLOWANCE_SECONDS: '90',
    });

    // Assess
    expect(defaults.providerRedaction).toBe('on');
    expect(defaults.providerStatusCallbackBase).toBeUndefined();
    expect(set).toMatchObject({
      providerMessagingServiceSid: SERVICE_SID,
      providerRedaction: 'off',
      providerStatusCallbackBase: 'https://api.example.com/v1/receipts/twilio',
      providerListLagAllowanceMs: 90_000,
    });
    expect(set.providerFrom).toBeUndefined();
    expect(() => loadConfig({ PROVIDER_REDACTION: 'maybe' })).toThrow(/PROVIDER_REDACTION/);
  });
});
