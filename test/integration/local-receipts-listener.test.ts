/**
 * The local stack's edges (issue 25 item 7): real Twilio's status callbacks reach it through a
 * receipts-only listener, the one port a tunnel may expose (nothing else is served there, any
 * `Host` is accepted, a signed callback is applied), while the API keeps its loopback `Host`
 * check; and the confirmation route refuses what a web page could make a browser send.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createConsoleRoute } from '../../local/console/route.js';
import { TWILIO_RECEIPTS_PATH } from '../../shared/handlers/receipts-handler.js';
import { twilioSignature } from '../../shared/providers/twilio/status-callback.js';
import { SETTINGS, settingsEnv } from '../../shared/settings.js';
import { aRequestBody, uniqueName } from '../support/fixtures.js';
import { expectConsistentTrail, type Pipeline, startPipeline } from '../support/pipeline-harness.js';

/** The public name a tunnel forwards as `Host` (ngrok and cloudflared do unless told to rewrite it). */
const TUNNEL_HOST = 'abc123.tunnel.example';

/** A request with an explicit Host header (fetch does not let a caller choose it). */
function send(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method, headers: init.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

function receiptsUrlOf(pipe: Pipeline): string {
  const url = pipe.stack.receiptsUrl;
  if (url === undefined) throw new Error('the stack started no receipts-only listener');
  return url;
}

describe('the local stack with a receipts-only listener (RECEIPTS_PORT)', () => {
  let pipe: Pipeline;

  beforeAll(async () => {
    // '' = the callback base is the stack's own: the listener, so the simulator posts there.
    pipe = await startPipeline({
      env: settingsEnv({ twilioStatusCallbackBase: '', receiptsPort: 0 }),
      routes: [
        createConsoleRoute({ tableName: uniqueName('unused'), dynamodbEndpoint: inject('dynamodbEndpoint') }),
      ],
    });
  });
  afterAll(() => pipe.stop());

  it('listens on loopback, on its own port, and the callback base points at it', () => {
    // Act
    const receipts = new URL(receiptsUrlOf(pipe));

    // Assess
    expect(receipts.hostname).toBe('127.0.0.1');
    expect(receipts.port).not.toBe(new URL(pipe.stack.apiUrl).port);
    expect(pipe.stack.config.providerStatusCallbackBase).toBe(`${receipts.origin}${TWILIO_RECEIPTS_PATH}`);
  });

  it.each([
    ['GET', '/v1/notifications?event_id=evt-1'],
    ['POST', '/v1/notifications'],
    ['GET', '/v1/openapi.json'],
    ['POST', '/v1/notifications/k-1/confirmation'],
    ['GET', '/console'],
    ['GET', '/_sim/messages'],
    ['GET', TWILIO_RECEIPTS_PATH],
    ['POST', `${TWILIO_RECEIPTS_PATH}/`],
  ])('answers %s %s with 404, whatever the Host', async (method, path) => {
    // Prepare
    const url = `${receiptsUrlOf(pipe)}${path}`;
    const headers = { 'content-type': 'application/json', host: TUNNEL_HOST };

    // Act
    const answer = await send(url, { method, headers, ...(method === 'POST' ? { body: '{}' } : {}) });

    // Assess
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'route_not_found' });
  });

  it('serves the console and the API on the API port only', async () => {
    // Act
    const consolePage = await fetch(`${pipe.stack.apiUrl}/console`);
    const openapi = await fetch(`${pipe.stack.apiUrl}/v1/openapi.json`);

    // Assess: the 404s above are the listener's choice, not missing routes.
    expect([consolePage.status, openapi.status]).toEqual([200, 200]);
  });

  it("settles a message with the simulator's signed callbacks through the listener", async () => {
    // Prepare
    const key = uniqueName('listener-receipt');

    // Act
    for (const k of [key, `${key}-2`, `${key}-3`]) {
      expect((await pipe.post(aRequestBody(), { 'idempotency-key': k })).status).toBe(202);
    }
    for (const k of [key, `${key}-2`, `${key}-3`]) await pipe.waitFor(k, ['delivered']);

    // Assess: receipts or a status poll may win each race; receipts win some, and the trail stays one.
    const trails = await Promise.all([key, `${key}-2`, `${key}-3`].map((k) => pipe.evidence(k)));
    for (const trail of trails) expectConsistentTrail(trail, 'delivered');
    expect(trails.flat().map((t) => t.actor)).toContain('receipt');
  });
});

