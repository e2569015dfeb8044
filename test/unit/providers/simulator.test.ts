/** The provider simulator over real HTTP: Twilio wire format, status schedule, control API, faults, stop. */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../../local/simulator/server.js';
import { eventually } from '../../support/eventually.js';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  aPhoneNumber,
  aResetBody,
  basicAuth,
  FROM,
  type SimHarness,
  startHarness,
} from './support.js';

const DELAYS = { sent: 100, delivered: 250 };
const RFC_2822 = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000$/;

/** Form fields of a valid create-message request, with overrides (null removes a field). */
function aSendForm(overrides: Record<string, string | null> = {}): URLSearchParams {
  const fields: Record<string, string | null> = {
    To: aPhoneNumber(),
    From: FROM,
    Body: aResetBody(),
    ValidityPeriod: '600',
    StatusCallback: 'http://127.0.0.1:9/_callbacks/status?client_reference=k%231',
    ...overrides,
  };
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) if (value !== null) form.set(key, value);
  return form;
}

describe('provider simulator', () => {
  let harness: SimHarness;
  const messagesUrl = (account = ACCOUNT_SID) => `${harness.url}/2010-04-01/Accounts/${account}/Messages`;
  const send = (form: URLSearchParams, headers: Record<string, string> = { authorization: basicAuth() }) =>
    fetch(`${messagesUrl()}.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: form.toString(),
    });
  const get = (url: string) => fetch(url, { headers: { authorization: basicAuth() } });
  const created = async (form = aSendForm()) => (await (await send(form)).json()) as Record<string, unknown>;
  const health = async () =>
    (await (await fetch(`${harness.url}/_sim/health`)).json()) as Record<string, unknown>;

  beforeAll(async () => {
    harness = await startHarness({ statusDelaysMs: DELAYS });
  });

  afterAll(async () => {
    await harness.stop();
  });

  beforeEach(async () => {
    await harness.reset();
  });

  describe('create message', () => {
    it('answers 201 with a Twilio Message resource, status queued', async () => {
      // Prepare
      const form = aSendForm();

      // Act
      const response = await send(form);
      const body = (await response.json()) as Record<string, unknown>;

      // Assess
      expect(response.status).toBe(201);
      expect(body).toMatchObject({
        account_sid: ACCOUNT_SID,
        to: form.get('To'),
        from: FROM,
        body: form.get('Body'),
        status: 'queued',
        date_sent: null,
        num_segments: '1',
        error_code: null,
        error_message: null,
        direction: 'outbound-api',
        api_version: '2010-04-01',
      });
      // Twilio's Message resource has no callback URL and no caller reference.
      expect(body).not.toHaveProperty('status_callback');
      expect(body.sid).toMatch(/^SM[0-9a-f]{32}$/);
      expect(body.date_created).toMatch(RFC_2822);
      expect(body.date_updated).toMatch(RFC_2822);
      expect(body.uri).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/${body.sid}.json`);
    });

    it('counts segments: a long GSM body is split by 153, a non-GSM one by 67', async () => {
      // Act
      const gsm = await created(aSendForm({ Body: 'a'.repeat(161) }));
      const ucs2 = await created(aSendForm({ Body: 'é'.repeat(71) }));

      // Assess
      expect(gsm.num_segments).toBe('2');
      expect(ucs2.num_segments).toBe('2');
    });

    it('rejects a request without credentials with 401 and records nothing', async () => {
      // Act
      const response = await send(aSendForm(), {});

      // Assess
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Basic/);
      expect(await response.json()).toMatchObject({ code: 20003, status: 401 });
      expect(await harness.ledger()).toEqual([]);
      expect(await harness.requests()).toMatchObject([{ http_status: 401, outcome: 'not_recorded' }]);
    });

    it.each([
      ['a missing To', { To: null }, 21604],
      ['a non-E.164 To', { To: '4155550123' }, 21211],
      ['a missing From', { From: null }, 21603],
      ['a missing Body', { Body: null }, 21602],
      ['a body over 1600 characters', { Body: 'x'.repeat(1601) }, 21617],
      ['ValidityPeriod 0', { ValidityPeriod: '0' }, 21624],
      ['ValidityPeriod 36001', { ValidityPeriod: '36001' }, 21624],
      ['a fractional ValidityPeriod', { ValidityPeriod: '1.5' }, 21624],
      ['a non-HTTP StatusCallback', { StatusCallback: 'ftp://example.com/x' }, 21609],
      ['magic number +15005550001', { To: '+15005550001' }, 21211],
      ['magic number +15005550002', { To: '+15005550002' }, 21612],
      ['magic number +15005550003', { To: '+15005550003' }, 21408],
      ['magic number +15005550004', { To: '+15005550004' }, 21610],
      ['magic number +15005550009', { To: '+15005550009' }, 21614],
    ])('rejects %s with 400 and Twilio code %i, recording nothing', async (_, overrides, code) => {
      // Act
      const response = await send(aSendForm(overrides));
      const body = await response.json();

      // Assess
      expect(response.status).toBe(400);
      expect(body).toEqual({
        code,
        message: expect.any(String),
        more_info: `https://www.twilio.com/docs/errors/${code}`,
        status: 400,
      });
      expect(await harness.ledger()).toEqual([]);
    });

    it('does not echo the number in a validation message', async () => {
      // Act
      const body = (await (await send(aSendForm({ To: '4155550123' }))).json()) as { message: string };

      // Assess
      expect(body.message).not.toContain('4155550123');
    });

    it('accepts a missing ValidityPeriod (Twilio default 36000 s) and a missing StatusCallback', async () => {
      // Act
      const body = await created(aSendForm({ ValidityPeriod: null, StatusCallback: null }));

      // Assess
      expect(body).not.toHaveProperty('status_callback');
      expect(await harness.ledger()).toMatchObject([
        { id: body.sid, validity_period_seconds: 36_000, client_reference: null },
      ]);
    });
  });

  describe('fetch and status schedule', () => {
    it('moves queued -> sent -> delivered lazily, at exactly the configured delays, stamping date_sent', async () => {
      // Prepare
      const { uri } = await created();
      const url = `${harness.url}${uri}`;
      const read = async () => (await (await get(url)).json()) as Record<string, unknown>;

      // Act
      harness.clock.advance(DELAYS.sent - 1);
      const early = await read();
      harness.clock.advance(1);
      const middle = await read();
      harness.clock.advance(DELAYS.delivered - DELAYS.sent - 1);
      const stillSent = await read();
      harness.clock.advance(1);
      const late = await read();

      // Assess
      expect([early.status, middle.status, stillSent.status, late.status]).toEqual([
        'queued',
        'sent',
        'sent',
        'delivered',
      ]);
      expect(early.date_sent).toBeNull();
      expect(middle.date_sent).toMatch(RFC_2822);
      expect(late.date_sent).toBe(middle.date_sent);
    });

    it('answers 404 (20404) for an unknown sid, and 401 (20003) for another account than the credentials', async () => {
      // Prepare
      const { sid } = await created();

      // Act
      const unknown = await get(`${messagesUrl()}/SM${'0'.repeat(32)}.json`);
      const otherAccount = await get(`${messagesUrl(`AC${'1'.repeat(32)}`)}/${sid}.json`);

      // Assess
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ code: 20404, status: 404 });
      // The credentials authenticate one account: another account's path is not theirs to read.
      expect(otherAccount.status).toBe(401);
      expect(await otherAccount.json()).toMatchObject({ code: 20003, status: 401 });
    });

    it('requires credentials for reads too', async () => {
      // Prepare
      const { uri } = await created();

      // Act
      const response = await fetch(`${harness.url}${uri}`);

      // Assess
      expect(response.status).toBe(401);
    });
  });

  describe('list', () => {
    it('pages through every message to a number, most recent first, with next_page_uri', async () => {
      // Prepare
      const to = aPhoneNumber();
      const sids: unknown[] = [];
      for (let i = 0; i < 5; i += 1) sids.push((await created(aSendForm({ To: to }))).sid);
      await created(); // another number
      let next: string | null =
        `/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json?To=${encodeURIComponent(to)}&PageSize=2`;
      const pages: { page: number; sids: unknown[] }[] = [];

      // Act
      while (next !== null) {
        const body = (await (await get(`${harness.url}${next}`)).json()) as {
          messages: { sid: string }[];
          next_page_uri: string | null;
          page: number;
          page_size: number;
        };
        pages.push({ page: body.page, sids: body.messages.map((m) => m.sid) });
        expect(body.page_size).toBe(2);
        next = body.next_page_uri;
      }

      // Assess
      expect(pages.map((p) => p.page)).toEqual([0, 1, 2]);
      expect(pages.map((p) => p.sids.length)).toEqual([2, 2, 1]);
      expect(pages.flatMap((p) => p.sids)).toEqual([...sids].reverse());
    });

    it('keeps pages stable when messages arrive while paging (keyset PageToken)', async () => {
      // Prepare
      const to = aPhoneNumber();
      const sids: unknown[] = [];
      for (let i = 0; i < 4; i += 1) sids.push((await created(aSendForm({ To: to }))).sid);
      const first = (await (
        await get(`${messagesUrl()}.json?To=${encodeURIComponent(to)}&PageSize=2`)
      ).json()) as { messages: { sid: string }[]; next_page_uri: string };

      // Act
      await created(aSendForm({ To: to }));
      const second = (await (await get(`${harness.url}${first.next_page_uri}`)).json()) as {
        messages: { sid: string }[];
        next_page_uri: string | null;
      };

      // Assess
      expect([...first.messages, ...second.messages].map((m) => m.sid)).toEqual([...sids].reverse());
      expect(second.next_page_uri).toBeNull();
    });

    it('filters DateSent on date_sent, so queued messages are not listed (Twilio semantics)', async () => {
      // Prepare
      const to = aPhoneNumber();
      const early = await created(aSendForm({ To: to }));
      harness.clock.advance(DELAYS.sent);
      const queued = await created(aSendForm({ To: to }));
      const today = new Date(harness.clock.now()).toISOString().slice(0, 10);
      const tomorrow = new Date(harness.clock.now() + 86_400_000).toISOString().slice(0, 10);
      const list = async (query: string) =>
        (
          (await (await get(`${messagesUrl()}.json?To=${encodeURIComponent(to)}&${query}`)).json()) as {
            messages: { sid: string }[];
          }
        ).messages.map((m) => m.sid);

      // Act
      const all = await list('PageSize=50');
      const sentToday = await list(`DateSent>=${today}`);
      const sentTomorrow = await list(`DateSent>=${tomorrow}`);
      const sentOnDay = await list(`DateSent=${today}`);
      const invalid = await get(`${messagesUrl()}.json?DateSent>=yesterday`);

      // Assess
      expect(all).toEqual([queued.sid, early.sid]);
      expect(sentToday).toEqual([early.sid]);
      expect(sentOnDay).toEqual([early.sid]);
      expect(sentTomorrow).toEqual([]);
      expect(invalid.status).toBe(400);
    });
  });

  describe('status callbacks', () => {
    it('posts sent and delivered to the StatusCallback URL, best effort', async () => {
      // Prepare
      const form = aSendForm({ StatusCallback: `${harness.url}/_callbacks/status?client_reference=key%231` });

      // Act
      const { sid } = await created(form);
      harness.clock.advance(DELAYS.delivered);
      const callbacks = await eventually(async () => {
        const posted = await harness.callbacks();
        expect(posted).toHaveLength(2);
        return posted;
      });

      // Assess
      expect(callbacks.map((c) => [c.params.MessageSid, c.params.MessageStatus, c.client_reference])).toEqual(
        [
          [sid, 'sent', 'key#1'],
          [sid, 'delivered', 'key#1'],
        ],
      );
      expect(callbacks.every((c) => c.signature !== null)).toBe(true);
    });

    it('survives an unreachable callback URL', async () => {
      // Prepare
      const form = aSendForm({ StatusCallback: 'http://127.0.0.1:9/unreachable' });

      // Act
      const { sid } = await created(form);
      harness.clock.advance(DELAYS.delivered);
      const failures = await eventually(() => {
        const lines = harness.logs.filter((l) => l.includes(`callback failed sid=${sid}`));
        expect(lines).toHaveLength(2);
        return lines;
      });
      const response = await fetch(`${harness.url}/_sim/health`);

      // Assess: both callbacks (sent, delivered) failed, and the simulator still answers
      expect(failures).toEqual([
        expect.stringContaining('status=sent'),
        expect.stringContaining('status=delivered'),
      ]);
      expect(response.status).toBe(200);
    });
  });

  describe('control API', () => {
    it('reports health', async () => {
      // Act
      const response = await fetch(`${harness.url}/_sim/health`);

      // Assess
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: 'ok' });
    });

    it('lists the ledger with fingerprints, filterable by client reference', async () => {
      // Prepare
      const first = await created(
        aSendForm({ StatusCallback: 'http://127.0.0.1:9/cb?client_reference=a%231' }),
      );
      await created(aSendForm({ StatusCallback: 'http://127.0.0.1:9/cb?client_reference=b%231' }));

      // Act
      const filtered = await (
        await fetch(`${harness.url}/_sim/messages?client_reference=${encodeURIComponent('a#1')}`)
      ).json();

      // Assess
      expect(filtered).toEqual({
        messages: [
          {
            id: first.sid,
            client_reference: 'a#1',
            destination_fingerprint: expect.stringMatching(/^sim1:[0-9a-f]{32}$/),
            accepted_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
            status: 'queued',
            error_code: null,
            validity_period_seconds: 600,
            account_sid: ACCOUNT_SID,
            messaging_service_sid: null,
            redacted: false,
            deleted: false,
            receipts: 'none',
          },
        ],
      });
    });

    it('uses the fingerprint function it was given', async () => {
      // Prepare
      const sim = await startSimulator({
        authToken: AUTH_TOKEN,
        fingerprint: (e164) => `fp1:${e164.length}`,
      });
      const form = aSendForm();

      // Act
      await fetch(`${sim.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`, {
        method: 'POST',
        headers: { authorization: basicAuth() },
        body: form,
      });
      const ledger = (await (await fetch(`${sim.url}/_sim/messages`)).json()) as { messages: unknown[] };
      await sim.stop();

      // Assess
      expect(ledger.messages).toMatchObject([{ destination_fingerprint: `fp1:${form.get('To')?.length}` }]);
    });

    it('logs every send request in order, with the fault applied and whether it was recorded', async () => {
      // Prepare
      await harness.setFaults([
        { mode: 'error_5xx_after_accept', count: 1 },
        { mode: 'rate_limited', count: 1 },
      ]);

      // Act
      const statuses = [];
      for (let i = 1; i <= 3; i += 1) {
        statuses.push(
          (await send(aSendForm({ StatusCallback: `http://127.0.0.1:9/cb?client_reference=k%23${i}` })))
            .status,
        );
      }

      // Assess
      const ledger = await harness.ledger();
      expect(statuses).toEqual([500, 429, 201]);
      expect(await harness.requests()).toEqual([
        expect.objectContaining({
          client_reference: 'k#1',
          fault: 'error_5xx_after_accept',
          outcome: 'recorded',
          http_status: 500,
          message_id: ledger[0]?.id,
        }),
        expect.objectContaining({
          client_reference: 'k#2',
          fault: 'rate_limited',
          outcome: 'not_recorded',
          http_status: 429,
          message_id: null,
        }),
        expect.objectContaining({
          client_reference: 'k#3',
          fault: null,
          outcome: 'recorded',
          http_status: 201,
          message_id: ledger[1]?.id,
        }),
      ]);
    });

    it.each([
      ['an unknown mode', { mode: 'explode' }],
      ['a zero count', { mode: 'hang', count: 0 }],
      ['a fractional count', { mode: 'hang', count: 1.5 }],
      ['a probability above 1', { mode: 'hang', probability: 2 }],
      ['an empty list', []],
      ['a bad entry in a list', [{ mode: 'hang' }, { mode: 'nope' }]],
    ])('rejects a fault plan with %s', async (_, plan) => {
      // Act
      const response = await harness.setFaults(plan);

      // Assess
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'invalid_fault_plan' });
      expect(await (await fetch(`${harness.url}/_sim/faults`)).json()).toEqual({ faults: [] });
    });

    it('shows remaining counts, and DELETE clears the plans', async () => {
      // Prepare
      await harness.setFaults({ mode: 'reject_permanent', count: 2 });

      // Act
      await send(aSendForm());
      const afterOne = await (await fetch(`${harness.url}/_sim/faults`)).json();
      await harness.clearFaults();
      const afterClear = await (await fetch(`${harness.url}/_sim/faults`)).json();
      const accepted = await send(aSendForm());

      // Assess
      expect(afterOne).toEqual({ faults: [{ mode: 'reject_permanent', count: 1, probability: 1 }] });
      expect(afterClear).toEqual({ faults: [] });
      expect(accepted.status).toBe(201);
    });

    it('an invalid send does not consume a fault', async () => {
      // Prepare
      await harness.setFaults({ mode: 'error_5xx_before_accept', count: 1 });

      // Act
      const invalid = await send(aSendForm({ To: 'nope' }));
      const faulted = await send(aSendForm());

      // Assess
      expect([invalid.status, faulted.status]).toEqual([400, 503]);
    });

    it('hang counts every held request, lookups included, and leaves the control API alone', async () => {
      // Prepare
      const { uri } = await created();
      await harness.setFaults({ mode: 'hang', count: 1 });

      // Act
      let settled = false;
      void get(`${harness.url}${uri}`).then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      const holding = await eventually(async () => {
        const view = await health();
        expect(view).toMatchObject({ held_requests: 1 });
        return view;
      });
      const answered = await get(`${harness.url}${uri}`);

      // Assess: the control API answered while the lookup stayed held; the next one is not held
      expect(holding).toMatchObject({ status: 'ok', held_requests: 1 });
      expect(settled).toBe(false);
      expect(answered.status).toBe(200);
    });

    it('reset clears ledger, requests, callbacks and faults', async () => {
      // Prepare
      await created();
      await harness.setFaults({ mode: 'reject_permanent' });

      // Act
      const response = await fetch(`${harness.url}/_sim/reset`, { method: 'POST' });

      // Assess
      expect(response.status).toBe(200);
      expect(await harness.ledger()).toEqual([]);
      expect(await harness.requests()).toEqual([]);
      expect(await harness.callbacks()).toEqual([]);
      expect((await send(aSendForm())).status).toBe(201);
    });

    it('answers 404 for unknown routes and 405 for wrong methods', async () => {
      // Act
      const control = await fetch(`${harness.url}/_sim/nothing`);
      const api = await fetch(`${harness.url}/2010-04-01/Nothing.json`);
      const method = await fetch(`${messagesUrl()}.json`, {
        method: 'PUT',
        headers: { authorization: basicAuth() },
      });

      // Assess
      expect([control.status, api.status, method.status]).toEqual([404, 404, 405]);
    });
  });
});

