/**
 * Abuse limits against DynamoDB Local (docs/design.md#abuse-limits): destination and country budgets
 * enforced by the admission transaction, refusals that store nothing, and the destination and
 * body rules answered before any write.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_GUARD_PREFIX } from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { ADMISSION_LOG_ATTRIBUTE, DEFAULT_DESTINATION_LIMITS } from '../../shared/domain/budgets.js';
import { startApiHarness } from '../support/api-harness.js';
import { aRequestBody, TEST_PHONE } from '../support/fixtures.js';
import { ManualClock } from '../support/manual-clock.js';

type Harness = Awaited<ReturnType<typeof startApiHarness>>;
const FIFTEEN_MINUTES = 15 * 60_000;
let api: Harness | undefined;

afterEach(async () => {
  await api?.stop();
  api = undefined;
});

/** A clock 10 minutes into a clock quarter-hour (where a fixed window would end in 300 s). */
function clockInsideWindow(): ManualClock {
  return new ManualClock(Math.floor(Date.now() / FIFTEEN_MINUTES) * FIFTEEN_MINUTES + 10 * 60_000);
}

async function start(env: Record<string, string>, clock = clockInsideWindow()) {
  api = await startApiHarness({ clock, env });
  return { api, clock };
}

async function items(harness: Harness) {
  const all = await harness.scan();
  const limits = all.filter((i) => i[TableSchema.sortKey] === TableSchema.counterSortKey);
  // The event guards (one per admitted event) are limit items too, but count no budget.
  const isGuard = (i: Record<string, unknown>) =>
    String(i[TableSchema.partitionKey]).startsWith(EVENT_GUARD_PREFIX);
  const counters = limits.filter((i) => !isGuard(i));
  return {
    commands: all.filter((i) => i[TableSchema.sortKey] === TableSchema.commandSortKey),
    counters,
    guards: limits.filter(isGuard),
    /** Each number's admissions as its log holds them (newest first), or a country's window counts. */
    tallies: counters.flatMap((c) =>
      Array.isArray(c[ADMISSION_LOG_ATTRIBUTE])
        ? [(c[ADMISSION_LOG_ATTRIBUTE] as unknown[]).length]
        : Object.entries(c)
            .filter(([name]) => name.startsWith('n_'))
            .map(([, n]) => Number(n)),
    ),
    all,
  };
}

