import type { APIGatewayProxyEventV2, Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createLocalCipher } from '../../../shared/adapters/local-cipher.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';
import { createApiHandler } from '../../../shared/handlers/api-handler.js';
import { createSenderHandler } from '../../../shared/handlers/sender-handler.js';
import type { SmsProvider } from '../../../shared/ports/sms-provider.js';
import type { NotificationStore } from '../../../shared/ports/store.js';
import { ManualClock } from '../../support/manual-clock.js';

const context = { awsRequestId: 'r1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

function anEvent(method: string, path: string, body?: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'Content-Type': 'application/json' },
    requestContext: { http: { method, path } } as APIGatewayProxyEventV2['requestContext'],
    isBase64Encoded: false,
    ...(body === undefined ? {} : { body }),
  };
}

/** A store whose every call fails: what a DynamoDB outage looks like to the handler. */
const brokenStore = new Proxy({} as NotificationStore, {
  get: () => async () => {
    throw new Error('ProvisionedThroughputExceededException: table internal-name-123');
  },
});

function anApiHandler(store: NotificationStore, logged: unknown[]) {
  return createApiHandler({
    store,
    cipher: createLocalCipher(Buffer.alloc(32, 1)),
    fingerprinter: createFingerprinter(Buffer.alloc(32, 2)),
    clock: new ManualClock(Date.UTC(2026, 10, 29, 12)),
    policy: DEFAULT_POLICY,
    providerName: 'simulator',
    maxExpiryMs: 24 * 3_600_000,
    logError: (error) => logged.push(error),
  });
}

describe('api handler error mapping', () => {
  it('turns an unexpected failure into a generic 500 that leaks nothing, and logs it', async () => {
    // Prepare
    const logged: unknown[] = [];
    const handler = anApiHandler(brokenStore, logged);
    // Act
    const response = await handler(anEvent('GET', '/v1/notifications/k1'), context);
    // Assess
    expect(response.statusCode).toBe(500);
    expect(JSON.parse(String(response.body))).toEqual({ code: 'internal_error', message: 'internal error' });
    expect(String(response.body)).not.toContain('internal-name');
    expect(logged).toHaveLength(1);
  });

  it('answers 404 for an unknown route and 405 for a wrong method, with the error shape', async () => {
    const handler = anApiHandler(brokenStore, []);
    const missing = await handler(anEvent('GET', '/v2/else'), context);
    const wrongMethod = await handler(anEvent('DELETE', '/v1/notifications/k1'), context);
    expect([missing.statusCode, wrongMethod.statusCode]).toEqual([404, 405]);
    expect(JSON.parse(String(wrongMethod.body))).toMatchObject({ code: 'method_not_allowed' });
  });

  it('normalises header case (Content-Type) before checking the media type', async () => {
    const handler = anApiHandler(brokenStore, []);
    const response = await handler(anEvent('POST', '/v1/notifications', '{'), context);
    expect(response.statusCode).toBe(400);
  });
});

describe('sender handler batches', () => {
  it('reports only the messages whose dispatch threw, and drops bodies that are not ours', async () => {
    // Prepare: the store fails for key "bad" only.
    const store = {
      get: async (key: string) => {
        if (key === 'bad') throw new Error('boom');
        return undefined;
      },
    } as unknown as NotificationStore;
    const handler = createSenderHandler({
      store,
      cipher: createLocalCipher(Buffer.alloc(32, 1)),
      provider: {} as SmsProvider,
      clock: new ManualClock(),
      policy: DEFAULT_POLICY,
      owner: 'test',
    });
    const record = (messageId: string, body: string) => ({ messageId, body }) as SQSEvent['Records'][number];
    // Act
    const response = await handler({
      Records: [
        record('m1', '{"idempotency_key":"good","version":1}'),
        record('m2', '{"idempotency_key":"bad","version":1}'),
        record('m3', 'garbage'),
      ],
    });
    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm2' }]);
  });
  it('reports every message when all of them fail, instead of throwing', async () => {
    // Prepare: the store fails for every key.
    const errors: string[] = [];
    const handler = createSenderHandler({
      store: brokenStore,
      cipher: createLocalCipher(Buffer.alloc(32, 1)),
      provider: {} as SmsProvider,
      clock: new ManualClock(),
      policy: DEFAULT_POLICY,
      owner: 'test',
      onError: (key) => errors.push(key),
    });
    const record = (messageId: string, key: string) =>
      ({
        messageId,
        body: JSON.stringify({ idempotency_key: key, version: 1 }),
      }) as SQSEvent['Records'][number];

    // Act
    const response = await handler({ Records: [record('m1', 'a'), record('m2', 'b')] });

    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }]);
    expect(errors).toEqual(['a', 'b']);
  });
});

describe('allowed destinations', () => {
  it('rejects a valid number outside the allowed prefixes with 422 before any storage call', async () => {
    // Prepare: a store that would fail if touched.
    const handler = createApiHandler({
      store: brokenStore,
      cipher: createLocalCipher(Buffer.alloc(32, 1)),
      fingerprinter: createFingerprinter(Buffer.alloc(32, 2)),
      clock: new ManualClock(Date.UTC(2026, 10, 29, 12)),
      policy: DEFAULT_POLICY,
      providerName: 'simulator',
      maxExpiryMs: 24 * 3_600_000,
      allowedDestinationPrefixes: ['+44'],
      logError: () => undefined,
    });
    const body = JSON.stringify({
      event_id: 'evt-1',
      channel: 'sms',
      template: 'password_reset',
      destination: { phone: '+14155550123' },
      expires_at: '2026-11-29T12:10:00Z',
      params: { code: '483920' },
    });
    // Act
    const response = await handler(anEvent('POST', '/v1/notifications', body), context);
    // Assess
    expect(response.statusCode).toBe(422);
    expect(JSON.parse(String(response.body)).errors).toEqual([
      { path: 'destination.phone', message: 'is not an allowed destination' },
    ]);
  });
});