describe('the local stack behind a tunnel (the callback base is its public URL)', () => {
  let pipe: Pipeline;

  beforeAll(async () => {
    pipe = await startPipeline({
      env: settingsEnv({
        twilioStatusCallbackBase: `https://${TUNNEL_HOST}${TWILIO_RECEIPTS_PATH}`,
        receiptsPort: 0,
        // No status poll: only the callback below can settle the message.
        receiptGrace: 600,
      }),
    });
  });
  afterAll(() => pipe.stop());

  /** A status callback as Twilio signs it: over the public URL it was given. */
  async function aSignedCallback(key: string, status: string) {
    const [message] = await pipe.messages(key);
    if (message === undefined) throw new Error('no message in the ledger');
    const query = `client_reference=${encodeURIComponent(`${key}#1`)}`;
    const form = new URLSearchParams({
      AccountSid: pipe.stack.config.providerAccountSid,
      ApiVersion: '2010-04-01',
      MessageSid: message.id,
      MessageStatus: status,
      SmsSid: message.id,
      SmsStatus: status,
    });
    const signature = twilioSignature(
      SETTINGS.twilioAuthToken.local,
      `https://${TUNNEL_HOST}${TWILIO_RECEIPTS_PATH}?${query}`,
      form,
    );
    return {
      pathAndQuery: `${TWILIO_RECEIPTS_PATH}?${query}`,
      init: {
        method: 'POST',
        headers: {
          host: TUNNEL_HOST,
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': signature,
          'x-forwarded-proto': 'https',
        },
        body: form.toString(),
      },
    };
  }

  it('applies a signed callback forwarded with the public Host; the API port refuses that Host', async () => {
    // Prepare: the simulator's own callbacks go to the unreachable public name, as with no tunnel.
    const key = uniqueName('tunnel');
    expect((await pipe.post(aRequestBody(), { 'idempotency-key': key })).status).toBe(202);
    await pipe.waitFor(key, ['sent']);
    const callback = await aSignedCallback(key, 'delivered');

    // Act
    const throughApi = await send(`${pipe.stack.apiUrl}${callback.pathAndQuery}`, callback.init);
    const throughListener = await send(`${receiptsUrlOf(pipe)}${callback.pathAndQuery}`, callback.init);

    // Assess
    expect(throughApi.status).toBe(421);
    expect(throughListener.status).toBe(200);
    const trail = await pipe.evidence(key);
    expect(trail.at(-1)).toMatchObject({ to_state: 'delivered', actor: 'receipt' });
    expectConsistentTrail(trail, 'delivered');
  });

  it('refuses an unsigned callback through the listener and writes nothing', async () => {
    // Prepare
    const key = uniqueName('tunnel-forged');
    await pipe.post(aRequestBody(), { 'idempotency-key': key });
    await pipe.waitFor(key, ['sent']);
    const callback = await aSignedCallback(key, 'undelivered');
    const before = await pipe.evidence(key);
    const { 'x-twilio-signature': _dropped, ...unsigned } = callback.init.headers;

    // Act
    const answer = await send(`${receiptsUrlOf(pipe)}${callback.pathAndQuery}`, {
      ...callback.init,
      headers: unsigned,
    });

    // Assess
    expect(answer.status).toBe(403);
    expect(await pipe.evidence(key)).toEqual(before);
  });
});

describe('the local confirmation route', () => {
  let pipe: Pipeline;

  beforeAll(async () => {
    pipe = await startPipeline();
  });
  afterAll(() => pipe.stop());

  it.each([
    ['an empty body with no Content-Type (a form-less fetch)', {}, undefined, 415],
    ['a text/plain body (a no-cors fetch)', { 'content-type': 'text/plain' }, '{}', 415],
    ['a form body', { 'content-type': 'application/x-www-form-urlencoded' }, 'confirmed_at=x', 415],
    [
      'a cross-site POST as a browser sends it',
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      undefined,
      403,
    ],
    [
      'a JSON POST from another port of localhost',
      { 'content-type': 'application/json', origin: 'http://localhost:5173', 'sec-fetch-site': 'same-site' },
      '{}',
      403,
    ],
  ])('refuses %s and records nothing', async (_label, headers, body, status) => {
    // Prepare
    const key = uniqueName('confirm-xsite');
    await pipe.post(aRequestBody(), { 'idempotency-key': key });
    await pipe.waitFor(key, ['delivered']);

    // Act
    const answer = await fetch(
      `${pipe.stack.apiUrl}/v1/notifications/${encodeURIComponent(key)}/confirmation`,
      {
        method: 'POST',
        headers,
        ...(body === undefined ? {} : { body }),
      },
    );

    // Assess
    expect(answer.status).toBe(status);
    expect((await pipe.evidence(key)).filter((t) => t.reason === 'user_confirmed')).toEqual([]);
  });

  it('records a same-origin JSON confirmation', async () => {
    // Prepare
    const key = uniqueName('confirm-same');
    await pipe.post(aRequestBody(), { 'idempotency-key': key });
    await pipe.waitFor(key, ['delivered']);
    const url = `${pipe.stack.apiUrl}/v1/notifications/${encodeURIComponent(key)}/confirmation`;

    // Act
    const answer = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: new URL(url).origin,
        'sec-fetch-site': 'same-origin',
      },
      body: '{}',
    });

    // Assess
    expect(answer.status).toBe(200);
    expect((await pipe.evidence(key)).filter((t) => t.reason === 'user_confirmed')).toHaveLength(1);
  });
});