describe('destination budgets (DESTINATION_LIMITS, default 3/15m,10/24h)', () => {
  it('admits exactly the budget of 200 concurrent resets to one number; the rest are 429 and store nothing', async () => {
    // Prepare
    const { api, clock } = await start({ DESTINATION_LIMITS: DEFAULT_DESTINATION_LIMITS });
    const bodies = Array.from({ length: 200 }, () => aRequestBody({}, clock.now()));
    // Act
    const responses = await Promise.all(bodies.map((b) => api.postAnswered(b)));
    // Assess
    const statuses = responses.map((r) => r.status);
    // Admitted: 202, or 200 when a 503 answered in time hid its own admission (postAnswered).
    expect(statuses.filter((s) => s === 202 || s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(197);
    const refused = responses.find((r) => r.status === 429);
    // All three at one instant: the number frees up when they are 15 minutes old.
    expect(refused?.headers.get('retry-after')).toBe('900');
    expect(await refused?.json()).toEqual({
      code: 'destination_rate_limited',
      message: 'too many notifications to this destination; retry later',
    });
    const stored = await items(api);
    expect(stored.commands).toHaveLength(3);
    expect(stored.guards).toHaveLength(3);
    expect(stored.counters).toHaveLength(1);
    expect(stored.tallies).toEqual([3]);
    expect(JSON.stringify(stored.all)).not.toContain(TEST_PHONE);
    expect(api.refusals.filter((r) => r.code === 'destination_rate_limited')).toHaveLength(197);
    expect(api.errors).toEqual([]);
  });

  it('never counts a replay: a spent budget still answers replays of admitted keys with 200', async () => {
    // Prepare
    const { api, clock } = await start({ DESTINATION_LIMITS: '2/15m' });
    const first = aRequestBody({}, clock.now());
    const second = aRequestBody({}, clock.now());
    expect((await api.post(first)).status).toBe(202);
    // Act: 20 concurrent replays of the first, then the second, then one more replay.
    const replays = await Promise.all(Array.from({ length: 20 }, () => api.post(first)));
    const secondResponse = await api.post(second);
    const third = await api.post(aRequestBody({}, clock.now()));
    const lateReplay = await api.post(second);
    // Assess
    expect(replays.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(secondResponse.status).toBe(202);
    expect(third.status).toBe(429);
    expect(lateReplay.status).toBe(200);
    expect(lateReplay.headers.get('idempotent-replayed')).toBe('true');
    const stored = await items(api);
    expect(stored.commands).toHaveLength(2);
    expect(stored.tallies).toEqual([2]);
  });

  it('answers a conflicting payload for an admitted key with 409, not 429, and counts nothing', async () => {
    // Prepare
    const { api, clock } = await start({ DESTINATION_LIMITS: '1/15m' });
    const body = aRequestBody({}, clock.now());
    expect((await api.post(body)).status).toBe(202);
    // Act
    const conflict = await api.post({ ...body, params: { code: '111111' } });
    // Assess
    expect(conflict.status).toBe(409);
    expect((await items(api)).tallies).toEqual([1]);
  });

  it('slides: 3 resets a minute before a clock quarter-hour leave no room a minute after it', async () => {
    // Prepare: the default 3/15m spent at xx:14 (a fixed window reopened at xx:15: 6 SMS in 2 minutes).
    const quarter = Math.floor(Date.now() / FIFTEEN_MINUTES) * FIFTEEN_MINUTES + FIFTEEN_MINUTES;
    const { api, clock } = await start(
      { DESTINATION_LIMITS: DEFAULT_DESTINATION_LIMITS },
      new ManualClock(quarter - 60_000),
    );
    for (let i = 0; i < 3; i++) expect((await api.post(aRequestBody({}, clock.now()))).status).toBe(202);
    // Act
    clock.advance(2 * 60_000);
    const after = [];
    for (let i = 0; i < 3; i++) after.push(await api.post(aRequestBody({}, clock.now())));
    clock.advance(13 * 60_000);
    const later = await api.post(aRequestBody({}, clock.now()));
    // Assess: refused until the first is 15 minutes old (13 minutes on), then admitted.
    expect(after.map((r) => [r.status, r.headers.get('retry-after')])).toEqual(Array(3).fill([429, '780']));
    expect(later.status).toBe(202);
    expect((await items(api)).commands).toHaveLength(4);
  });

  it('frees the destination when its oldest admission leaves the window (Retry-After is the time until then)', async () => {
    // Prepare
    const { api, clock } = await start({ DESTINATION_LIMITS: '1/15m' });
    expect((await api.post(aRequestBody({}, clock.now()))).status).toBe(202);
    const refused = await api.post(aRequestBody({}, clock.now()));
    const retryAfter = Number(refused.headers.get('retry-after'));
    // Act
    clock.advance(retryAfter * 1000);
    const later = await api.post(aRequestBody({}, clock.now()));
    // Assess
    expect([refused.status, retryAfter, later.status]).toEqual([429, 900, 202]);
  });

  it('stays off with DESTINATION_LIMITS=off: no counter items, a bare admission', async () => {
    // Prepare
    const { api, clock } = await start({ DESTINATION_LIMITS: 'off' });
    // Act
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => api.post(aRequestBody({}, clock.now()))),
    );
    // Assess
    expect(responses.map((r) => r.status)).toEqual(Array(5).fill(202));
    expect((await items(api)).counters).toEqual([]);
  });
});

describe('country budgets (COUNTRY_LIMITS, off by default)', () => {
  it('refuses a wave over many numbers of one country once its hourly budget is spent', async () => {
    // Prepare
    const { api, clock } = await start({ COUNTRY_LIMITS: 'FR:3/1h' });
    const french = Array.from({ length: 6 }, (_, i) => `+3361234567${i}`);
    // Act
    const wave = [];
    for (const phone of french)
      wave.push(await api.post(aRequestBody({ destination: { phone } }, clock.now())));
    const american = await api.post(aRequestBody({}, clock.now()));
    // Assess
    expect(wave.map((r) => r.status)).toEqual([202, 202, 202, 429, 429, 429]);
    expect(Number(wave[3]?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(american.status).toBe(202);
    expect((await items(api)).commands).toHaveLength(4);
    expect(api.refusals.filter((r) => r.reason === 'country')).toEqual(
      Array(3).fill({ code: 'destination_rate_limited', reason: 'country', country: 'FR' }),
    );
  });
});

describe('destination and body rules (refused before anything is stored)', () => {
  it.each([
    ['US premium rate', '+19005550123'],
    ['US toll free', '+18005550199'],
    ['UK premium rate', '+449090901234'],
    ['UK shared cost / premium 0871', '+448712345678'],
    ['Inmarsat satellite', '+870773123456'],
    ['Iridium satellite', '+881612345678'],
    ['UK fixed line', '+442071838750'],
  ])('%s -> 422 destination_not_allowed', async (_name, phone) => {
    // Prepare
    const { api, clock } = await start({});
    // Act
    const response = await api.post(aRequestBody({ destination: { phone } }, clock.now()));
    // Assess
    expect(response.status).toBe(422);
    const body = (await response.json()) as { code: string; errors: { path: string }[] };
    expect(body.code).toBe('destination_not_allowed');
    expect(body.errors.map((e) => e.path)).toEqual(['destination.phone']);
    expect((await items(api)).all).toEqual([]);
  });

  it('checks countries by region: an allow-list of US refuses Jamaica and the Bahamas (+1)', async () => {
    // Prepare
    const { api, clock } = await start({ ALLOWED_DESTINATION_COUNTRIES: 'US' });
    // Act
    const jamaica = await api.post(aRequestBody({ destination: { phone: '+18765551234' } }, clock.now()));
    const bahamas = await api.post(aRequestBody({ destination: { phone: '+12423571234' } }, clock.now()));
    const us = await api.post(aRequestBody({}, clock.now()));
    // Assess
    expect([jamaica.status, bahamas.status, us.status]).toEqual([422, 422, 202]);
    expect((await items(api)).commands).toHaveLength(1);
  });

  it.each([
    ['a host outside RESET_URL_HOSTS', 'https://evil.example/reset?t=abc'],
    ['userinfo', 'https://user:pass@id.example.com/reset'],
    ['a space', 'https://id.example.com/reset?t=a b'],
    ['a bidi override', 'https://id.example.com/reset?t=\u202Eabc'],
    ['plain http', 'http://id.example.com/reset'],
    ['more than 512 characters', `https://id.example.com/reset?t=${'a'.repeat(500)}`],
    ['a body over MAX_SMS_SEGMENTS', `https://id.example.com/reset?t=${'a'.repeat(400)}`],
  ])('a reset_url with %s -> 422 with a field error, nothing stored', async (_name, url) => {
    // Prepare
    const { api, clock } = await start({ RESET_URL_HOSTS: 'id.example.com', MAX_SMS_SEGMENTS: '3' });
    // Act
    const response = await api.post(aRequestBody({ params: { reset_url: url } }, clock.now()));
    // Assess
    expect(response.status).toBe(422);
    const body = (await response.json()) as { code: string; errors: { path: string; message: string }[] };
    expect(body.code).toBe('validation_failed');
    expect(body.errors.map((e) => e.path)).toEqual(['params.reset_url']);
    expect(JSON.stringify(body)).not.toContain('id.example.com');
    expect((await items(api)).all).toEqual([]);
  });

  it('admits a reset_url on an allowed host within the segment limit', async () => {
    // Prepare
    const { api, clock } = await start({ RESET_URL_HOSTS: 'id.example.com' });
    // Act
    const response = await api.post(
      aRequestBody({ params: { reset_url: 'https://id.example.com/reset?t=abc' } }, clock.now()),
    );
    // Assess
    expect(response.status).toBe(202);
  });
});
