/**
 * Issue 25 item 8: every bad input is a 4xx. A table of routes and the bad inputs each takes
 * (oversized keys, internal partition keys, characters no key can hold, broken encodings,
 * malformed bodies), each sent to the API on DynamoDB Local: the answer is a 4xx with the
 * documented error shape, a field error naming the input when the input is a field, no error
 * reaches the error log, and the table is exactly as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_GUARD_PREFIX } from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { startApiHarness } from '../support/api-harness.js';
import { aRequestBody } from '../support/fixtures.js';

type Harness = Awaited<ReturnType<typeof startApiHarness>>;
let api: Harness;
/** The partition keys of the service's own items: a budget counter and an event guard. */
let internal: { counter: string; guard: string };

beforeAll(async () => {
  api = await startApiHarness({ env: { DESTINATION_LIMITS: '3/15m' } });
  // Prepare the table's internal items: an admission (its budget counter and event guard) and the
  // reconciler's cursor, so a key naming their partitions finds something there.
  const admitted = await api.post(aRequestBody());
  expect(admitted.status).toBe(202);
  expect(await api.store.writeReconcileCursor(0, { '0': 'x' })).toBe(true);
  const pks = (await api.scan()).map((i) => String(i[TableSchema.partitionKey]));
  internal = {
    counter: pks.find((pk) => pk.startsWith('LIMIT#dst#')) ?? 'missing',
    guard: pks.find((pk) => pk.startsWith(EVENT_GUARD_PREFIX)) ?? 'missing',
  };
});
afterAll(async () => {
  await api.stop();
});

/** Keys no command can have, each already percent-encoded for a path segment or a query. */
function badKeys(): ReadonlyArray<readonly [string, string]> {
  const enc = encodeURIComponent;
  return [
    ['over 2,048 bytes', 'k'.repeat(2_049)],
    ['over 2,048 bytes of UTF-8', enc('ключ'.repeat(300))],
    ['256 characters', 'k'.repeat(256)],
    ["the reconciler's cursor partition", enc(TableSchema.reconcileCursorKey.pk)],
    ['a budget counter partition', enc(internal.counter)],
    ['an event guard partition', enc(internal.guard)],
    ['a character outside [A-Za-z0-9._:-]', enc('key with spaces')],
    ['a NUL', '%00'],
    ['non-ASCII letters', enc('ключ')],
    ['broken percent-encoding', '%E0%A4%A'],
    ['a lone surrogate, encoded', '%ED%A0%80'],
  ];
}

interface Case {
  readonly route: string;
  readonly input: string;
  readonly method: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** The field error's path, when the bad input is a field. */
  readonly field?: string;
}

