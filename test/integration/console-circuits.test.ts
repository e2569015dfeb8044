import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createConsoleRoute } from '../../local/console/route.js';
import { ensureTable } from '../../local/resources.js';
import { startHttpServer } from '../../local/runtime/http-server.js';
import { createDynamoProviderHealth } from '../../shared/adapters/dynamodb/provider-health.js';
import { circuitSettingsOf } from '../../shared/composition/provider-health.js';
import type { Clock } from '../../shared/domain/clock.js';
import { uniqueName } from '../support/fixtures.js';

/** Debian's chromium, driven headless by playwright-core, as in console.test.ts. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
];
const SETTINGS = circuitSettingsOf({});

let client: DynamoDBClient;
let tableName: string;
let server: { url: string; stop(): Promise<void> };
let browser: Browser;
const at = { now: Date.now() };
const clock: Clock = { now: () => at.now };

beforeAll(async () => {
  client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  tableName = uniqueName('console-circuits');
  await ensureTable(client, tableName);
  server = await startHttpServer({
    port: 0,
    handler: async () => ({ statusCode: 404, body: '' }),
    routes: [
      createConsoleRoute({
        tableName,
        dynamoClient: client,
        clock,
        providers: ['twilio', 'eum'],
        circuitSettings: SETTINGS,
      }),
    ],
  });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  client?.destroy();
});

/** Opens twilio's circuit the way senders do: ten errors in its window. */
async function openTwilio(now: number): Promise<void> {
  const sender = createDynamoProviderHealth({ client, tableName, settings: SETTINGS, role: 'sender' });
  await Promise.all(Array.from({ length: SETTINGS.minSamples }, () => sender.record('twilio', 'error', now)));
}

describe('console: provider circuits', () => {
  it('lists each provider in order; an opened one as open since, then half_open once its probe is due, never taking it', async () => {
    // Prepare
    const opened = Date.now();
    at.now = opened;
    await openTwilio(opened);
    const list = async () =>
      (await (await fetch(`${server.url}/console/api/circuits`)).json()) as {
        items: { provider: string; state: string; since: string | null }[];
      };
    // Act
    const open = await list();
    at.now = opened + SETTINGS.probePeriodMs + 2_000;
    const due = await list();
    const sender = createDynamoProviderHealth({ client, tableName, settings: SETTINGS, role: 'sender' });
    const probe = await sender.view(['twilio'], at.now);
    // Assess
    expect(open.items).toEqual([
      { provider: 'twilio', state: 'open', since: new Date(opened).toISOString() },
      { provider: 'eum', state: 'closed', since: null },
    ]);
    expect(due.items[0]?.state).toBe('half_open');
    expect(probe[0]?.state).toBe('half_open');
  });

  it('draws the panel in headless Chromium', async () => {
    // Prepare
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // Act
    await page.goto(`${server.url}/console`);
    await page.locator('#circuit-rows tr[data-provider="eum"]').waitFor();
    // Assess
    expect(
      await page
        .locator('#circuit-rows tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-provider'))),
    ).toEqual(['twilio', 'eum']);
    expect(await page.locator('#circuit-rows tr[data-provider="eum"] .badge').textContent()).toBe('closed');
    expect(errors).toEqual([]);
    await page.close();
  });
});