describe('simulator lifecycle', () => {
  it('stop() ends held requests and returns promptly', async () => {
    // Prepare
    const sim = await startSimulator({});
    await fetch(`${sim.url}/_sim/faults`, { method: 'POST', body: JSON.stringify({ mode: 'hang' }) });
    const held = new Promise<string>((resolve) => {
      const req = request(`${sim.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`, {
        method: 'POST',
        headers: { authorization: basicAuth() },
      });
      req.on('response', () => resolve('answered'));
      req.on('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? 'error'));
      req.end(aSendForm().toString());
    });
    await eventually(async () =>
      expect(await (await fetch(`${sim.url}/_sim/health`)).json()).toMatchObject({ held_requests: 1 }),
    );

    // Act
    const started = performance.now();
    await sim.stop();
    const elapsed = performance.now() - started;

    // Assess
    expect(elapsed).toBeLessThan(1_000);
    expect(await held).toBe('ECONNRESET');
    await expect(fetch(`${sim.url}/_sim/health`)).rejects.toThrow();
  });

  it('stop() is idempotent', async () => {
    // Prepare
    const sim = await startSimulator({});

    // Act + Assess
    await Promise.all([sim.stop(), sim.stop()]);
    await expect(sim.stop()).resolves.toBeUndefined();
  });

  it('main.ts runs on SIM_PORT, prints its URL and stops on SIGTERM', async () => {
    // Prepare
    const child = spawn(process.execPath, ['--import', 'tsx', 'local/simulator/main.ts'], {
      env: { ...process.env, SIM_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(output);
        if (match?.[1]) resolve(match[1]);
      });
      child.on('exit', (code) => reject(new Error(`exited early with ${code}`)));
      setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error('main.ts did not print its URL within 15 s'));
      }, 15_000).unref();
    });

    try {
      // Act
      const health = await fetch(`${url}/_sim/health`);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');

      // Assess
      expect(health.status).toBe(200);
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
