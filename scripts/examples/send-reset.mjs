#!/usr/bin/env node
// The typed client from plain Node, no TypeScript loader: what an auth service that installed the
// package runs (docs/client.md). In this repository `npm run build:client` (or `npm ci`) builds
// dist/client first; `reset-notifier/client` then resolves through package.json `exports`.
//
//   node scripts/examples/send-reset.mjs --url http://127.0.0.1:3000 --local --phone +14155550123
//   node scripts/examples/send-reset.mjs --url "$RESET_NOTIFIER_API_URL" --phone +14155550123
//
// Prints one JSON line per call (never the phone number or the code). Exit 0 when admitted or
// replayed, 1 for any other outcome, 2 for a usage error, 3 when the request could not be signed.
// Run by test/integration/client-plain-node.test.ts against `npm start`.
import { parseArgs } from 'node:util';
import { CredentialsError, createResetNotifierClient } from 'reset-notifier/client';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.RESET_NOTIFIER_API_URL ?? 'http://127.0.0.1:3000' },
    phone: { type: 'string' },
    code: { type: 'string', default: '483920' },
    event: { type: 'string', default: `reset-${Date.now()}` },
    // A retry must send the same payload (the reset token's own expiry) to be a replay.
    'expires-at': { type: 'string', default: new Date(Date.now() + 10 * 60_000).toISOString() },
    local: { type: 'boolean', default: false },
    confirm: { type: 'boolean', default: false },
    'budget-ms': { type: 'string', default: '5000' },
  },
});
if (values.phone === undefined) {
  console.error('usage: send-reset.mjs --phone +14155550123 [--url <ApiUrl>] [--local] [--confirm]');
  process.exit(2);
}

const client = createResetNotifierClient({
  baseUrl: values.url,
  // SigV4 with the default credential chain in AWS; `npm start` has no auth.
  signing: values.local ? false : { region: process.env.AWS_REGION ?? 'us-east-1' },
  // The whole call, retries included; keep it below your own request's timeout.
  timeBudgetMs: Number(values['budget-ms']),
});

try {
  const outcome = await client.admit({
    event_id: values.event,
    channel: 'sms',
    template: 'password_reset',
    destination: { phone: values.phone },
    params: { code: values.code },
    expires_at: values['expires-at'],
  });
  switch (outcome.kind) {
    case 'admitted':
    case 'replayed': {
      const key = outcome.notification.idempotency_key;
      console.log(
        JSON.stringify({ call: 'admit', kind: outcome.kind, key, state: outcome.notification.state }),
      );
      if (values.confirm) {
        // The user typed the code: record it (a repeat is `already_confirmed`).
        const confirmed = await client.confirm(key);
        console.log(JSON.stringify({ call: 'confirm', kind: confirmed.kind }));
      }
      break;
    }
    case 'conflict': // this reset id was used with another phone or code
    case 'rejected': // invalid, expired, or a destination this deployment does not send to
      console.log(JSON.stringify({ call: 'admit', kind: outcome.kind, code: outcome.error.code }));
      process.exitCode = 1;
      break;
    case 'rate_limited': // this number's budget is spent: nothing was admitted
    case 'unavailable': // no answer within the budget: the same call again is safe
      console.log(
        JSON.stringify({ call: 'admit', kind: outcome.kind, retry_after_seconds: outcome.retryAfterSeconds }),
      );
      process.exitCode = 1;
      break;
  }
} catch (error) {
  if (!(error instanceof CredentialsError)) throw error;
  // Nothing left the machine: fix the credentials (or pass --local against `npm start`).
  console.error(`${error.code}: ${error.message}`);
  process.exitCode = 3;
}
