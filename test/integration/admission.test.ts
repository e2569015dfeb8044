import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startApiHarness } from '../support/api-harness.js';
import { aRequestBody, OTHER_PHONE, TEST_CODE, TEST_PHONE, TEST_URL } from '../support/fixtures.js';

type Harness = Awaited<ReturnType<typeof startApiHarness>>;
let api: Harness;

beforeAll(async () => {
  api = await startApiHarness();
});
afterAll(async () => {
  await api.stop();
});

async function commandCount(): Promise<number> {
  return (await api.scan()).filter((i) => i.sk === 'CMD').length;
}

describe('POST /v1/notifications admission', () => {
  it('admits 50 concurrent identical requests exactly once; the rest are replays with the same body', async () => {
    // Prepare
    const body = aRequestBody();
    const before = await commandCount();
    // Act
    const responses = await Promise.all(Array.from({ length: 50 }, () => api.post(body)));
    const bodies = await Promise.all(responses.map((r) => r.json()));
    // Assess
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    for (const r of responses.filter((r) => r.status === 200)) {
      expect(r.headers.get('idempotent-replayed')).toBe('true');
    }
    const first = bodies[statuses.indexOf(202)];
    for (const b of bodies) expect(b).toEqual(first);
    expect(first).toMatchObject({ event_id: body.event_id, state: 'accepted', attempts: 0, channel: 'sms' });
    expect(await commandCount()).toBe(before + 1);
    expect(api.errors).toEqual([]);
  });

  it('rejects the same key with another phone or another code as 409 and leaves the command unchanged', async () => {
    // Prepare
    const body = aRequestBody();
    const created = await api.post(body);
    const key = ((await created.json()) as { idempotency_key: string }).idempotency_key;
    const before = await api.store.get(key);
    // Act
    const otherPhone = await api.post({ ...body, destination: { phone: OTHER_PHONE } });
    const otherCode = await api.post({ ...body, params: { code: '111111' } });
    // Assess
    for (const response of [otherPhone, otherCode]) {
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ code: 'idempotency_key_reused' });
    }
    expect(await api.store.get(key)).toEqual(before);
  });

  it('uses the Idempotency-Key header when given, and derives a stable key otherwise', async () => {
    // Prepare
    const body = aRequestBody();
    // Act
    const withHeader = await api.post(body, { 'idempotency-key': 'reset:custom-key-1' });
    const derivedBody = aRequestBody({ event_id: 'evt-derived-1' });
    const derivedA = await api.post(derivedBody);
    const derivedB = await api.post(derivedBody);
    const derivedOtherExpiry = await api.post({
      ...derivedBody,
      expires_at: new Date(Date.now() + 60 * 60_000).toISOString(),
    });
    // Assess
    expect(((await withHeader.json()) as { idempotency_key: string }).idempotency_key).toBe(
      'reset:custom-key-1',
    );
    const a = (await derivedA.json()) as { idempotency_key: string };
    const b = (await derivedB.json()) as { idempotency_key: string };
    expect(a.idempotency_key).toBe(b.idempotency_key);
    expect([derivedA.status, derivedB.status]).toEqual([202, 200]);
    // Same event, different expiry: a different payload under the same derived key.
    expect(derivedOtherExpiry.status).toBe(409);
  });

  const badRequests: ReadonlyArray<[string, () => Promise<Response>, number, string]> = [
    ['malformed JSON', () => api.post('{"event_id": '), 400, 'malformed_json'],
    ['missing fields', () => api.post({ channel: 'sms' }), 422, 'validation_failed'],
    [
      'a bad phone number',
      () => api.post(aRequestBody({ destination: { phone: '4155550123' } })),
      422,
      'validation_failed',
    ],
    [
      'an impossible phone number',
      () => api.post(aRequestBody({ destination: { phone: '+1415555012' } })),
      422,
      'validation_failed',
    ],
    [
      'expires_at in the past',
      () => api.post(aRequestBody({ expires_at: new Date(Date.now() - 60_000).toISOString() })),
      422,
      'already_expired',
    ],
    [
      'expires_at inside the dispatch margin',
      () => api.post(aRequestBody({ expires_at: new Date(Date.now() + 2_000).toISOString() })),
      422,
      'already_expired',
    ],
    [
      'expires_at more than 24 h ahead',
      () => api.post(aRequestBody({ expires_at: new Date(Date.now() + 25 * 3_600_000).toISOString() })),
      422,
      'validation_failed',
    ],
    [
      'expires_at without a zone',
      () => api.post(aRequestBody({ expires_at: '2026-11-29T23:10:00' })),
      422,
      'validation_failed',
    ],
    [
      'both code and url',
      () => api.post(aRequestBody({ params: { code: TEST_CODE, reset_url: TEST_URL } })),
      422,
      'validation_failed',
    ],
    [
      'an http reset url',
      () => api.post(aRequestBody({ params: { reset_url: 'http://id.example.com/r' } })),
      422,
      'validation_failed',
    ],
    ['an unknown field', () => api.post(aRequestBody({ note: 'x' })), 422, 'validation_failed'],
    [
      'a bad Idempotency-Key',
      () => api.post(aRequestBody(), { 'idempotency-key': 'has spaces' }),
      422,
      'validation_failed',
    ],
    [
      'an oversize body',
      () => api.post(aRequestBody({ event_id: 'x'.repeat(17_000) })),
      413,
      'payload_too_large',
    ],
    [
      'a wrong content type',
      () => api.post(JSON.stringify(aRequestBody()), { 'content-type': 'text/plain' }),
      415,
      'unsupported_media_type',
    ],
  ];

  for (const [what, send, status, code] of badRequests) {
    it(`answers ${status} ${code} for ${what} and stores nothing`, async () => {
      // Prepare
      const before = await api.scan();
      // Act
      const response = await send();
      // Assess
      expect(response.status).toBe(status);
      const body = (await response.json()) as { code: string; message: string; errors?: unknown[] };
      expect(body.code).toBe(code);
      expect(typeof body.message).toBe('string');
      if (status === 422) expect(body.errors?.length).toBeGreaterThan(0);
      expect(await api.scan()).toEqual(before);
    });
  }

  it('lists field errors with paths and never echoes the rejected value', async () => {
    // Act
    const response = await api.post(
      aRequestBody({ destination: { phone: '+1999' }, params: { code: 'abc' } }),
    );
    // Assess
    const body = (await response.json()) as { errors: { path: string; message: string }[] };
    expect(body.errors.map((e) => e.path)).toEqual(expect.arrayContaining(['destination.phone']));
    expect(JSON.stringify(body)).not.toContain('+1999');
  });
});

