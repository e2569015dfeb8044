import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../../shared/adapters/dynamodb/errors.js';
import { createLocalCipher } from '../../../shared/adapters/local-cipher.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';
import { createApiHandler, DEADLINE_MARGIN_MS } from '../../../shared/handlers/api-handler.js';
import { renderOpenApiDocument } from '../../../shared/http/openapi.js';
import type { NotificationStore } from '../../../shared/ports/store.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';

const context = { awsRequestId: 'r1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
const NOW = Date.UTC(2026, 10, 29, 12);

function anEvent(method: string, path: string, body?: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    requestContext: { http: { method, path } } as APIGatewayProxyEventV2['requestContext'],
    isBase64Encoded: false,
    ...(body === undefined ? {} : { body }),
  };
}

const aBody = () =>
  JSON.stringify({
    event_id: 'evt-1',
    channel: 'sms',
    template: 'password_reset',
    destination: { phone: '+14155550123' },
    expires_at: new Date(NOW + 600_000).toISOString(),
    params: { code: '483920' },
  });

/** A store whose every call throws `fault()`. */
const failingWith = (fault: () => Error) =>
  new Proxy({} as NotificationStore, {
    get: () => async () => {
      throw fault();
    },
  });

/** A store whose every call waits forever (a dependency slower than the function's time). */
const neverAnswering = new Proxy({} as NotificationStore, {
  get: () => () => new Promise(() => undefined),
});

function anApiHandler(store: NotificationStore, logged: unknown[] = [], onDeadline?: () => void) {
  return createApiHandler({
    ...(onDeadline ? { onDeadline } : {}),
    store,
    cipher: createLocalCipher(Buffer.alloc(32, 1)),
    fingerprinter: createFingerprinter(Buffer.alloc(32, 2)),
    clock: new ManualClock(NOW),
    policy: DEFAULT_POLICY,
    providerName: 'simulator',
    maxExpiryMs: 24 * 3_600_000,
    logError: (error) => logged.push(error),
  });
}

describe('api handler: retry-safe faults answer 503 with Retry-After', () => {
  it.each([
    ['POST', '/v1/notifications', aBody()],
    ['GET', '/v1/notifications/k1', undefined],
    ['GET', '/v1/notifications/k1/evidence', undefined],
    ['GET', '/v1/notifications?event_id=e', undefined],
  ])('%s %s: a throttled store is 503 temporarily_unavailable', async (method, path, body) => {
    // Prepare
    const throttled = () =>
      new StoreUnavailableError('get: DynamoDB is temporarily unavailable', {
        cause: new Error('ProvisionedThroughputExceededException: table internal-name'),
        retryAfterSeconds: 2,
      });
    const handler = anApiHandler(failingWith(throttled));
    const [rawPath, query] = path.split('?');
    const event = {
      ...anEvent(method, rawPath as string, body),
      ...(query ? { queryStringParameters: { event_id: query.split('=')[1] as string } } : {}),
    };

    // Act
    const response = await handler(event, context);

    // Assess
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toBe('2');
    expect(JSON.parse(String(response.body))).toEqual({
      code: 'temporarily_unavailable',
      message: expect.stringContaining('retry with the same Idempotency-Key'),
    });
    expect(String(response.body)).not.toContain('internal-name');
  });

  it('keeps a bug a generic 500 (no Retry-After), logged', async () => {
    // Prepare
    const logged: unknown[] = [];
    const handler = anApiHandler(
      failingWith(() => new TypeError('cannot read properties of undefined')),
      logged,
    );

    // Act
    const response = await handler(anEvent('GET', '/v1/notifications/k1'), context);

    // Assess
    expect(response.statusCode).toBe(500);
    expect(response.headers?.['retry-after']).toBeUndefined();
    expect(logged).toHaveLength(1);
  });

  it('a request that runs out of the function time is 503 with Retry-After, not a 500', async () => {
    // Prepare: the time left is the margin itself, so the deadline falls due at once.
    const logged: unknown[] = [];
    let deadlines = 0;
    const handler = anApiHandler(neverAnswering, logged, () => deadlines++);
    const almostOut = { ...context, getRemainingTimeInMillis: () => DEADLINE_MARGIN_MS } as Context;

    // Act
    const response = await handler(anEvent('POST', '/v1/notifications', aBody()), almostOut);

    // Assess
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toBe('1');
    expect(JSON.parse(String(response.body))).toMatchObject({ code: 'temporarily_unavailable' });
    expect(deadlines).toBe(1);
    expect(logged).toEqual([]);
  });

  it('answers 202 with a Location header naming the notification', async () => {
    // Prepare
    const handler = anApiHandler(new MemoryNotificationStore());

    // Act
    const response = await handler(anEvent('POST', '/v1/notifications', aBody()), context);

    // Assess
    expect(response.statusCode).toBe(202);
    const view = JSON.parse(String(response.body)) as { idempotency_key: string };
    expect(response.headers?.location).toBe(`/v1/notifications/${encodeURIComponent(view.idempotency_key)}`);
  });

  it('serves the OpenAPI document at GET /v1/openapi.json', async () => {
    // Prepare
    const handler = anApiHandler(new MemoryNotificationStore());

    // Act
    const response = await handler(anEvent('GET', '/v1/openapi.json'), context);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['content-type']).toBe('application/json');
    expect(response.body).toBe(renderOpenApiDocument());
  });
});
