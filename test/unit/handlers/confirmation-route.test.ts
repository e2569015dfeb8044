import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { postConfirmation } from '../../../shared/handlers/confirmation-route.js';
import { aSentRecord } from '../domain/fixtures.js';
import { seededStore } from '../usecases/seeded-store.js';

const KEY = 'sms:password_reset:evt-1';

function anEvent(
  body?: string,
  contentType: string | null = 'application/json',
  headers: Record<string, string> = {},
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: `/v1/notifications/${KEY}/confirmation`,
    rawQueryString: '',
    headers: {
      host: '127.0.0.1:3000',
      ...(contentType === null ? {} : { 'content-type': contentType }),
      ...headers,
    },
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
    ['no body and no Content-Type', undefined, null, 415],
    ['no body and a form type', undefined, 'application/x-www-form-urlencoded', 415],
    ['no body and text/plain', '', 'text/plain', 415],
    ['an unknown field', '{"phone":"+14155550123"}', 'application/json', 422],
    ['a confirmed_at without a zone', '{"confirmed_at":"2026-11-29T12:00:03"}', 'application/json', 422],
  ] as const)('with %s answers %i', async (_label, body, contentType, status) => {
    const { store, clock } = await seededStore(aSentRecord());
    const response = await postConfirmation({ store, clock }, anEvent(body, contentType), KEY);
    expect(response.statusCode).toBe(status);
  });

  it.each([
    ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }, 403],
    ['Sec-Fetch-Site same-site (another port of localhost)', { 'sec-fetch-site': 'same-site' }, 403],
    ['an Origin of another site', { origin: 'https://evil.example' }, 403],
    ['an Origin of another port', { origin: 'http://127.0.0.1:5173' }, 403],
    ['a null Origin (sandboxed frame, file:)', { origin: 'null' }, 403],
    [
      'Sec-Fetch-Site same-origin and its Origin',
      { 'sec-fetch-site': 'same-origin', origin: 'http://127.0.0.1:3000' },
      200,
    ],
    ['Sec-Fetch-Site none (typed by the user)', { 'sec-fetch-site': 'none' }, 200],
    ['neither header (a server-side caller)', {}, 200],
  ] as const)('with %s answers %i', async (_label, headers, status) => {
    // Prepare
    const { store, clock } = await seededStore(aSentRecord());

    // Act
    const response = await postConfirmation(
      { store, clock },
      anEvent('{}', 'application/json', headers),
      KEY,
    );

    // Assess
    expect(response.statusCode).toBe(status);
    if (status === 403)
      expect(JSON.parse(String(response.body))).toMatchObject({ code: 'cross_site_request' });
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
