/**
 * Fingerprint-key rotation through the API (issue 25 item 9, docs/security.md#fingerprint-key-rotation):
 * instances of the API share one store while the deployment's fingerprint keys change. Replays,
 * the one-command-per-event guard and budgets carry across the change; the prefix names the key.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createLocalCipher } from '../../../shared/adapters/local-cipher.js';
import { parseDestinationLimits } from '../../../shared/domain/budgets.js';
import { createFingerprinter, type Fingerprinter } from '../../../shared/domain/fingerprint.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';
import { createApiHandler } from '../../../shared/handlers/api-handler.js';
import { DEFAULT_ALLOWED_NUMBER_TYPES } from '../../../shared/http/destination.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';

const context = { awsRequestId: 'r1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
const T0 = Date.UTC(2026, 11, 2, 14, 0);
const PHONE = '+14155550123';
const KEY_1 = Buffer.alloc(32, 1);
const KEY_2 = Buffer.alloc(32, 2);

/** An instance's fingerprint keys: `current` and the versions it holds (1 = KEY_1, 2 = KEY_2). */
function keys(current: number, ...held: number[]): Fingerprinter {
  const secrets: Record<number, Buffer> = { 1: KEY_1, 2: KEY_2 };
  return createFingerprinter({
    current,
    keys: held.map((version) => ({ version, secret: secrets[version] as Buffer })),
  });
}
/** Before any rotation: the one key every deployment started with. */
const BEFORE = createFingerprinter(KEY_1);
/** After the switch: key 2 current, key 1 still held. */
const AFTER = keys(2, 2, 1);

function aDeployment(destinationLimits = 'off') {
  const store = new MemoryNotificationStore();
  const clock = new ManualClock(T0);
  const instance = (fingerprinter: Fingerprinter) => {
    const handler = createApiHandler({
      store,
      cipher: createLocalCipher(Buffer.alloc(32, 9)),
      fingerprinter,
      clock,
      policy: DEFAULT_POLICY,
      providerName: 'simulator',
      maxExpiryMs: 24 * 3_600_000,
      budgets: { destination: parseDestinationLimits(destinationLimits), country: [] },
      destinations: { allowedNumberTypes: DEFAULT_ALLOWED_NUMBER_TYPES, allowedCountries: [] },
      resetUrlHosts: ['id.example.com'],
      maxSmsSegments: 1,
      logError: () => undefined,
    });
    return async (key: string, body: Record<string, unknown>) => {
      const response = await handler(anEvent(key, body), context);
      if (typeof response === 'string') throw new Error('unexpected string response');
      return {
        status: response.statusCode,
        body: JSON.parse(response.body ?? '{}') as Record<string, unknown>,
      };
    };
  };
  return { instance, clock };
}

function anEvent(key: string, body: Record<string, unknown>): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/v1/notifications',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    requestContext: {
      http: { method: 'POST', path: '/v1/notifications' },
    } as APIGatewayProxyEventV2['requestContext'],
    isBase64Encoded: false,
    body: JSON.stringify(body),
  };
}

let serial = 0;
function aBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: `evt-rotation-${++serial}`,
    channel: 'sms',
    template: 'password_reset',
    destination: { phone: PHONE },
    expires_at: new Date(T0 + 10 * 60_000).toISOString(),
    params: { code: '483920' },
    ...overrides,
  };
}

