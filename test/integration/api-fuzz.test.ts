/**
 * API fuzzing (fast-check) against the real API handler on DynamoDB Local: random and malformed
 * bodies, headers, keys, unicode, huge numbers, past and future dates. Never a 5xx, the documented
 * error shape on every 4xx, and nothing stored for any rejected request; with abuse limits on,
 * refusals (429, 422) store and count nothing and no budget is ever exceeded.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_LOG_ATTRIBUTE } from '../../shared/domain/budgets.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../../shared/domain/idempotency-key.js';
import { startApiHarness } from '../support/api-harness.js';
import { aRequestBody as aValidBody } from '../support/fixtures.js';
import { ManualClock } from '../support/manual-clock.js';

type Harness = Awaited<ReturnType<typeof startApiHarness>>;
let api: Harness;
/** How many commands the table must hold: one per 202 seen so far. */
let admittedSoFar = 0;
/** Items one admission writes: the command and its event guard (one command per event). */
const ITEMS_PER_ADMISSION = 2;

beforeAll(async () => {
  api = await startApiHarness();
});
afterAll(async () => {
  await api.stop();
});

/** A phone and code of their own: the schema's own example number must not count as an echo. */
const FUZZ_PHONE = '+14155550188';
const FUZZ_CODE = '90817263';
const aRequestBody = (overrides: Record<string, unknown> = {}) =>
  aValidBody({ destination: { phone: FUZZ_PHONE }, params: { code: FUZZ_CODE }, ...overrides });

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 200;

async function itemCount(): Promise<number> {
  let count = 0;
  let start: Record<string, never> | undefined;
  do {
    const out = await api.client.send(
      new ScanCommand({
        TableName: api.tableName,
        Select: 'COUNT',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start);
  return count;
}

/** The documented error body: `{code, message, errors?: [{path, message}]}` and nothing else. */
function expectErrorShape(body: unknown) {
  expect(body).toEqual(
    expect.objectContaining({ code: expect.stringMatching(/^[a-z_]+$/), message: expect.any(String) }),
  );
  const { code: _code, message: _message, errors, ...rest } = body as Record<string, unknown>;
  expect(rest).toEqual({});
  if (errors !== undefined) {
    expect(Array.isArray(errors)).toBe(true);
    for (const e of errors as unknown[]) {
      expect(e).toEqual({ path: expect.any(String), message: expect.any(String) });
    }
  }
}

interface Sent {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
}

/**
 * Sends one request and checks what holds for every request: no 5xx, JSON, the error shape on 4xx,
 * one more stored command per 202 and no other change, and no secret echoed back in an error.
 */
async function send(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array },
): Promise<Sent | undefined> {
  let response: Response;
  try {
    response = await fetch(`${api.url}${path}`, {
      method: init.method ?? 'POST',
      headers: init.headers ?? {},
      ...(init.body === undefined ? {} : { body: init.body }),
    });
  } catch (error) {
    // fetch itself refuses some header values (not latin1, control characters): nothing was sent.
    if (error instanceof TypeError) return undefined;
    throw error;
  }
  const text = await response.text();
  // Assess the invariants of every response.
  expect(response.status, text).toBeLessThan(500);
  const body = JSON.parse(text) as unknown;
  if (response.status >= 400) {
    expectErrorShape(body);
    expect(text).not.toContain(FUZZ_PHONE);
    expect(text).not.toContain(FUZZ_CODE);
  }
  if (response.status === 202) admittedSoFar++;
  expect(await itemCount()).toBe(ITEMS_PER_ADMISSION * admittedSoFar);
  expect(api.errors).toEqual([]);
  return { status: response.status, body, text };
}

const json = { 'content-type': 'application/json' };

/** Awkward values: unicode, huge and tiny numbers, wrong types, deep and long structures. */
const weirdValue = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '+',
    '+1',
    '\u202e+14155550123',
    '＋１４１５５５５０１２３',
    '🙂'.repeat(20),
    'x'.repeat(20_000),
  ),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.1, 1.2345678901234568e29),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
);

/** ISO-like dates from far past to far future, with and without zones, plus malformed ones. */
const dateText = fc.oneof(
  fc
    .date({
      min: new Date(-8_640_000_000_000_000),
      max: new Date(8_640_000_000_000_000),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString()),
  fc
    .tuple(fc.integer({ min: -48, max: 48 }), fc.constantFrom('Z', '+00:00', '-05:00', '+14:00', '', '+2400'))
    .map(([hours, zone]) => `${new Date(Date.now() + hours * 3_600_000).toISOString().slice(0, 19)}${zone}`),
  fc.constantFrom(
    '2026-02-30T10:00:00Z',
    '2026-13-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '0000-01-01T00:00:00Z',
    'tomorrow',
    '1e10',
    '',
  ),
);

/** A real instant in RFC 3339 form with a zone (what the API accepts as a date-time), else undefined. */
function instantOf(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!match) return undefined;
  // Date.parse rolls 2026-02-30 over into March; a calendar date that does not exist is not an instant.
  const [, y, m, d] = match;
  const day = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  if (day.getUTCMonth() !== Number(m) - 1 || day.getUTCDate() !== Number(d)) return undefined;
  return Date.parse(text);
}

