/**
 * The simulator behaves like Twilio, never better: auth token, messaging services, day-granular
 * DateSent filters, redaction and delete, signed callbacks, and the message fault modes
 * (redaction, list_lag, receipt_delay, receipt_loss, receipt_duplicate, fail_not_sent).
 */
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

const DELAYS = { sent: 80, delivered: 160 };
const SERVICE_SID = `MG${'a'.repeat(32)}`;

type Json = Record<string, unknown>;

describe('simulator: Twilio behaviour', () => {
  let harness: SimHarness;
  const messagesUrl = () => `${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages`;
  const sinkUrl = (reference: string) =>
    `${harness.url}/_callbacks/status?client_reference=${encodeURIComponent(reference)}`;
  const aForm = (overrides: Record<string, string | null> = {}) => {
    const fields: Record<string, string | null> = {
      To: aPhoneNumber(),
      From: FROM,
      Body: aResetBody(),
      ValidityPeriod: '600',
      StatusCallback: sinkUrl('k#1'),
      ...overrides,
    };
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(fields)) if (value !== null) form.set(key, value);
    return form;
  };
  const send = (form: URLSearchParams, authorization = basicAuth()) =>
    fetch(`${messagesUrl()}.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
      body: form.toString(),
    });
  const created = async (form = aForm()) => (await (await send(form)).json()) as Json;
  const get = async (url: string) => fetch(url, { headers: { authorization: basicAuth() } });
  const fetchMessage = async (sid: unknown) =>
    (await (await get(`${messagesUrl()}/${String(sid)}.json`)).json()) as Json;
  const listTo = async (to: string, query = '') =>
    (
      (await (await get(`${messagesUrl()}.json?To=${encodeURIComponent(to)}${query}`)).json()) as {
        messages: Json[];
      }
    ).messages;
  const callbacksOf = async (sid: unknown) =>
    (await harness.callbacks()).filter((c) => c.params.MessageSid === sid);

  beforeAll(async () => {
    harness = await startHarness({ statusDelaysMs: DELAYS });
  });

  afterAll(async () => {
    await harness.stop();
  });

  beforeEach(async () => {
    await harness.reset();
  });

  describe('authentication', () => {
    it('refuses a wrong auth token with 401 and Twilio error 20003, recording nothing', async () => {
      // Act
      const response = await send(aForm(), basicAuth(ACCOUNT_SID, 'not-the-token'));

      // Assess
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({
        code: 20003,
        message: 'Authenticate',
        more_info: 'https://www.twilio.com/docs/errors/20003',
        status: 401,
      });
      expect(await harness.ledger()).toEqual([]);
    });

    it("defaults to the local configuration's auth token", async () => {
      // Prepare
      const sim = await startSimulator({});
      const post = (token: string) =>
        fetch(`${sim.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`, {
          method: 'POST',
          headers: { authorization: basicAuth(ACCOUNT_SID, token) },
          body: aForm(),
        });

      // Act
      const wrong = await post(AUTH_TOKEN);
      const right = await post('simulator-token');
      await sim.stop();

      // Assess
      expect([wrong.status, right.status]).toEqual([401, 201]);
    });
  });

  describe('messaging service', () => {
    it('accepts MessagingServiceSid without From: accepted, from null until the pool assigns a sender', async () => {
      // Prepare
      const form = aForm({ From: null, MessagingServiceSid: SERVICE_SID });

      // Act
      const response = await send(form);
      const body = (await response.json()) as Json;
      harness.clock.advance(DELAYS.sent);
      const later = await fetchMessage(body.sid);

      // Assess
      expect(response.status).toBe(201);
      expect(body).toMatchObject({ status: 'accepted', from: null, messaging_service_sid: SERVICE_SID });
      expect(later).toMatchObject({ status: 'sent', from: FROM, messaging_service_sid: SERVICE_SID });
      expect(await harness.ledger()).toMatchObject([{ messaging_service_sid: SERVICE_SID }]);
    });

    it('rejects a malformed MessagingServiceSid and a send with neither From nor a service', async () => {
      // Act
      const malformed = await send(aForm({ From: null, MessagingServiceSid: 'MG-nope' }));
      const neither = await send(aForm({ From: null }));

      // Assess
      expect([malformed.status, neither.status]).toEqual([400, 400]);
      expect((await neither.json()) as Json).toMatchObject({ code: 21603 });
    });
  });

  describe('list', () => {
    it('reads DateSent, DateSent< and DateSent> as whole GMT days, inclusive, in both documented formats', async () => {
      // Prepare
      const to = aPhoneNumber();
      const message = await created(aForm({ To: to }));
      harness.clock.advance(DELAYS.sent);
      const day = (offsetDays: number) =>
        new Date(harness.clock.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
      const [yesterday, today, tomorrow] = [day(-1), day(0), day(1)];
      const sids = async (query: string) => (await listTo(to, query)).map((m) => m.sid);

      // Act
      const results = {
        onDay: await sids(`&DateSent=${today}`),
        onOrBeforeToday: await sids(`&${encodeURIComponent('DateSent<')}=${today}`),
        onOrBeforeYesterday: await sids(`&${encodeURIComponent('DateSent<')}=${yesterday}`),
        onOrAfterTomorrow: await sids(`&${encodeURIComponent('DateSent>')}=${tomorrow}`),
        // The twilio client sends date-times (ISO 8601): only their day counts.
        isoLateToday: await sids(`&DateSent=${today}T23:59:59Z`),
      };

      // Assess
      expect(results).toEqual({
        onDay: [message.sid],
        onOrBeforeToday: [message.sid],
        onOrBeforeYesterday: [],
        onOrAfterTomorrow: [],
        isoLateToday: [message.sid],
      });
    });

    it('lists newest first', async () => {
      // Prepare
      const to = aPhoneNumber();
      const first = await created(aForm({ To: to }));
      const second = await created(aForm({ To: to }));

      // Act
      const listed = await listTo(to);

      // Assess
      expect(listed.map((m) => m.sid)).toEqual([second.sid, first.sid]);
    });
  });

  describe('redaction and delete', () => {
    it('POST Body="" redacts the body in every read; any other body is refused', async () => {
      // Prepare
      const to = aPhoneNumber();
      const message = await created(aForm({ To: to }));
      const update = (body: string) =>
        fetch(`${messagesUrl()}/${String(message.sid)}.json`, {
          method: 'POST',
          headers: { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ Body: body }).toString(),
        });

      // Act
      const refused = await update('something else');
      const redacted = await update('');
      const fetched = await fetchMessage(message.sid);
      const listed = await listTo(to);

      // Assess
      expect(refused.status).toBe(400);
      expect(redacted.status).toBe(200);
      expect((await redacted.json()) as Json).toMatchObject({ sid: message.sid, body: '' });
      expect(fetched).toMatchObject({ body: '', to });
      expect(listed).toMatchObject([{ sid: message.sid, body: '' }]);
    });

    it('DELETE answers 204: gone from fetch and list, still in the ledger (it was sent)', async () => {
      // Prepare
      const to = aPhoneNumber();
      const message = await created(aForm({ To: to }));

      // Act
      const deleted = await fetch(`${messagesUrl()}/${String(message.sid)}.json`, {
        method: 'DELETE',
        headers: { authorization: basicAuth() },
      });
      const fetched = await get(`${messagesUrl()}/${String(message.sid)}.json`);
      const listed = await listTo(to);

      // Assess
      expect(deleted.status).toBe(204);
      expect(fetched.status).toBe(404);
      expect(listed).toEqual([]);
      expect(await harness.ledger()).toMatchObject([{ id: message.sid, deleted: true }]);
    });
  });

  describe('status callbacks', () => {
    it('are signed over the full URL and sorted parameters, carry an idempotency token, and the sink keeps no number', async () => {
      // Prepare
      const form = aForm();

      // Act
      const message = await created(form);
      harness.clock.advance(DELAYS.delivered);
      const callbacks = await eventually(async () => {
        const posted = await harness.callbacks();
        expect(posted).toHaveLength(2);
        return posted;
      });

      // Assess
      expect(callbacks.map((c) => c.params.MessageStatus)).toEqual(['sent', 'delivered']);
      for (const callback of callbacks) {
        expect(callback.params.MessageSid).toBe(message.sid);
        expect(callback.signature_valid).toBe(true);
        expect(callback.idempotency_token).toMatch(/\S+/);
      }
      expect(new Set(callbacks.map((c) => c.idempotency_token)).size).toBe(2);
      expect(JSON.stringify(callbacks)).not.toContain(form.get('To')?.slice(2) ?? 'missing');
    });
  });

  describe('message faults', () => {
    it('redaction: reads mask the last 4 digits of both numbers and blank the body; a To filter no longer matches', async () => {
      // Prepare
      const to = aPhoneNumber();
      await harness.setFaults({ mode: 'redaction', count: 1 });

      // Act
      const response = await send(aForm({ To: to }));
      const message = (await response.json()) as Json;
      const fetched = await fetchMessage(message.sid);
      const listed = await listTo(to);
      const plain = await created(aForm({ To: to }));

      // Assess
      expect(response.status).toBe(201);
      expect(fetched).toMatchObject({
        to: `${to.slice(0, -4)}XXXX`,
        from: `${FROM.slice(0, -4)}XXXX`,
        body: '',
      });
      expect(listed.map((m) => m.sid)).toEqual([]);
      expect(await listTo(to)).toMatchObject([{ sid: plain.sid, to }]);
      expect(await harness.ledger()).toMatchObject([{ redacted: true }, { redacted: false }]);
    });

    it('list_lag: invisible to lists for ms, visible to fetch by sid at once', async () => {
      // Prepare
      const to = aPhoneNumber();
      await harness.setFaults({ mode: 'list_lag', ms: 300, count: 1 });
      const message = await created(aForm({ To: to }));

      // Act
      const listedEarly = await listTo(to);
      const fetchedEarly = await get(`${messagesUrl()}/${String(message.sid)}.json`);
      harness.clock.advance(299);
      const listedJustBefore = await listTo(to);
      harness.clock.advance(1);
      const listedLate = await listTo(to);

      // Assess
      expect(listedEarly).toEqual([]);
      expect(fetchedEarly.status).toBe(200);
      expect(listedJustBefore).toEqual([]);
      expect(listedLate.map((m) => m.sid)).toEqual([message.sid]);
    });

    it('fail_not_sent: failed with a never-handed-to-a-carrier code, no sent, no delivered', async () => {
      // Prepare
      await harness.setFaults({ mode: 'fail_not_sent', error_code: 30001, count: 1 });

      // Act
      const message = await created();
      harness.clock.advance(DELAYS.delivered);
      const callbacks = await eventually(async () => {
        const posted = await harness.callbacks();
        expect(posted).toHaveLength(1);
        return posted;
      });
      const fetched = await fetchMessage(message.sid);

      // Assess
      expect(fetched).toMatchObject({ status: 'failed', error_code: 30001, date_sent: null });
      expect(callbacks.map((c) => [c.params.MessageStatus, c.params.ErrorCode])).toEqual([
        ['failed', '30001'],
      ]);
    });

    it('receipt_loss: the message is delivered, no callback is posted', async () => {
      // Prepare
      await harness.setFaults({ mode: 'receipt_loss', count: 1 });

      // Act: a plain message sent after it, whose callbacks arrive, bounds the wait
      const message = await created();
      const plain = await created();
      harness.clock.advance(DELAYS.delivered);
      await eventually(async () => expect(await callbacksOf(plain.sid)).toHaveLength(2));

      // Assess
      expect(await fetchMessage(message.sid)).toMatchObject({ status: 'delivered' });
      expect(await callbacksOf(message.sid)).toEqual([]);
      expect(await harness.ledger()).toMatchObject([{ receipts: 'lost' }, { receipts: 'none' }]);
    });

    it('receipt_duplicate: every callback twice, with the same idempotency token', async () => {
      // Prepare
      await harness.setFaults({ mode: 'receipt_duplicate', count: 1 });

      // Act
      await created();
      harness.clock.advance(DELAYS.delivered + 50);
      const callbacks = await eventually(async () => {
        const posted = await harness.callbacks();
        expect(posted).toHaveLength(4);
        return posted;
      });

      // Assess
      expect(callbacks.map((c) => c.params.MessageStatus).sort()).toEqual([
        'delivered',
        'delivered',
        'sent',
        'sent',
      ]);
      expect(new Set(callbacks.map((c) => c.idempotency_token)).size).toBe(2);
    });

    it('receipt_delay: callbacks arrive ms later', async () => {
      // Prepare
      await harness.setFaults({ mode: 'receipt_delay', ms: 400, count: 1 });

      // Act: a plain message sent after it, whose callbacks arrive, bounds the first wait
      const delayed = await created();
      const plain = await created();
      harness.clock.advance(DELAYS.delivered);
      await eventually(async () => expect(await callbacksOf(plain.sid)).toHaveLength(2));
      const early = await callbacksOf(delayed.sid);
      harness.clock.advance(400);
      const late = await eventually(async () => {
        const posted = await callbacksOf(delayed.sid);
        expect(posted).toHaveLength(2);
        return posted;
      });

      // Assess
      expect(early).toEqual([]);
      expect(late.map((c) => c.params.MessageStatus)).toEqual(['sent', 'delivered']);
    });

    it('message faults and send faults apply together (separate lanes)', async () => {
      // Prepare
      await harness.setFaults([
        { mode: 'timeout_after_accept', count: 1 },
        { mode: 'redaction', count: 1 },
      ]);

      // Act
      let answered = false;
      void send(aForm()).then(
        () => {
          answered = true;
        },
        () => undefined,
      );
      const ledger = await eventually(async () => {
        const entries = await harness.ledger();
        expect(entries).toHaveLength(1);
        return entries;
      });

      // Assess: recorded with the message fault, and the send is still held by the send fault
      expect(ledger).toMatchObject([{ redacted: true }]);
      expect(await harness.requests()).toMatchObject([
        { fault: 'timeout_after_accept', outcome: 'recorded', http_status: null },
      ]);
      expect(answered).toBe(false);
    });

    it.each([
      ['list_lag without ms', { mode: 'list_lag' }],
      ['receipt_delay with a zero ms', { mode: 'receipt_delay', ms: 0 }],
      [
        'fail_not_sent with a code that may have reached a carrier',
        { mode: 'fail_not_sent', error_code: 30007 },
      ],
    ])('rejects %s', async (_, plan) => {
      // Act
      const response = await harness.setFaults(plan);

      // Assess
      expect(response.status).toBe(400);
    });
  });

  describe('mounting', () => {
    it('runs mounted handlers before the Twilio routes, and extensions add status_callback only on request', async () => {
      // Prepare
      const sim = await startSimulator({
        authToken: AUTH_TOKEN,
        extensions: true,
        handlers: [
          (req, res, url) => {
            if (url.pathname !== '/aws') return false;
            res.writeHead(200, { 'content-type': 'text/plain' }).end(`other protocol ${req.method}`);
            return true;
          },
        ],
      });
      sim.use((_, res, url) => {
        if (url.pathname !== '/later') return false;
        res.writeHead(204).end();
        return true;
      });
      const form = aForm();

      // Act
      const mounted = await (await fetch(`${sim.url}/aws`)).text();
      const later = await fetch(`${sim.url}/later`);
      const message = (await (
        await fetch(`${sim.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`, {
          method: 'POST',
          headers: { authorization: basicAuth() },
          body: form,
        })
      ).json()) as Json;
      await sim.stop();

      // Assess
      expect(mounted).toBe('other protocol GET');
      expect(later.status).toBe(204);
      expect(message.status_callback).toBe(form.get('StatusCallback'));
    });
  });
});
