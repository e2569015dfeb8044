import { parseArgs } from 'node:util';
import { createResetNotifierClient } from '../../shared/client/index.js';

/**
 * `npx tsx scripts/examples/first-sms.ts --phone +14155550123 [--url <ApiUrl>] [--local]`: asks the
 * deployed API (SigV4 with your credentials, region from AWS_REGION) or the local stack (`--local`)
 * for one reset SMS, then follows its evidence until a final state or 3 minutes. docs/deploy.md,
 * step 6. The phone number is sent to the API only; nothing here prints it.
 */
const { values } = parseArgs({
  options: {
    phone: { type: 'string' },
    url: { type: 'string', default: process.env.RESET_NOTIFIER_API_URL ?? 'http://127.0.0.1:3000' },
    local: { type: 'boolean', default: false },
    code: { type: 'string', default: '483920' },
  },
});
if (values.phone === undefined) {
  console.error('usage: first-sms.ts --phone +14155550123 [--url <ApiUrl>] [--local]');
  process.exit(2);
}
const client = createResetNotifierClient({
  baseUrl: values.url,
  signing: values.local ? false : { region: process.env.AWS_REGION ?? 'us-east-1' },
});
const outcome = await client.admit({
  event_id: `first-sms-${Date.now()}`,
  channel: 'sms',
  template: 'password_reset',
  destination: { phone: values.phone },
  params: { code: values.code },
  expires_at: new Date(Date.now() + 10 * 60_000).toISOString(),
});
if (outcome.kind !== 'admitted' && outcome.kind !== 'replayed') {
  const detail = outcome.error === undefined ? '' : ` ${outcome.error.code}: ${outcome.error.message}`;
  console.error(`not admitted: ${outcome.kind}${detail}`);
  process.exit(1);
}
const key = outcome.notification.idempotency_key;
console.log(`${outcome.kind}: ${key}`);
const FINAL = new Set(['delivered', 'undelivered', 'failed', 'expired']);
let seen = 0;
for (const until = Date.now() + 3 * 60_000; Date.now() < until; ) {
  const transitions = (await client.evidence(key)) ?? [];
  for (const t of transitions.slice(seen))
    console.log(`${t.at} ${t.from_state ?? '-'} -> ${t.to_state} (${t.reason})`);
  seen = transitions.length;
  const state = transitions.at(-1)?.to_state;
  if (state !== undefined && FINAL.has(state)) process.exit(state === 'delivered' ? 0 : 1);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
}
console.log('no final state yet: the reconciler polls delivery status every minute; read the evidence later');
