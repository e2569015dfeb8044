import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { ensureTable, scanTable } from '../../local/resources.js';
import { startHttpServer } from '../../local/runtime/http-server.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import { createLocalCipher, parseKey } from '../../shared/adapters/local-cipher.js';
import { abuseLimitsOf, loadConfig } from '../../shared/config.js';
import type { Clock } from '../../shared/domain/clock.js';
import { systemClock } from '../../shared/domain/clock.js';
import { createFingerprinter } from '../../shared/domain/fingerprint.js';
import { DEFAULT_POLICY } from '../../shared/domain/policy.js';
import { createApiHandler, type Refusal } from '../../shared/handlers/api-handler.js';
import { testKeys, uniqueName } from './fixtures.js';

/**
 * The API on a fresh table in the suite's DynamoDB Local, behind the local HTTP server. The abuse
 * limits are the production defaults read from `env`, except destination budgets, which are off
 * unless `env` sets `DESTINATION_LIMITS` (most suites send many requests to one test number).
 */
export async function startApiHarness(
  options: { clock?: Clock; env?: Readonly<Record<string, string>> } = {},
) {
  const client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const tableName = uniqueName('api');
  await ensureTable(client, tableName);
  const keys = testKeys();
  const store = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
  const errors: unknown[] = [];
  const refusals: Refusal[] = [];
  const config = loadConfig({ DESTINATION_LIMITS: 'off', ...(options.env ?? {}) });
  const handler = createApiHandler({
    ...abuseLimitsOf(config),
    onRefusal: (refusal) => refusals.push(refusal),
    store,
    cipher: createLocalCipher(parseKey(keys.dataKey)),
    fingerprinter: createFingerprinter(parseKey(keys.fingerprintKey)),
    clock: options.clock ?? systemClock,
    policy: DEFAULT_POLICY,
    providerName: 'simulator',
    maxExpiryMs: 24 * 3_600_000,
    logError: (error) => errors.push(error),
  });
  const server = await startHttpServer({ handler: (e, c) => handler(e, c), port: 0 });
  return {
    url: server.url,
    store,
    tableName,
    client,
    errors,
    /** Every abuse-limit refusal the handler reported (the refusal metric's input). */
    refusals,
    /** Every item in the table, unmarshalled (for "nothing stored" and PII checks). */
    scan: () => scanTable(client, tableName),
    post(body: unknown, headers: Record<string, string> = {}) {
      return fetch(`${server.url}/v1/notifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    /**
     * POSTs until the answer is not a `503`, waiting its `Retry-After` each time, as the API contract
     * tells a caller (docs/design.md#http-api): on a loaded machine a request can outlast the
     * function's time and be answered 503 while its conditional write still lands, so the retry may
     * find its own command (`200`).
     */
    async postAnswered(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
      for (;;) {
        const response = await this.post(body, headers);
        if (response.status !== 503) return response;
        await response.body?.cancel();
        const waitS = Number(response.headers.get('retry-after') ?? 1);
        await new Promise((resolve) => setTimeout(resolve, waitS * 1_000));
      }
    },
    async stop() {
      await server.stop();
      client.destroy();
    },
  };
}