describe('reading is free of side effects', () => {
  let key: string;
  beforeEach(async () => {
    const response = await api.post(aRequestBody({ params: { reset_url: TEST_URL } }));
    key = ((await response.json()) as { idempotency_key: string }).idempotency_key;
  });

  it('GET view, evidence and list never change the stored items', async () => {
    // Prepare
    const before = await api.scan();
    const view = await (await fetch(`${api.url}/v1/notifications/${key}`)).json();
    // Act
    const responses = await Promise.all([
      fetch(`${api.url}/v1/notifications/${key}`),
      fetch(`${api.url}/v1/notifications/${key}/evidence`),
      fetch(`${api.url}/v1/notifications?event_id=${(view as { event_id: string }).event_id}`),
    ]);
    // Assess
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    const [one, evidence, list] = (await Promise.all(responses.map((r) => r.json()))) as [
      Record<string, unknown>,
      { transitions: Record<string, unknown>[] },
      { items: unknown[] },
    ];
    expect(one).toEqual(view);
    expect(evidence.transitions).toEqual([
      expect.objectContaining({
        seq: 1,
        from_state: null,
        to_state: 'accepted',
        reason: 'admitted',
        actor: 'api',
        attempt: 0,
      }),
    ]);
    expect(list.items).toEqual([view]);
    expect(await api.scan()).toEqual(before);
  });

  it('answers 404 for an unknown key, on both the view and the evidence', async () => {
    const view = await fetch(`${api.url}/v1/notifications/no-such-key`);
    const evidence = await fetch(`${api.url}/v1/notifications/no-such-key/evidence`);
    expect([view.status, evidence.status]).toEqual([404, 404]);
    expect(await view.json()).toMatchObject({ code: 'not_found' });
  });

  it('the view exposes no phone number, code or URL', async () => {
    const text = await (await fetch(`${api.url}/v1/notifications/${key}`)).text();
    for (const secret of [TEST_PHONE, TEST_URL, 'tok_9f8e7d6c5b4a']) expect(text).not.toContain(secret);
  });
});

describe('privacy of stored data', () => {
  it('no item or evidence record holds the phone number, code or URL in clear', async () => {
    // Prepare: commands with both kinds of secret
    await api.post(aRequestBody());
    await api.post(aRequestBody({ params: { reset_url: TEST_URL } }));
    // Act
    const items = await api.scan();
    // Assess
    const dump = JSON.stringify(items);
    expect(items.length).toBeGreaterThan(0);
    for (const secret of [TEST_PHONE, TEST_PHONE.slice(1), TEST_CODE, TEST_URL, 'tok_9f8e7d6c5b4a']) {
      expect(dump).not.toContain(secret);
    }
  });
});
