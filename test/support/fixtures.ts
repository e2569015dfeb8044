import { randomBytes, randomInt, randomUUID } from 'node:crypto';

/** The secrets the tests use; the PII scans look for exactly these strings. */
export const TEST_PHONE = '+14155550123';
export const OTHER_PHONE = '+447400123456'; // a UK mobile: the default ALLOWED_NUMBER_TYPES refuse fixed lines
export const TEST_CODE = '483920';
export const TEST_URL = 'https://id.example.com/reset?token=tok_9f8e7d6c5b4a';

/**
 * A fresh six-digit code. Lookups without a message id match a key's secret in the provider's
 * bodies: two keys with the same code to the same number are indistinguishable there (as at
 * Twilio), so tests that reconcile by content give each key its own code.
 */
export function aFreshCode(): string {
  return String(100_000 + randomInt(900_000));
}

/** 32-byte keys for the local cipher and the fingerprinter. */
export function testKeys() {
  return { dataKey: randomBytes(32).toString('hex'), fingerprintKey: randomBytes(32).toString('hex') };
}

/** A valid request body; override any field. */
export function aRequestBody(
  overrides: Record<string, unknown> = {},
  now = Date.now(),
): Record<string, unknown> {
  return {
    event_id: `evt-${randomUUID()}`,
    channel: 'sms',
    template: 'password_reset',
    locale: 'en',
    destination: { phone: TEST_PHONE },
    expires_at: new Date(now + 10 * 60_000).toISOString(),
    params: { code: TEST_CODE },
    ...overrides,
  };
}

/** A unique table name per test file (files share one DynamoDB Local). */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}
