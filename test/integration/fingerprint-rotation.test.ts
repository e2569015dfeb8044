/**
 * Fingerprint-key rotation on DynamoDB Local (issue 25 item 9, docs/security.md#fingerprint-key-rotation):
 * API instances before and after the switch share one table; the admission write carries the
 * number's budget item under each key held, so budgets, replays and the event guard hold across.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable, scanTable } from '../../local/resources.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import { createLocalCipher } from '../../shared/adapters/local-cipher.js';
import { DEFAULT_DESTINATION_LIMITS, parseDestinationLimits } from '../../shared/domain/budgets.js';
import { systemClock } from '../../shared/domain/clock.js';
import { createFingerprinter, type Fingerprinter } from '../../shared/domain/fingerprint.js';
import { DEFAULT_POLICY } from '../../shared/domain/policy.js';
import { createApiHandler } from '../../shared/handlers/api-handler.js';
import { DEFAULT_ALLOWED_NUMBER_TYPES } from '../../shared/http/destination.js';
import { aRequestBody, uniqueName } from '../support/fixtures.js';

const context = { awsRequestId: 'r1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
const KEY_1 = Buffer.alloc(32, 11);
const KEY_2 = Buffer.alloc(32, 12);
const BEFORE = createFingerprinter(KEY_1);
const AFTER = createFingerprinter({
  current: 2,
  keys: [
    { version: 2, secret: KEY_2 },
    { version: 1, secret: KEY_1 },
  ],
});

let client: DynamoDBClient;
let tableName: string;
let store: DynamoNotificationStore;
beforeAll(async () => {
  client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  tableName = uniqueName('rotation');
  await ensureTable(client, tableName);
  store = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
});
afterAll(() => client.destroy());

/** An API instance on the shared table with `fingerprinter`'s keys and the default budgets. */
function instance(fingerprinter: Fingerprinter) {
  const handler = createApiHandler({
    store,
    cipher: createLocalCipher(Buffer.alloc(32, 9)),
    fingerprinter,
    clock: systemClock,
    policy: DEFAULT_POLICY,
    providerName: 'simulator',
    maxExpiryMs: 24 * 3_600_000,
    budgets: { destination: parseDestinationLimits(DEFAULT_DESTINATION_LIMITS), country: [] },
    destinations: { allowedNumberTypes: DEFAULT_ALLOWED_NUMBER_TYPES, allowedCountries: [] },
    resetUrlHosts: ['id.example.com'],
    maxSmsSegments: 1,
    logError: (error) => {
      throw error;
    },
  });
  return async (key: string, body: unknown) => {
    const event = {
      version: '2.0',
      routeKey: '$default',
      rawPath: '/v1/notifications',
      rawQueryString: '',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      requestContext: { http: { method: 'POST', path: '/v1/notifications' } },
      isBase64Encoded: false,
      body: JSON.stringify(body),
    } as unknown as APIGatewayProxyEventV2;
    const response = await handler(event, context);
    if (typeof response === 'string') throw new Error('unexpected string response');
    return response.statusCode;
  };
}

let line = 0;
const ownPhone = () => `+1415${2_000_000 + Math.floor(Math.random() * 7_000_000) + (line++ % 1_000)}`;

describe('fingerprint-key rotation on DynamoDB', () => {
  it("keeps a number's budget, and counts it under both keys, across the switch", async () => {
    // Prepare: 2 admissions before the switch, 1 after (3 per 15 minutes by default).
    const phone = ownPhone();
    const body = () => aRequestBody({ event_id: `evt-${randomUUID()}`, destination: { phone } });
    expect(await instance(BEFORE)(`rot-${randomUUID()}`, body())).toBe(202);
    expect(await instance(BEFORE)(`rot-${randomUUID()}`, body())).toBe(202);
    expect(await instance(AFTER)(`rot-${randomUUID()}`, body())).toBe(202);
    // Act
    const fourth = await instance(AFTER)(`rot-${randomUUID()}`, body());
    // Assess
    expect(fourth).toBe(429);
    // One budget item per key held took part: the number's under fp1 and under fp2.
    const keys = (await scanTable(client, tableName)).map((i) => String(i.pk));
    for (const fingerprint of AFTER.destinations(phone)) {
      expect(keys.filter((k) => k.startsWith(`LIMIT#dst#${fingerprint}`)).length).toBeGreaterThan(0);
    }
  });

  it('answers a retry, and a second key for the event, of a command admitted before the switch as replays', async () => {
    // Prepare
    const body = aRequestBody({ event_id: `evt-${randomUUID()}`, destination: { phone: ownPhone() } });
    const key = `rot-${randomUUID()}`;
    expect(await instance(BEFORE)(key, body)).toBe(202);
    // Act
    const retry = await instance(AFTER)(key, body);
    const secondKey = await instance(AFTER)(`rot-${randomUUID()}`, body);
    // Assess
    expect([retry, secondKey]).toEqual([200, 200]);
  });
});