const FIELDS = [
  'event_id',
  'channel',
  'template',
  'locale',
  'destination',
  'destination.phone',
  'expires_at',
  'params',
  'params.code',
  'params.reset_url',
  'unexpected',
] as const;

/** A valid body with one field replaced (or removed, or added). */
function mutated(field: (typeof FIELDS)[number], value: unknown, remove: boolean): Record<string, unknown> {
  const body = aRequestBody() as Record<string, unknown>;
  const [top, inner] = field.split('.') as [string, string | undefined];
  if (inner === undefined) {
    if (remove) delete body[top];
    else body[top] = value;
    return body;
  }
  const nested = { ...((body[top] as Record<string, unknown> | undefined) ?? {}) };
  if (remove) delete nested[inner];
  else nested[inner] = value;
  body[top] = nested;
  return body;
}

describe('API fuzzing: never a 5xx, the error shape every time, nothing stored when rejected', () => {
  it('random bytes, text and JSON with random content types', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 200 }),
          fc.json({ maxDepth: 4 }),
          fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null'),
          fc.uint8Array({ maxLength: 300 }),
          fc.constantFrom(
            '{',
            '{"event_id":',
            '[]',
            'null',
            '"x"',
            '{}',
            `{"a":"${'x'.repeat(17_000)}"}`,
            // Numbers JSON.parse cannot hold: Infinity, and integers beyond 2^53.
            '{"event_id":"e","expires_at":1e999,"params":{"code":123456789012345678901234567890}}',
            `{"event_id":"${'\\u0000'.repeat(50)}","channel":"sms"}`,
          ),
        ),
        fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'APPLICATION/JSON',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/jsonx',
          'multipart/form-data; boundary=x',
        ),
        async (body, contentType) => {
          const sent = await send('/v1/notifications', { headers: { 'content-type': contentType }, body });
          // A random body is never a valid notification.
          if (sent) expect(sent.status).toBeGreaterThanOrEqual(400);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a valid body with one field replaced by an awkward value, removed, or an unknown field added', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FIELDS), weirdValue, fc.boolean(), async (field, value, remove) => {
        const sent = await send('/v1/notifications', {
          headers: json,
          body: JSON.stringify(mutated(field, value, remove)),
        });
        expect([202, 400, 413, 422]).toContain(sent?.status);
        if (field === 'unexpected' && !remove) expect(sent?.status).not.toBe(202);
      }),
      { numRuns: RUNS },
    );
  });

  it('expires_at from the far past to the far future: admitted only inside the window', async () => {
    await fc.assert(
      fc.asyncProperty(dateText, async (expiresAt) => {
        // Act
        const sent = await send('/v1/notifications', {
          headers: json,
          body: JSON.stringify(aRequestBody({ expires_at: expiresAt })),
        });
        // Assess: the outcome follows from the parsed instant (boundaries left a generous slack).
        const at = instantOf(expiresAt);
        const ahead = (at ?? 0) - Date.now();
        const code = (sent?.body as { code?: string } | undefined)?.code;
        if (at === undefined) expect([sent?.status, code]).toEqual([422, 'validation_failed']);
        else if (ahead < 4_000) expect([sent?.status, code]).toEqual([422, 'already_expired']);
        else if (ahead > 6_000 && ahead < 24 * 3_600_000 - 60_000) expect(sent?.status).toBe(202);
        else if (ahead > 24 * 3_600_000 + 60_000)
          expect([sent?.status, code]).toEqual([422, 'validation_failed']);
      }),
      { numRuns: RUNS },
    );
  });

  it('Idempotency-Key headers of any shape: a valid key is used as is, anything else is a 422', async () => {
    const headerChar = fc.oneof(
      fc.constantFrom(...'abcXYZ019._:-'),
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: headerChar, minLength: 1, maxLength: 40 }),
          fc.string({ unit: headerChar, minLength: 250, maxLength: 300 }),
        ),
        async (key) => {
          const sent = await send('/v1/notifications', {
            headers: { ...json, 'idempotency-key': key },
            body: JSON.stringify(aRequestBody()),
          });
          if (sent === undefined) return;
          // HTTP trims optional whitespace (spaces and tabs only, not U+00A0 as String.trim does).
          const onTheWire = key.replace(/^[ \t]+|[ \t]+$/g, '');
          const valid = IDEMPOTENCY_KEY_PATTERN.test(onTheWire);
          if (valid) {
            expect([202, 409]).toContain(sent.status);
            if (sent.status === 202)
              expect((sent.body as { idempotency_key: string }).idempotency_key).toBe(onTheWire);
          } else {
            expect(sent.status).toBe(422);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('reads and other methods with random keys, paths and queries never fail', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'POST'),
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        fc.constantFrom(
          '/v1/notifications/{k}',
          '/v1/notifications/{k}/evidence',
          '/v1/notifications?event_id={k}',
          '/v1/{k}',
          '/{k}',
        ),
        async (method, key, template) => {
          const path = template.replace('{k}', encodeURIComponent(key));
          // Writes through these routes would change the table; `send` checks they never do.
          const sent = await send(path, {
            method,
            headers: json,
            ...(method === 'GET' ? {} : { body: '{}' }),
          });
          if (method === 'GET' && sent && template.includes('?')) expect([200, 422]).toContain(sent.status);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('API fuzzing with abuse limits on: never a 5xx, refusals store nothing, budgets hold', () => {
  let limited: Harness;
  const clock = new ManualClock(Date.UTC(2026, 11, 1, 10, 1));
  beforeAll(async () => {
    limited = await startApiHarness({
      clock,
      env: { DESTINATION_LIMITS: '2/15m', COUNTRY_LIMITS: 'FR:3/1h', RESET_URL_HOSTS: 'id.example.com' },
    });
  });
  afterAll(async () => {
    await limited.stop();
  });

  /** Mobiles of two countries, and numbers no deployment with the defaults sends to. */
  const PHONES = [
    '+14155550188',
    '+14155550189',
    '+33612345670',
    '+33612345671',
    '+33612345672',
    '+33612345673',
    '+19005550123',
    '+18005550199',
    '+870773123456',
    '+442071838750',
    '+18765551234',
  ];
  const UNSAFE = ['', ' ', '\t', '\n', '\u202e', '\u2066', '\u200b', '\u0000', 'user:pw@', '%20', '"'];
  const resetUrl = fc
    .tuple(
      fc.constantFrom('https://id.example.com', 'https://evil.example', 'http://id.example.com', 'https://'),
      fc.constantFrom(...UNSAFE),
      fc.integer({ min: 0, max: 600 }),
    )
    .map(([origin, unsafe, length]) =>
      unsafe.endsWith('@')
        ? `${origin.replace('://', `://${unsafe}`)}/r?t=${'a'.repeat(length)}`
        : `${origin}/r?t=${unsafe}${'a'.repeat(length)}`,
    );
  const params = fc.oneof(
    fc.constant({ code: FUZZ_CODE }),
    resetUrl.map((url) => ({ reset_url: url })),
  );

  async function snapshot() {
    const items = await limited.scan();
    const commands = items.filter((i) => i.sk === 'CMD');
    const counters = items.filter((i) => i.sk === 'LIMIT');
    // A number's admissions in its log (the clock stands still: all in the window); a country's
    // window counts: `n_<window>_<bucket>` attributes.
    const tallies = (prefix: string) =>
      counters
        .filter((c) => String(c.pk).startsWith(prefix))
        .flatMap((c) =>
          Array.isArray(c[ADMISSION_LOG_ATTRIBUTE])
            ? [(c[ADMISSION_LOG_ATTRIBUTE] as unknown[]).length]
            : Object.entries(c)
                .filter(([name]) => name.startsWith('n_'))
                .map(([, n]) => Number(n)),
        );
    return {
      commands: commands.length,
      perDestination: tallies('LIMIT#dst#'),
      perCountry: tallies('LIMIT#cc#'),
    };
  }

  it('random destinations, reset URLs and replays', async () => {
    const sentBodies: Record<string, unknown>[] = [];
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PHONES),
        params,
        fc.option(fc.nat(), { nil: undefined }),
        async (phone, chosenParams, replayOf) => {
          // Prepare: a new request, or a replay of an earlier one.
          const earlier =
            replayOf === undefined ? undefined : sentBodies[replayOf % Math.max(1, sentBodies.length)];
          const body = earlier ?? aValidBody({ destination: { phone }, params: chosenParams }, clock.now());
          sentBodies.push(body);
          const before = await snapshot();
          // Act
          const response = await fetch(`${limited.url}/v1/notifications`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify(body),
          });
          const text = await response.text();
          seen.add(response.status);
          // Assess
          expect(response.status, text).toBeLessThan(500);
          expect([200, 202, 409, 422, 429]).toContain(response.status);
          const after = await snapshot();
          if (response.status === 202) {
            expect(after.commands).toBe(before.commands + 1);
          } else {
            expect(after).toEqual(before);
          }
          if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
          if (response.status >= 400) {
            expectErrorShape(JSON.parse(text));
            expect(text).not.toContain(String((body.destination as { phone: string }).phone));
          }
          for (const count of after.perDestination) expect(count).toBeLessThanOrEqual(2);
          for (const count of after.perCountry) expect(count).toBeLessThanOrEqual(3);
          expect(limited.errors).toEqual([]);
        },
      ),
      // Seeded: the last assertion needs a run that reaches every outcome, which an unseeded run of
      // this size missed now and then (no 429 in one CI run).
      { numRuns: RUNS, seed: 20261201 },
    );
    // The property saw every outcome, so each branch above was exercised.
    expect([...seen].sort()).toEqual([200, 202, 422, 429]);
  });
});
