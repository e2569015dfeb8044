import { describe, expect, it } from 'vitest';
import {
  type AdmitRequest,
  createResetNotifierClient,
  type FetchLike,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from '../../../shared/client/index.js';

const T0 = Date.UTC(2026, 10, 29, 12);

const aRequest = (expiresInMs = 10 * 60_000): AdmitRequest => ({
  event_id: 'evt-1',
  channel: 'sms',
  template: 'password_reset',
  destination: { phone: '+14155550123' },
  expires_at: new Date(T0 + expiresInMs).toISOString(),
  params: { code: '483920' },
});

const view = {
  idempotency_key: 'reset-1',
  event_id: 'evt-1',
  channel: 'sms',
  template: 'password_reset',
  state: 'accepted',
  attempts: 0,
  created_at: new Date(T0).toISOString(),
  updated_at: new Date(T0).toISOString(),
  expires_at: new Date(T0 + 600_000).toISOString(),
  destination_fingerprint: 'fp',
  provider: { name: 'simulator' },
};

type Scripted = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

/** A client whose fetch answers from `script` in order, with a manual clock advanced by `sleep`. */
function scriptedClient(script: Scripted[], options: { maxAttempts?: number } = {}) {
  let clock = T0;
  const calls: Array<{ url: string; method: string; headers: Record<string, string>; body?: string }> = [];
  const sleeps: number[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({
      url,
      method: String(init.method),
      headers: init.headers as Record<string, string>,
      ...(typeof init.body === 'string' ? { body: init.body } : {}),
    });
    const next = script.shift();
    if (next === undefined) throw new Error('script exhausted');
    if (next instanceof Error) throw next;
    return new Response(next.body === undefined ? null : JSON.stringify(next.body), {
      status: next.status,
      headers: { 'content-type': 'application/json', ...next.headers },
    });
  };
  const client = createResetNotifierClient({
    baseUrl: 'http://127.0.0.1:3000',
    signing: false,
    fetch,
    now: () => clock,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
    random: () => 0.5,
    ...options,
  });
  return { client, calls, sleeps, elapsed: () => clock - T0 };
}

const unavailable = (retryAfter?: string): Scripted => ({
  status: 503,
  body: { code: 'temporarily_unavailable', message: 'retry' },
  ...(retryAfter === undefined ? {} : { headers: { 'retry-after': retryAfter } }),
});

describe('client retries: same Idempotency-Key, Retry-After honoured, bounded by the token', () => {
  it('retries a 503 after its Retry-After with the same key and body, then returns the admission', async () => {
    // Prepare
    const { client, calls, sleeps } = scriptedClient([
      unavailable('2'),
      { status: 202, body: view, headers: { location: '/v1/notifications/reset-1' } },
    ]);

    // Act
    const outcome = await client.admit(aRequest(), { idempotencyKey: 'reset-1' });

    // Assess
    expect(outcome).toEqual({ kind: 'admitted', notification: view, location: '/v1/notifications/reset-1' });
    expect(sleeps).toEqual([2000]);
    expect(calls.map((c) => c.headers['idempotency-key'])).toEqual(['reset-1', 'reset-1']);
    expect(calls[0]?.body).toBe(calls[1]?.body);
  });

  it('sends the key the service would derive when none is given, so retries land on one command', async () => {
    // Prepare
    const { client, calls } = scriptedClient([new TypeError('fetch failed'), { status: 200, body: view }]);

    // Act
    const outcome = await client.admit(aRequest());

    // Assess: a network error (the request may have arrived) is retried; the answer is a replay.
    expect(outcome.kind).toBe('replayed');
    const keys = calls.map((c) => c.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^sms:password_reset:[0-9a-f]{40}$/);
    expect(keys[1]).toBe(keys[0]);
  });

  it('retries timeouts, 500, 502 and 429 with backoff or Retry-After', async () => {
    // Prepare
    const timeout = Object.assign(new Error('aborted'), { name: 'AbortError' });
    const { client, calls, sleeps } = scriptedClient([
      timeout,
      { status: 500, body: { code: 'internal_error', message: 'internal error' } },
      { status: 502, body: { message: 'Internal Server Error' } },
      {
        status: 429,
        body: { code: 'destination_rate_limited', message: 'wait' },
        headers: { 'retry-after': '3' },
      },
      { status: 202, body: view },
    ]);

    // Act
    const outcome = await client.admit(aRequest());

    // Assess
    expect(outcome.kind).toBe('admitted');
    expect(calls).toHaveLength(5);
    // Full jitter at random()=0.5: half of 200, 400, 800 ms; then the 429's Retry-After.
    expect(sleeps).toEqual([100, 200, 400, 3000]);
  });

  it('never waits past the token: a Retry-After beyond expires_at ends with the last answer', async () => {
    // Prepare: the token expires in 20 s, the margin is 5 s, the service asks for 30 s.
    const { client, sleeps } = scriptedClient([
      {
        status: 429,
        body: { code: 'destination_rate_limited', message: 'wait' },
        headers: { 'retry-after': '30' },
      },
    ]);

    // Act
    const outcome = await client.admit(aRequest(20_000));

    // Assess
    expect(outcome).toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 30 });
    expect(sleeps).toEqual([]);
  });

  it('treats API Gateway throttling (429 without a code) that outlasts the retries as unavailable', async () => {
    // Prepare
    const throttled = { status: 429, body: { message: 'Too Many Requests' } };
    const { client, calls } = scriptedClient([throttled, throttled, throttled], { maxAttempts: 3 });

    // Act
    const failure = await client.get('reset-1').catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(ServiceUnavailableError);
    expect(failure).toMatchObject({ attempts: 3, lastStatus: 429 });
    expect(calls).toHaveLength(3);
  });

  it('gives up with ServiceUnavailableError when 503s last until the token’s deadline', async () => {
    // Prepare
    const { client, calls, elapsed } = scriptedClient(
      Array.from({ length: 20 }, () => unavailable('4')),
      { maxAttempts: 20 },
    );

    // Act
    const failure = await client.admit(aRequest(20_000)).catch((error: unknown) => error);

    // Assess: attempts at 0, 4, 8, 12 s; a wait to 16 s would pass expires_at - 5 s = 15 s.
    expect(failure).toBeInstanceOf(ServiceUnavailableError);
    expect(failure).toMatchObject({ code: 'service_unavailable', attempts: 4, lastStatus: 503 });
    expect(calls).toHaveLength(4);
    expect(elapsed()).toBe(12_000);
  });

  it('returns conflicts and rejections as outcomes, and throws on answers a caller cannot act on', async () => {
    // Prepare
    const conflict = { code: 'idempotency_key_reused', message: 'different payload' };
    const invalid = {
      code: 'validation_failed',
      message: 'bad',
      errors: [{ path: 'expires_at', message: 'x' }],
    };
    const { client } = scriptedClient([
      { status: 409, body: conflict },
      { status: 422, body: invalid },
      { status: 415, body: { code: 'unsupported_media_type', message: 'json only' } },
    ]);

    // Act
    const reused = await client.admit(aRequest());
    const rejected = await client.admit(aRequest());
    const bug = await client.admit(aRequest()).catch((error: unknown) => error);

    // Assess
    expect(reused).toEqual({ kind: 'conflict', error: conflict });
    expect(rejected).toEqual({ kind: 'rejected', error: invalid });
    expect(bug).toBeInstanceOf(UnexpectedResponseError);
    expect(bug).toMatchObject({ status: 415, body: { code: 'unsupported_media_type' } });
  });

  it('get, evidence, byEvent and confirm: typed results, undefined for an unknown key', async () => {
    // Prepare
    const notFound = { status: 404, body: { code: 'not_found', message: 'no notification' } };
    const { client, calls } = scriptedClient([
      { status: 200, body: view },
      notFound,
      { status: 200, body: { transitions: [] } },
      { status: 200, body: { items: [view] } },
      { status: 200, body: { ...view, state: 'delivered' } },
      notFound,
    ]);

    // Act
    const got = await client.get('reset-1');
    const missing = await client.get('nope');
    const evidence = await client.evidence('reset-1');
    const byEvent = await client.byEvent('evt-1');
    const confirmed = await client.confirm('reset-1');
    const unknown = await client.confirm('nope');

    // Assess
    expect(got).toEqual(view);
    expect(missing).toBeUndefined();
    expect(evidence).toEqual([]);
    expect(byEvent).toEqual([view]);
    expect(confirmed?.state).toBe('delivered');
    expect(unknown).toBeUndefined();
    expect(calls.map((c) => `${c.method} ${new URL(c.url).pathname}${new URL(c.url).search}`)).toEqual([
      'GET /v1/notifications/reset-1',
      'GET /v1/notifications/nope',
      'GET /v1/notifications/reset-1/evidence',
      'GET /v1/notifications?event_id=evt-1',
      'POST /v1/notifications/reset-1/confirmation',
      'POST /v1/notifications/nope/confirmation',
    ]);
  });

  it('rejects a key the API could not accept before sending anything', async () => {
    // Prepare
    const { client, calls } = scriptedClient([]);

    // Act
    const failure = await client.get('a/b').catch((error: unknown) => error);

    // Assess
    expect(failure).toMatchObject({ code: 'invalid_argument' });
    expect(calls).toEqual([]);
  });
});
