import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { postConfirmation } from '../../../shared/handlers/confirmation-route.js';
import { aSentRecord } from '../domain/fixtures.js';
import { seededStore } from '../usecases/seeded-store.js';

const KEY = 'sms:password_reset:evt-1';

function anEvent(body?: string, contentType = 'application/json'): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: `/v1/notifications/${KEY}/confirmation`,
    rawQueryString: '',
    headers: { 'content-type': contentType },
    requestContext: { http: { method: 'POST' } } as APIGatewayProxyEventV2['requestContext'],
    isBase64Encoded: false,
    ...(body === undefined ? {} : { body }),
  };
}

describe('confirmation route', () => {
  it.each([
    ['no body', undefined, 'application/json', 200],
    ['an empty object', '{}', 'application/json', 200],
    ['a confirmed_at', '{"confirmed_at":"2026-11-29T12:00:03Z"}', 'application/json', 200],
    ['malformed JSON', '{', 'application/json', 400],
    ['a form body', 'a=1', 'application/x-www-form-urlencoded', 415],
    ['an unknown field', '{"phone":"+14155550123"}', 'application/json', 422],
    ['a confirmed_at without a zone', '{"confirmed_at":"2026-11-29T12:00:03"}', 'application/json', 422],
  ] as const)('with %s answers %i', async (_label, body, contentType, status) => {
    const { store, clock } = await seededStore(aSentRecord());
    const response = await postConfirmation({ store, clock }, anEvent(body, contentType), KEY);
    expect(response.statusCode).toBe(status);
  });

  it('answers 503 with Retry-After when the write keeps losing races', async () => {
    // Prepare
    const { store, clock } = await seededStore(aSentRecord());
    store.transition = async (applied) => ({ kind: 'stale', current: applied.previous });

    // Act
    const response = await postConfirmation({ store, clock }, anEvent(), KEY);

    // Assess
    expect(response.statusCode).toBe(503);
    expect(response.headers).toMatchObject({ 'retry-after': '1', 'content-type': 'application/json' });
    expect(JSON.parse(String(response.body))).toMatchObject({ code: 'temporarily_unavailable' });
  });

  it('never echoes the body in an error', async () => {
    const { store, clock } = await seededStore(aSentRecord());
    const response = await postConfirmation({ store, clock }, anEvent('{"phone":"+14155550123"}'), KEY);
    expect(String(response.body)).not.toContain('4155550123');
  });
});