describe('fingerprint-key rotation: replays', () => {
  it('answers a retry of a key admitted before the switch as a replay, not 409', async () => {
    // Prepare
    const { instance } = aDeployment();
    const body = aBody();
    const first = await instance(BEFORE)('rot-replay-1', body);
    // Act
    const retry = await instance(AFTER)('rot-replay-1', body);
    // Assess
    expect(first.status).toBe(202);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ idempotency_key: 'rot-replay-1' });
  });

  it('still answers the same key with another payload 409 after the switch', async () => {
    // Prepare
    const { instance } = aDeployment();
    const body = aBody();
    await instance(BEFORE)('rot-replay-2', body);
    // Act
    const reused = await instance(AFTER)('rot-replay-2', { ...body, params: { code: '111111' } });
    // Assess
    expect(reused.status).toBe(409);
    expect(reused.body).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it("answers a second key for an event admitted before the switch with the first command's view", async () => {
    // Prepare
    const { instance } = aDeployment();
    const body = aBody();
    await instance(BEFORE)('rot-event-1', body);
    // Act
    const second = await instance(AFTER)('rot-event-2', body);
    // Assess
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ idempotency_key: 'rot-event-1' });
  });

  it('answers 503 (retry-safe), not 409, where an instance does not hold the newer key yet', async () => {
    // Prepare: an instance already on key 2 admits; one still on key 1 alone gets the retry.
    const { instance } = aDeployment();
    const body = aBody();
    await instance(AFTER)('rot-rollout-1', body);
    // Act
    const retry = await instance(BEFORE)('rot-rollout-1', body);
    // Assess
    expect(retry.status).toBe(503);
    expect(retry.body).toMatchObject({ code: 'temporarily_unavailable' });
  });

  it('answers a reused key 409 once the key that fingerprinted its command is retired', async () => {
    // Prepare: the procedure retires key 1 only after every command under it has expired.
    const { instance, clock } = aDeployment();
    const body = aBody();
    await instance(BEFORE)('rot-retired-1', body);
    clock.advance(24 * 3_600_000);
    // Act
    const late = await instance(keys(2, 2))('rot-retired-1', body);
    // Assess
    expect(late.status).toBe(409);
  });

  it('names the key in the prefix: fp1 before the switch, fp2 after', async () => {
    // Prepare
    const { instance } = aDeployment();
    // Act
    const before = await instance(BEFORE)('rot-prefix-1', aBody());
    const after = await instance(AFTER)('rot-prefix-2', aBody());
    // Assess
    expect(before.body).toMatchObject({
      destination_fingerprint: expect.stringMatching(/^fp1:[0-9a-f]{32}$/),
    });
    expect(after.body).toMatchObject({ destination_fingerprint: keys(2, 2).destination(PHONE) });
    expect(keys(2, 2).destination(PHONE)).toMatch(/^fp2:[0-9a-f]{32}$/);
  });
});

describe('fingerprint-key rotation: budgets', () => {
  it("keeps a number's budget across the switch (3/15m: the 4th in the window is refused)", async () => {
    // Prepare
    const { instance } = aDeployment('3/15m');
    for (let i = 1; i <= 3; i++) {
      expect((await instance(BEFORE)(`rot-budget-a${i}`, aBody())).status).toBe(202);
    }
    // Act
    const fourth = await instance(AFTER)('rot-budget-a4', aBody());
    // Assess
    expect(fourth.status).toBe(429);
  });

  it('counts admissions on both sides of the switch together', async () => {
    // Prepare: 2 before, 1 after the switch.
    const { instance } = aDeployment('3/15m');
    await instance(BEFORE)('rot-budget-b1', aBody());
    await instance(BEFORE)('rot-budget-b2', aBody());
    expect((await instance(AFTER)('rot-budget-b3', aBody())).status).toBe(202);
    // Act
    const fourth = await instance(AFTER)('rot-budget-b4', aBody());
    // Assess
    expect(fourth.status).toBe(429);
  });

  it('counts under a key held before it is current, so its budget is complete when it takes over', async () => {
    // Prepare: step 1 of the procedure (key 2 held, key 1 current) admits 3.
    const { instance } = aDeployment('3/15m');
    for (let i = 1; i <= 3; i++) await instance(keys(1, 1, 2))(`rot-budget-c${i}`, aBody());
    // Act: an instance that holds key 2 alone.
    const fourth = await instance(keys(2, 2))('rot-budget-c4', aBody());
    // Assess
    expect(fourth.status).toBe(429);
  });

  it('frees the budget when its window has passed, across the switch', async () => {
    // Prepare
    const { instance, clock } = aDeployment('3/15m');
    for (let i = 1; i <= 3; i++) await instance(BEFORE)(`rot-budget-d${i}`, aBody());
    clock.advance(15 * 60_000);
    // Act
    const later = await instance(AFTER)(
      'rot-budget-d4',
      aBody({ expires_at: new Date(clock.now() + 600_000).toISOString() }),
    );
    // Assess
    expect(later.status).toBe(202);
  });
});
