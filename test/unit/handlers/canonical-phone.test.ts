/**
 * Issue 25 item 2: spellings of one number are one number. The API admits the canonical E.164
 * form, so the destination budget, the fingerprints, the sealed payload (what the sender hands
 * the provider as `To`) and a replay's payload comparison all see one string.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createLocalCipher } from '../../../shared/adapters/local-cipher.js';
import { parseDestinationLimits } from '../../../shared/domain/budgets.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';
import { createApiHandler } from '../../../shared/handlers/api-handler.js';
import { DEFAULT_ALLOWED_NUMBER_TYPES } from '../../../shared/http/destination.js';
import { openPayload } from '../../../shared/usecases/payload-seal.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';

const context = { awsRequestId: 'r1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
const T0 = Date.UTC(2026, 11, 1, 10, 5);
const CANONICAL = '+33612345678';
/** The national trunk prefix kept after the country code: the spelling issue 25 sent 6 SMS to. */
const WITH_TRUNK = '+330612345678';

function anEvent(body: Record<string, unknown>, key?: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/v1/notifications',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    requestContext: {
      http: { method: 'POST', path: '/v1/notifications' },
    } as APIGatewayProxyEventV2['requestContext'],
    isBase64Encoded: false,
    body: JSON.stringify(body),
  };
}

let serial = 0;
function aBody(phone: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: `evt-${++serial}`,
    channel: 'sms',
    template: 'password_reset',
    destination: { phone },
    expires_at: new Date(T0 + 10 * 60_000).toISOString(),
    params: { code: '483920' },
    ...overrides,
  };
}

function aHandler(options: { limit?: string; prefixes?: string[] } = {}) {
  const store = new MemoryNotificationStore();
  const cipher = createLocalCipher(Buffer.alloc(32, 1));
  const handler = createApiHandler({
    store,
    cipher,
    fingerprinter: createFingerprinter(Buffer.alloc(32, 2)),
    clock: new ManualClock(T0),
    policy: DEFAULT_POLICY,
    providerName: 'simulator',
    maxExpiryMs: 24 * 3_600_000,
    ...(options.limit
      ? { budgets: { destination: parseDestinationLimits(options.limit), country: [] } }
      : {}),
    destinations: { allowedNumberTypes: DEFAULT_ALLOWED_NUMBER_TYPES, allowedCountries: [] },
    ...(options.prefixes ? { allowedDestinationPrefixes: options.prefixes } : {}),
    logError: () => undefined,
  });
  return {
    store,
    post: async (body: Record<string, unknown>, key?: string) => {
      const response = await handler(anEvent(body, key), context);
      return {
        status: response.statusCode,
        body: JSON.parse(String(response.body)) as Record<string, unknown>,
      };
    },
    /** The phone number the sender will decrypt and hand the provider as `To`. */
    sealedPhone: async (key: string) =>
      (await openPayload(cipher, key, store.sealedPayloadOf(key) ?? '')).phone,
  };
}

describe('API: one number, one spelling (canonical E.164 before budgets, fingerprints and the provider)', () => {
  it('two spellings of one number share one destination budget', async () => {
    // Prepare: one SMS per 15 minutes to a number.
    const api = aHandler({ limit: '1/15m' });
    const first = await api.post(aBody(CANONICAL));
    // Act
    const second = await api.post(aBody(WITH_TRUNK));
    // Assess
    expect(first.status).toBe(202);
    expect([second.status, second.body.code]).toEqual([429, 'destination_rate_limited']);
    expect(api.store.records()).toHaveLength(1);
  });

  it.each([
    ['FR', WITH_TRUNK, CANONICAL],
    ['GB', '+44 (0)7400 123456', '+447400123456'],
    ['DE', '+4901512 3456789', '+4915123456789'],
    ['AU', '+610412345678', '+61412345678'],
    ['CN', '+86013123456789', '+8613123456789'],
    ['RU', '+789123456789', '+79123456789'],
    ['AE', '+9710501234567', '+971501234567'],
    ['HU', '+3606201234567', '+36201234567'],
    ['AR', '+540111523456789', '+5491123456789'],
  ])('%s: %s is stored, fingerprinted and sealed for the provider as %s', async (_c, spelling, canonical) => {
    // Prepare
    const api = aHandler();
    const reference = await api.post(aBody(canonical));
    // Act
    const response = await api.post(aBody(spelling));
    // Assess
    expect([reference.status, response.status]).toEqual([202, 202]);
    expect(response.body.destination_fingerprint).toBe(reference.body.destination_fingerprint);
    expect(await api.sealedPhone(String(response.body.idempotency_key))).toBe(canonical);
  });

  it('the same key and payload in another spelling is a replay, not a conflict', async () => {
    // Prepare
    const api = aHandler();
    const body = aBody(CANONICAL);
    const first = await api.post(body, 'key-spelling-1');
    // Act
    const again = await api.post({ ...body, destination: { phone: '+33 06 12 34 56 78' } }, 'key-spelling-1');
    // Assess
    expect([first.status, again.status]).toEqual([202, 200]);
    expect(again.body).toEqual(first.body);
    expect(api.store.records()).toHaveLength(1);
  });

  it('a second key for the same event, the number in another spelling, is answered with the first command', async () => {
    // Prepare
    const api = aHandler();
    const body = aBody(CANONICAL);
    const first = await api.post(body, 'key-event-1');
    // Act
    const second = await api.post({ ...body, destination: { phone: WITH_TRUNK } }, 'key-event-2');
    // Assess
    expect([first.status, second.status]).toEqual([202, 200]);
    expect(second.body.idempotency_key).toBe('key-event-1');
    expect(api.store.records()).toHaveLength(1);
  });

  it('the prefix allow-list judges the canonical form (a trunk prefix does not dodge it)', async () => {
    // Prepare: only French mobiles starting +336.
    const api = aHandler({ prefixes: ['+336'] });
    // Act
    const response = await api.post(aBody(WITH_TRUNK));
    // Assess
    expect(response.status).toBe(202);
    expect(await api.sealedPhone(String(response.body.idempotency_key))).toBe(CANONICAL);
  });
});