/** Every route that takes a key, event id, header or body, with every bad input it takes. */
function cases(): Case[] {
  const json = { 'content-type': 'application/json' };
  const keyed = badKeys().flatMap(([input, key]): Case[] => [
    {
      route: 'GET view',
      input,
      method: 'GET',
      path: `/v1/notifications/${key}`,
      field: 'path.idempotency_key',
    },
    {
      route: 'GET evidence',
      input,
      method: 'GET',
      path: `/v1/notifications/${key}/evidence`,
      field: 'path.idempotency_key',
    },
    {
      route: 'POST confirmation',
      input,
      method: 'POST',
      path: `/v1/notifications/${key}/confirmation`,
      field: 'path.idempotency_key',
    },
    {
      route: 'POST confirmation with a body',
      input,
      method: 'POST',
      path: `/v1/notifications/${key}/confirmation`,
      headers: json,
      body: JSON.stringify({ confirmed_at: new Date().toISOString() }),
      field: 'path.idempotency_key',
    },
    {
      route: 'GET list',
      input,
      method: 'GET',
      path: `/v1/notifications?event_id=${key}`,
      field: 'query.event_id',
    },
  ]);
  const post = (
    input: string,
    body: unknown,
    field?: string,
    headers: Record<string, string> = {},
  ): Case => ({
    route: 'POST notification',
    input,
    method: 'POST',
    path: '/v1/notifications',
    headers: { ...json, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(field ? { field } : {}),
  });
  return [
    ...keyed,
    {
      route: 'GET list',
      input: 'an empty event_id',
      method: 'GET',
      path: '/v1/notifications?event_id=',
      field: 'query.event_id',
    },
    {
      route: 'GET list',
      input: 'two event_ids',
      method: 'GET',
      path: '/v1/notifications?event_id=a&event_id=b',
      field: 'query.event_id',
    },
    post('an Idempotency-Key over 2,048 bytes', aRequestBody(), 'headers.idempotency-key', {
      'idempotency-key': 'k'.repeat(3_000),
    }),
    post('an Idempotency-Key naming the cursor partition', aRequestBody(), 'headers.idempotency-key', {
      'idempotency-key': TableSchema.reconcileCursorKey.pk,
    }),
    post('an Idempotency-Key naming a budget counter', aRequestBody(), 'headers.idempotency-key', {
      'idempotency-key': internal.counter,
    }),
    post('an event_id over 2,048 bytes', aRequestBody({ event_id: 'e'.repeat(3_000) }), 'event_id'),
    post(
      'an event_id naming the cursor partition',
      aRequestBody({ event_id: '_control#reconciler' }),
      'event_id',
    ),
    post(
      'a phone number over 2,048 bytes',
      aRequestBody({ destination: { phone: `+1${'4'.repeat(3_000)}` } }),
      'destination.phone',
    ),
    post(
      'a phone number as a number',
      aRequestBody({ destination: { phone: 14155550123 } }),
      'destination.phone',
    ),
    post('a code over 2,048 bytes', aRequestBody({ params: { code: '1'.repeat(3_000) } }), 'params.code'),
    post(
      'a reset URL over 2,048 bytes',
      aRequestBody({ params: { reset_url: `https://id.example.com/${'r'.repeat(3_000)}` } }),
      'params.reset_url',
    ),
    post('expires_at as a number', aRequestBody({ expires_at: Date.now() + 60_000 }), 'expires_at'),
    post('a body of nested arrays', `${'['.repeat(5_000)}${']'.repeat(5_000)}`),
    post('a body that is a bare string', '"x"', '(body)'),
    post('a body that is null', 'null', '(body)'),
  ];
}

/** The documented error body: `{code, message, errors?: [{path, message}]}` and nothing else. */
function expectErrorShape(body: Record<string, unknown>) {
  const { code, message, errors, ...rest } = body;
  expect(code).toMatch(/^[a-z_]+$/);
  expect(typeof message).toBe('string');
  expect(rest).toEqual({});
  for (const e of (errors as unknown[] | undefined) ?? []) {
    expect(e).toEqual({ path: expect.any(String), message: expect.any(String) });
  }
}

describe('every bad input is a 4xx with field errors, and changes nothing', () => {
  it('holds for every route and every bad input of the table', async () => {
    const table = cases();
    const failures: string[] = [];
    for (const c of table) {
      // Prepare
      const before = await api.scan();
      // Act
      const response = await fetch(`${api.url}${c.path}`, {
        method: c.method,
        headers: c.headers ?? {},
        ...(c.body === undefined ? {} : { body: c.body }),
      });
      const text = await response.text();
      // Assess (collected, so one run names every case that fails)
      const label = `${c.route} with ${c.input}: ${response.status} ${text.slice(0, 200)}`;
      const body = JSON.parse(text) as Record<string, unknown>;
      const paths = ((body.errors as { path: string }[] | undefined) ?? []).map((e) => e.path);
      if (response.status < 400 || response.status >= 500) failures.push(label);
      else if (c.field !== undefined && !paths.includes(c.field))
        failures.push(`${label} (no ${c.field} error)`);
      else expectErrorShape(body);
      expect(await api.scan()).toEqual(before);
    }
    expect(failures).toEqual([]);
    expect(api.errors).toEqual([]);
    expect(table.length).toBeGreaterThan(60);
  });
});
