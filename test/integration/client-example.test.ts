import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness } from '../support/api-harness.js';
import { TEST_CODE, TEST_PHONE } from '../support/fixtures.js';

type Harness = Awaited<ReturnType<typeof startApiHarness>>;
let api: Harness;

beforeAll(async () => {
  api = await startApiHarness();
  process.env.RESET_NOTIFIER_API_URL = api.url;
  process.env.RESET_NOTIFIER_LOCAL = '1';
});
afterAll(async () => {
  delete process.env.RESET_NOTIFIER_API_URL;
  delete process.env.RESET_NOTIFIER_LOCAL;
  await api.stop();
});

describe('the README example (scripts/examples/auth-lambda.ts) against the local stack', () => {
  it('admits a reset SMS once and returns the same key when called again', async () => {
    // Prepare: the example reads its configuration when it is imported.
    const { sendResetCode } = await import('../../scripts/examples/auth-lambda.js');
    const expiresAt = new Date(Date.now() + 10 * 60_000);

    // Act
    const key = await sendResetCode('reset-example-1', TEST_PHONE, TEST_CODE, expiresAt);
    const again = await sendResetCode('reset-example-1', TEST_PHONE, TEST_CODE, expiresAt);
    const conflict = await sendResetCode('reset-example-1', TEST_PHONE, '999999', expiresAt).catch(
      (error: unknown) => error,
    );

    // Assess
    expect(key).toMatch(/^sms:password_reset:[0-9a-f]{40}$/);
    expect(again).toBe(key);
    expect(String(conflict)).toContain('idempotency_key_reused');
    expect((await api.store.get(key))?.record.state).toBe('accepted');
  });
});
