import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createLocalCipher } from '../../../shared/adapters/local-cipher.js';
import { parseDestinationLimits } from '../../../shared/domain/budgets.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';
import { createApiHandler, type Refusal } from '../../../shared/handlers/api-handler.js';
import { DEFAULT_ALLOWED_NUMBER_TYPES } from '../../../shared/http/destination.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';

const context = { awsRequestId: 'r1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
const T0 = Date.UTC(2026, 11, 1, 10, 5);

function anEvent(body: Record<string, unknown>): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/v1/notifications',
    rawQueryString: '',
    headers: { 'Content-Type': 'application/json' },
    requestContext: {
      http: { method: 'POST', path: '/v1/notifications' },
    } as APIGatewayProxyEventV2['requestContext'],
    isBase64Encoded: false,
    body: JSON.stringify(body),
  };
}

let serial = 0;
function aBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: `evt-${++serial}`,
    channel: 'sms',
    template: 'password_reset',
    destination: { phone: '+14155550123' },
    expires_at: new Date(T0 + 10 * 60_000).toISOString(),
    params: { code: '483920' },
    ...overrides,
  };
}

function aHandler(resetUrlHosts: readonly string[] = ['id.example.com']) {
  const store = new MemoryNotificationStore();
  const refusals: Refusal[] = [];
  const handler = createApiHandler({
    store,
    cipher: createLocalCipher(Buffer.alloc(32, 1)),
    fingerprinter: createFingerprinter(Buffer.alloc(32, 2)),
    clock: new ManualClock(T0),
    policy: DEFAULT_POLICY,
    providerName: 'simulator',
    maxExpiryMs: 24 * 3_600_000,
    budgets: { destination: parseDestinationLimits('2/15m'), country: [] },
    destinations: { allowedNumberTypes: DEFAULT_ALLOWED_NUMBER_TYPES, allowedCountries: [] },
    resetUrlHosts,
    maxSmsSegments: 1,
    logError: () => undefined,
    onRefusal: (refusal) => refusals.push(refusal),
  });
  return { post: (body: Record<string, unknown>) => handler(anEvent(body), context), store, refusals };
}

describe('API abuse limits (memory store, manual clock)', () => {
  it('answers a spent budget with 429, Retry-After until its oldest admission leaves the window, and stores nothing', async () => {
    // Prepare
    const api = aHandler();
    await api.post(aBody());
    await api.post(aBody());
    // Act
    const response = await api.post(aBody());
    // Assess
    expect(response.statusCode).toBe(429);
    // Both admissions at T0: 2/15m frees up 15 minutes later.
    expect(response.headers).toMatchObject({ 'retry-after': '900', 'content-type': 'application/json' });
    expect(JSON.parse(String(response.body))).toMatchObject({ code: 'destination_rate_limited' });
    expect(api.store.records()).toHaveLength(2);
    expect(api.refusals).toEqual([
      { code: 'destination_rate_limited', reason: 'destination', country: 'US' },
    ]);
  });

  it('refuses a premium-rate number with 422 destination_not_allowed before the store', async () => {
    // Prepare
    const api = aHandler();
    // Act
    const response = await api.post(aBody({ destination: { phone: '+19005550123' } }));
    // Assess
    expect(response.statusCode).toBe(422);
    expect(JSON.parse(String(response.body))).toMatchObject({
      code: 'destination_not_allowed',
      errors: [{ path: 'destination.phone' }],
    });
    expect(api.store.records()).toEqual([]);
    expect(api.refusals).toEqual([{ code: 'destination_not_allowed', reason: 'number_type', country: 'US' }]);
  });

  it('refuses a reset_url on another host and a body over the segment limit, with field errors', async () => {
    // Prepare
    const api = aHandler();
    // Act
    const host = await api.post(aBody({ params: { reset_url: 'https://evil.example/r' } }));
    const long = await api.post(
      aBody({ params: { reset_url: `https://id.example.com/r?t=${'a'.repeat(100)}` } }),
    );
    // Assess
    for (const response of [host, long]) {
      expect(response.statusCode).toBe(422);
      expect(JSON.parse(String(response.body)).errors).toMatchObject([{ path: 'params.reset_url' }]);
    }
    expect(JSON.parse(String(long.body)).errors[0].message).toMatch(/2 GSM-7 segments long; at most 1/);
    expect(api.store.records()).toEqual([]);
    expect(api.refusals.map((r) => r.reason)).toEqual(['reset_url', 'sms_segments']);
  });

  it.each([
    ['a homograph host (Cyrillic a)', ['paypal.com'], 'https://p\u0430ypal.com/r', /mixes scripts/],
    ['a homograph host as punycode', [], 'https://xn--pypal-4ve.com/r', /mixes scripts/],
    ['an explicit port on an allowed host', ['id.example.com'], 'https://id.example.com:8443/r', /port/],
    [
      'an internationalized host with no allow-list',
      [],
      'https://b\u00FCcher.example/r',
      /internationalized/,
    ],
  ])('refuses %s with 422 and a field error, storing nothing', async (_name, hosts, url, message) => {
    // Prepare
    const api = aHandler(hosts);
    // Act
    const response = await api.post(aBody({ params: { reset_url: url } }));
    // Assess
    expect(response.statusCode).toBe(422);
    const errors = JSON.parse(String(response.body)).errors;
    expect(errors).toMatchObject([{ path: 'params.reset_url' }]);
    expect(errors[0].message).toMatch(message);
    expect(api.store.records()).toEqual([]);
  });
});
