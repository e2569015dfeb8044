import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResetNotifierClient, type ResetNotifierClient } from '../../shared/client/index.js';
import { renderOpenApiDocument } from '../../shared/http/openapi.js';
import { EvidenceViewSchema, NotificationViewSchema } from '../../shared/http/view-schema.js';
import { startApiHarness } from '../support/api-harness.js';
import { aRequestBody, TEST_CODE, TEST_PHONE } from '../support/fixtures.js';

type Harness = Awaited<ReturnType<typeof startApiHarness>>;
let api: Harness;
let client: ResetNotifierClient;
/** While true, every DynamoDB call of the API fails as a throttled request would. */
let throttle = false;
let throttledCalls = 0;

beforeAll(async () => {
  api = await startApiHarness();
  api.client.middlewareStack.add(
    (next) => async (args) => {
      if (throttle) {
        throttledCalls++;
        throw new ProvisionedThroughputExceededException({ message: 'throughput exceeded', $metadata: {} });
      }
      return next(args);
    },
    { step: 'initialize', name: 'injectThrottling' },
  );
  // Unsigned: the local stack listens on loopback without auth, as `npm start` does. The time
  // budget is not what this file tests (test/unit/client does): a loaded machine can take over the
  // default 2 s attempt for a first admission, whose retry then answers `replayed`.
  client = createResetNotifierClient({
    baseUrl: api.url,
    signing: false,
    attemptTimeoutMs: 60_000,
    timeBudgetMs: 120_000,
  });
});
afterAll(async () => {
  await api.stop();
});

describe('the typed client against the local stack (DynamoDB Local)', () => {
  it('admits once, replays, and reads the view, evidence and by-event list, all matching the schemas', async () => {
    // Prepare
    const body = aRequestBody() as Parameters<ResetNotifierClient['admit']>[0];

    // Act
    const first = await client.admit(body);
    const again = await client.admit(body);
    const key = first.kind === 'admitted' ? first.notification.idempotency_key : '';
    const view = await client.get(key);
    const evidence = await client.evidence(key);
    const items = await client.byEvent(body.event_id);
    const missing = await client.get('no-such-key');

    // Assess
    expect(first.kind).toBe('admitted');
    expect(first.kind === 'admitted' && first.location).toBe(`/v1/notifications/${encodeURIComponent(key)}`);
    expect(again.kind).toBe('replayed');
    expect(NotificationViewSchema.strict().parse(view)).toEqual(view);
    expect(view?.state).toBe('accepted');
    expect(evidence?.map((e) => EvidenceViewSchema.strict().parse(e).to_state)).toEqual(['accepted']);
    expect(items.map((i) => i.idempotency_key)).toEqual([key]);
    expect(missing).toBeUndefined();
    const stored = JSON.stringify(await api.scan());
    expect(stored).not.toContain(TEST_PHONE);
    expect(stored).not.toContain(TEST_CODE);
  });

  it('serves the OpenAPI document at GET /v1/openapi.json without auth locally', async () => {
    // Act
    const response = await fetch(`${api.url}/v1/openapi.json`);

    // Assess
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(renderOpenApiDocument());
  });

  it('returns a different payload under the same key as a conflict', async () => {
    // Prepare
    const body = aRequestBody() as Parameters<ResetNotifierClient['admit']>[0];
    await client.admit(body, { idempotencyKey: `k-${body.event_id}` });

    // Act
    const reused = await client.admit(
      { ...body, params: { code: '111111' } },
      { idempotencyKey: `k-${body.event_id}` },
    );

    // Assess
    expect(reused).toMatchObject({ kind: 'conflict', error: { code: 'idempotency_key_reused' } });
  });

  it('a throttled table answers 503 temporarily_unavailable with Retry-After; the client retries into an admission', async () => {
    // Prepare
    const body = aRequestBody();
    throttle = true;
    throttledCalls = 0;

    // Act: the raw answer while DynamoDB throttles...
    const raw = await api.post(body);
    const rawBody = await raw.json();
    // ...and the client, whose first attempts are throttled until the table recovers.
    const sleeps: number[] = [];
    const patient = createResetNotifierClient({
      baseUrl: api.url,
      signing: false,
      sleep: async (ms) => {
        sleeps.push(ms);
        if (sleeps.length === 2) throttle = false;
      },
    });
    const outcome = await patient.admit(body as Parameters<ResetNotifierClient['admit']>[0]);
    throttle = false;

    // Assess
    expect(raw.status).toBe(503);
    expect(raw.headers.get('retry-after')).toBe('2');
    expect(rawBody).toMatchObject({ code: 'temporarily_unavailable' });
    expect(throttledCalls).toBeGreaterThanOrEqual(3);
    expect(sleeps).toEqual([2000, 2000]);
    expect(outcome.kind).toBe('admitted');
    expect(api.errors).toEqual([]);
  });
});
