/**
 * One command per (`event_id`, channel, template), whatever idempotency keys arrive (issue 25
 * item 1): the client bug of a fresh key per HTTP retry must not buy a second SMS. Through the
 * API on DynamoDB Local, with destination budgets off and on (the AWS default).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DESTINATION_LIMITS } from '../../shared/domain/budgets.js';
import { startApiHarness } from '../support/api-harness.js';
import { aRequestBody } from '../support/fixtures.js';

type Harness = Awaited<ReturnType<typeof startApiHarness>>;
interface View {
  readonly idempotency_key: string;
  readonly event_id: string;
  readonly state: string;
}

let line = 0;
/** A number of the test's own, so budgets spent by one test never refuse another's. */
const ownPhone = () => `+1415${2_000_000 + Math.floor(Math.random() * 7_000_000) + (line++ % 1_000)}`;
const aKey = () => `retry-${randomUUID()}`;

describe.each([
  ['budgets off', 'off'],
  ['budgets on', DEFAULT_DESTINATION_LIMITS],
])('one command per event (%s)', (_label, limits) => {
  let api: Harness;
  beforeAll(async () => {
    api = await startApiHarness({ env: { DESTINATION_LIMITS: limits } });
  });
  afterAll(async () => {
    await api.stop();
  });

  const commandsOf = async (eventId: unknown) =>
    (await api.scan()).filter((i) => i.sk === 'CMD' && i.event_id === eventId);

  it("answers a second key with the same payload as a replay of the first key's command", async () => {
    // Prepare
    const body = aRequestBody({ destination: { phone: ownPhone() } });
    const firstKey = aKey();
    const first = await api.post(body, { 'idempotency-key': firstKey });
    // Act
    const second = await api.post(body, { 'idempotency-key': aKey() });
    // Assess
    expect(first.status).toBe(202);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('location')).toBe(`/v1/notifications/${firstKey}`);
    expect(await second.json()).toEqual(await first.json());
    expect((await commandsOf(body.event_id)).map((i) => i.idempotency_key)).toEqual([firstKey]);
    expect(api.errors).toEqual([]);
  });

  it('refuses a second key with another payload as 409 event_already_admitted naming the first key, no PII', async () => {
    // Prepare
    const phone = ownPhone();
    const body = aRequestBody({ destination: { phone } });
    const firstKey = aKey();
    await api.post(body, { 'idempotency-key': firstKey });
    const before = await api.store.get(firstKey);
    // Act
    const otherCode = await api.post({ ...body, params: { code: '777111' } }, { 'idempotency-key': aKey() });
    const text = await otherCode.text();
    // Assess
    expect(otherCode.status).toBe(409);
    expect(otherCode.headers.get('location')).toBe(`/v1/notifications/${firstKey}`);
    expect(JSON.parse(text)).toMatchObject({
      code: 'event_already_admitted',
      message: expect.stringContaining(firstKey),
    });
    for (const secret of [phone.slice(1), '777111']) {
      expect(text).not.toContain(secret);
    }
    expect(await api.store.get(firstKey)).toEqual(before);
    expect(await commandsOf(body.event_id)).toHaveLength(1);
  });

  it('admits exactly one of 20 different keys racing with one event; every other gets its view', async () => {
    // Prepare
    const body = aRequestBody({ destination: { phone: ownPhone() } });
    const keys = Array.from({ length: 20 }, aKey);
    // Act
    const responses = await Promise.all(keys.map((key) => api.post(body, { 'idempotency-key': key })));
    const views = (await Promise.all(responses.map((r) => r.json()))) as View[];
    // Assess
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const winner = keys[statuses.indexOf(202)];
    for (const view of views) expect(view.idempotency_key).toBe(winner);
    expect((await commandsOf(body.event_id)).map((i) => i.idempotency_key)).toEqual([winner]);
    expect(api.errors).toEqual([]);
  });

  it('keeps replaying the first key, and a derived key and a header key share the event', async () => {
    // Prepare: the first admission without a header (the key derived from the event).
    const body = aRequestBody({ destination: { phone: ownPhone() } });
    const derived = await api.post(body);
    const derivedKey = ((await derived.json()) as View).idempotency_key;
    // Act
    const withHeader = await api.post(body, { 'idempotency-key': aKey() });
    const replay = await api.post(body);
    // Assess
    expect([derived.status, withHeader.status, replay.status]).toEqual([202, 200, 200]);
    expect(((await withHeader.json()) as View).idempotency_key).toBe(derivedKey);
    expect(replay.headers.get('location')).toBeNull();
    expect(((await replay.json()) as View).idempotency_key).toBe(derivedKey);
    expect(await commandsOf(body.event_id)).toHaveLength(1);
  });
});

describe('one command per event, budgets on: second keys are never counted', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await startApiHarness({ env: { DESTINATION_LIMITS: '3/15m,10/24h' } });
  });
  afterAll(async () => {
    await api.stop();
  });

  it('spends one unit of the budget per event, sequentially and under a race of keys', async () => {
    // Prepare: budget 3 per 15 min to one number; one event, many keys, same and other payloads.
    const phone = ownPhone();
    const body = aRequestBody({ destination: { phone } });
    // Act
    const first = await api.post(body, { 'idempotency-key': aKey() });
    const sequential = [
      await api.post(body, { 'idempotency-key': aKey() }),
      await api.post({ ...body, params: { code: '424242' } }, { 'idempotency-key': aKey() }),
    ];
    const raced = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.post(i % 2 ? body : { ...body, params: { code: '515151' } }, { 'idempotency-key': aKey() }),
      ),
    );
    const otherEvents = [];
    for (let i = 0; i < 3; i++) {
      otherEvents.push(
        await api.post(aRequestBody({ destination: { phone } }), { 'idempotency-key': aKey() }),
      );
    }
    // Assess
    expect(first.status).toBe(202);
    expect(sequential.map((r) => r.status)).toEqual([200, 409]);
    expect(raced.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 409, 409, 409, 409, 409]);
    // The event spent one unit: two more events fit, the third is refused.
    expect(otherEvents.map((r) => r.status)).toEqual([202, 202, 429]);
    expect(api.refusals.filter((r) => r.code === 'destination_rate_limited')).toHaveLength(1);
  });
});
