import { createResetNotifierClient } from '../../shared/client/index.js';

/**
 * The README's "Call it from your auth Lambda" example, kept compiling and run against the local
 * stack by test/integration/client-example.test.ts. In the auth Lambda: `RESET_NOTIFIER_API_URL`
 * is the stack output `ApiUrl`, and the function's role (or a role it assumed) may invoke the API.
 */
const client = createResetNotifierClient({
  baseUrl: process.env.RESET_NOTIFIER_API_URL ?? 'http://127.0.0.1:3000',
  // SigV4 with the default credential chain in AWS; the local stack has no auth.
  signing:
    process.env.RESET_NOTIFIER_LOCAL === '1' ? false : { region: process.env.AWS_REGION ?? 'us-east-1' },
});

/** Asks for one reset SMS. Safe to call again: the same reset event is the same notification. */
export async function sendResetCode(resetId: string, phone: string, code: string, expiresAt: Date) {
  const outcome = await client.admit({
    event_id: resetId,
    channel: 'sms',
    template: 'password_reset',
    destination: { phone },
    expires_at: expiresAt.toISOString(),
    params: { code },
  });
  switch (outcome.kind) {
    case 'admitted':
    case 'replayed':
      return outcome.notification.idempotency_key; // poll client.get(key) or client.evidence(key)
    case 'conflict': // this reset id was used with another phone or code
    case 'rejected': // invalid, expired, or a destination this deployment does not send to
      throw new Error(`reset SMS not sent: ${outcome.error.code}`);
    case 'rate_limited': // this number's budget is spent: nothing admitted, ask again later
    case 'unavailable': // no answer within the time budget (5 s): the same call again is safe
      throw new Error(
        `reset SMS not sent yet: ${outcome.kind}, retry after ${outcome.retryAfterSeconds ?? '?'} s`,
      );
  }
}
