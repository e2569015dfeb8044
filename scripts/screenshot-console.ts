/**
 * Renders docs/console.png: starts a throwaway local stack (random ports, in memory) with the
 * console, plays a few notifications through it (one plain, one whose send times out after the
 * provider accepted it, two stuck behind a hanging provider), then photographs the console in
 * headless Chromium with the timed-out one selected.
 *
 *   npx tsx scripts/screenshot-console.ts [out.png]
 *
 * Needs Java (DynamoDB Local) and Debian's `chromium` at /usr/bin/chromium (CHROMIUM_PATH overrides).
 */
import { SETTINGS } from '../shared/settings.js';

process.env[SETTINGS.sdkNodeVersionWarningOff.env] ??= SETTINGS.sdkNodeVersionWarningOff.local;

const { Logger } = await import('@aws-lambda-powertools/logger');
const { chromium } = await import('playwright-core');
const { createConsoleRoute } = await import('../local/console/route.js');
const { freePort } = await import('../local/dynamodb-local.js');
const { startLocalStack } = await import('../local/stack.js');
const { readSetting, settingsEnv } = await import('../shared/settings.js');

const out = process.argv[2] ?? 'docs/console.png';
const tableName = 'reset-notifier';
const dynamodbPort = await freePort();
const stack = await startLocalStack({
  apiPort: 0,
  simPort: 0,
  dynamodbPort,
  tableName,
  reconcileIntervalMs: 1000,
  // Four resets to one number within a minute: the destination budget is not what the picture shows.
  env: settingsEnv({ providerTimeout: 1500, reconcileSettle: 3, destinationLimits: 'off' }),
  simulatorStatusDelaysMs: { sent: 200, delivered: 1200 },
  logger: new Logger({ serviceName: 'screenshot', logLevel: 'SILENT' }),
  routes: [createConsoleRoute({ tableName, dynamodbEndpoint: `http://127.0.0.1:${dynamodbPort}` })],
});

async function post(key: string, eventId: string): Promise<void> {
  const response = await fetch(`${stack.apiUrl}/v1/notifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({
      event_id: eventId,
      channel: 'sms',
      template: 'password_reset',
      locale: 'en',
      destination: { phone: '+14155550123' },
      expires_at: new Date(Date.now() + 15 * 60_000).toISOString(),
      params: { code: '483920' },
    }),
  });
  if (response.status !== 202) throw new Error(`admission of ${key} answered ${response.status}`);
}

async function fault(plan: Record<string, unknown>): Promise<void> {
  await fetch(`${stack.simUrl}/_sim/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(plan),
  });
}

async function waitFor(key: string, states: readonly string[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const view = (await (await fetch(`${stack.apiUrl}/v1/notifications/${key}`)).json()) as { state: string };
    if (states.includes(view.state)) return;
    if (Date.now() > deadline) throw new Error(`${key} stayed ${view.state}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

try {
  await post('reset-2f9c1e', 'evt-reset-1001');
  await waitFor('reset-2f9c1e', ['delivered']);
  await fault({ mode: 'timeout_after_accept', count: 1 });
  await post('reset-7a41d0', 'evt-reset-1002');
  await waitFor('reset-7a41d0', ['delivered']);
  await fault({ mode: 'hang' });
  await post('reset-c3b8e5', 'evt-reset-1003');
  await new Promise((r) => setTimeout(r, 2500));
  await post('reset-91d2aa', 'evt-reset-1004');
  await waitFor('reset-c3b8e5', ['dispatch_unknown']);
  await waitFor('reset-91d2aa', ['dispatch_unknown']);

  const browser = await chromium.launch({
    executablePath: readSetting(process.env, SETTINGS.chromiumPath),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1360, height: 860 }, deviceScaleFactor: 1 });
    await page.goto(`${stack.apiUrl}/console?key=reset-7a41d0`);
    await page.locator('#timeline li.entry[data-state="delivered"]').waitFor();
    await page.locator('#unknown-rows tr').nth(1).waitFor();
    await page.screenshot({ path: out, fullPage: true });
    process.stdout.write(`wrote ${out}\n`);
  } finally {
    await browser.close();
  }
} finally {
  await fetch(`${stack.simUrl}/_sim/faults`, { method: 'DELETE' }).catch(() => undefined);
  await stack.stop();
}
