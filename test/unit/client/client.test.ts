import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type AdmitRequest,
  CredentialsError,
  createResetNotifierClient,
  type FetchLike,
  type ResetNotifierClientOptions,
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
function scriptedClient(script: Scripted[], options: Partial<ResetNotifierClientOptions> = {}) {
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
    // Prepare: the token expires in 20 s, the margin is 5 s, the service asks for 30 s; the
    // call's own budget (60 s) would allow the wait.
    const { client, sleeps } = scriptedClient([
      {
        status: 429,
        body: { code: 'destination_rate_limited', message: 'wait' },
        headers: { 'retry-after': '30' },
      },
    ]);

    // Act
    const outcome = await client.admit(aRequest(20_000), { timeBudgetMs: 60_000 });

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

  it('returns unavailable with the last Retry-After when 503s last until the token’s deadline', async () => {
    // Prepare
    const { client, calls, elapsed } = scriptedClient(
      Array.from({ length: 20 }, () => unavailable('4')),
      { maxAttempts: 20, timeBudgetMs: 60_000 },
    );

    // Act
    const outcome = await client.admit(aRequest(20_000));

    // Assess: attempts at 0, 4, 8, 12 s; a wait to 16 s would pass expires_at - 5 s = 15 s.
    expect(outcome).toEqual({
      kind: 'unavailable',
      retryAfterSeconds: 4,
      attempts: 4,
      lastStatus: 503,
      error: { code: 'temporarily_unavailable', message: 'retry' },
    });
    expect(calls).toHaveLength(4);
    expect(elapsed()).toBe(12_000);
  });

  it('returns API Gateway throttling (429 without a code) from admit as unavailable, not rate_limited', async () => {
    // Prepare
    const throttled = { status: 429, body: { message: 'Too Many Requests' } };
    const { client } = scriptedClient([throttled, throttled], { maxAttempts: 2 });

    // Act
    const outcome = await client.admit(aRequest());

    // Assess
    expect(outcome).toMatchObject({ kind: 'unavailable', attempts: 2, lastStatus: 429, error: undefined });
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
    expect(confirmed).toEqual({ kind: 'confirmed', notification: { ...view, state: 'delivered' } });
    expect(unknown).toEqual({ kind: 'not_found', error: notFound.body });
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

describe('the time budget: a call ends within it, with the server’s Retry-After, instead of sleeping', () => {
  const rateLimited = (retryAfter: string): Scripted => ({
    status: 429,
    body: { code: 'destination_rate_limited', message: 'wait' },
    headers: { 'retry-after': retryAfter },
  });

  it('returns rate_limited at once when Retry-After outlasts the default budget, though the token lives 10 min', async () => {
    // Prepare: the wait fits before expires_at, so the client used to sleep through it (109 s).
    const { client, calls, sleeps, elapsed } = scriptedClient([
      rateLimited('109'),
      { status: 202, body: view },
    ]);

    // Act
    const outcome = await client.admit(aRequest(10 * 60_000));

    // Assess
    expect(outcome).toEqual({
      kind: 'rate_limited',
      error: { code: 'destination_rate_limited', message: 'wait' },
      retryAfterSeconds: 109,
    });
    expect(sleeps).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(elapsed()).toBe(0);
  });

  it('waits a Retry-After that fits in a budget the caller set for this call', async () => {
    // Prepare
    const { client, sleeps } = scriptedClient([rateLimited('20'), { status: 202, body: view }]);

    // Act
    const outcome = await client.admit(aRequest(), { timeBudgetMs: 30_000 });

    // Assess
    expect(outcome.kind).toBe('admitted');
    expect(sleeps).toEqual([20_000]);
  });

  it('stops retrying 503s when the next wait would end past the client’s budget', async () => {
    // Prepare: 503 Retry-After 2 s, budget 5 s: attempts at 0, 2 and 4 s; a wait to 6 s is not slept.
    const { client, calls, elapsed } = scriptedClient(
      Array.from({ length: 6 }, () => unavailable('2')),
      { timeBudgetMs: 5_000 },
    );

    // Act
    const outcome = await client.admit(aRequest());

    // Assess
    expect(outcome).toMatchObject({
      kind: 'unavailable',
      retryAfterSeconds: 2,
      attempts: 3,
      lastStatus: 503,
    });
    expect(calls).toHaveLength(3);
    expect(elapsed()).toBe(4_000);
  });

  it('reads throw ServiceUnavailableError once their budget has run out', async () => {
    // Prepare
    const { client, calls } = scriptedClient(
      Array.from({ length: 6 }, () => unavailable('2')),
      { timeBudgetMs: 3_000 },
    );

    // Act
    const failure = await client.get('reset-1').catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(ServiceUnavailableError);
    expect(failure).toMatchObject({ attempts: 2, lastStatus: 503 });
    expect(calls).toHaveLength(2);
  });

  it('refuses a budget that is not a positive number of milliseconds', () => {
    // Act
    const build = () =>
      createResetNotifierClient({ baseUrl: 'http://127.0.0.1:3000', signing: false, timeBudgetMs: 0 });

    // Assess
    expect(build).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });

  describe('an attempt that hangs', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('is aborted when the budget ends, before its own attempt timeout', async () => {
      // Prepare: a server that never answers; budget 1 s, attempt timeout 2 s (the default).
      vi.useFakeTimers({ now: T0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const hanging: FetchLike = (_url, init) =>
        new Promise((_resolve, reject) => {
          init.signal?.addEventListener('abort', () =>
            reject(Object.assign(new Error('aborted'), { name: 'AbortError' })),
          );
        });
      const client = createResetNotifierClient({
        baseUrl: 'http://127.0.0.1:3000',
        signing: false,
        fetch: hanging,
        timeBudgetMs: 1_000,
      });

      // Act
      const pending = client.admit(aRequest());
      await vi.advanceTimersByTimeAsync(1_000);
      const outcome = await pending;

      // Assess
      expect(outcome).toMatchObject({ kind: 'unavailable', attempts: 1, lastStatus: undefined });
      expect(outcome.kind === 'unavailable' && (outcome.cause as Error).name).toBe('AbortError');
      expect(Date.now() - T0).toBe(1_000);
    });
  });
});

describe('confirm returns outcomes like admit', () => {
  it('answers confirmed, already_confirmed, not_found, not_sent and unavailable', async () => {
    // Prepare
    const notSent = { code: 'not_sent', message: 'this notification was never sent' };
    const { client } = scriptedClient(
      [
        { status: 200, body: view },
        { status: 200, body: view, headers: { 'idempotent-replayed': 'true' } },
        { status: 404, body: { code: 'not_found', message: 'no notification' } },
        { status: 409, body: notSent },
        unavailable('1'),
        unavailable('1'),
      ],
      { maxAttempts: 2 },
    );

    // Act
    const confirmed = await client.confirm('reset-1');
    const again = await client.confirm('reset-1');
    const unknown = await client.confirm('nope');
    const neverSent = await client.confirm('reset-2');
    const busy = await client.confirm('reset-3');

    // Assess
    expect(confirmed).toEqual({ kind: 'confirmed', notification: view });
    expect(again).toEqual({ kind: 'already_confirmed', notification: view });
    expect(unknown).toMatchObject({ kind: 'not_found', error: { code: 'not_found' } });
    expect(neverSent).toEqual({ kind: 'not_sent', error: notSent });
    expect(busy).toMatchObject({ kind: 'unavailable', attempts: 2, retryAfterSeconds: 1, lastStatus: 503 });
  });
});

describe('credentials', () => {
  const CREDENTIAL_ENV = [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_CONFIG_FILE',
    'AWS_SHARED_CREDENTIALS_FILE',
    'AWS_WEB_IDENTITY_TOKEN_FILE',
    'AWS_ROLE_ARN',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    'AWS_EC2_METADATA_DISABLED',
  ];
  const saved = Object.fromEntries(CREDENTIAL_ENV.map((name) => [name, process.env[name]]));
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('reports a credential provider that fails as CredentialsError, sending nothing and not retrying', async () => {
    // Prepare
    const { client, calls, sleeps } = scriptedClient([], {
      signing: {
        region: 'eu-west-1',
        credentials: async () => {
          throw Object.assign(new Error('Could not load credentials from any providers'), {
            name: 'CredentialsProviderError',
          });
        },
      },
    });

    // Act
    const failure = await client.admit(aRequest()).catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(CredentialsError);
    expect(failure).toMatchObject({ code: 'credentials_unavailable' });
    expect(String(failure)).toContain('Could not load credentials from any providers');
    expect(String(failure)).toContain('nothing was sent');
    expect(calls).toEqual([]);
    expect(sleeps).toEqual([]);
  });

  it('reports the default chain finding no credentials as CredentialsError, not an unavailable service', async () => {
    // Prepare: no keys, no profile files, no container or instance metadata.
    for (const name of CREDENTIAL_ENV) delete process.env[name];
    process.env.AWS_CONFIG_FILE = '/nonexistent/aws-config';
    process.env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/aws-credentials';
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
    const { client, calls, sleeps } = scriptedClient([], { signing: { region: 'eu-west-1' } });

    // Act
    const failure = await client.confirm('reset-1').catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(CredentialsError);
    expect((failure as Error).message).not.toMatch(/attempt/);
    expect(calls).toEqual([]);
    expect(sleeps).toEqual([]);
  });
});
