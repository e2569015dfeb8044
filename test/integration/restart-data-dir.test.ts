/**
 * `npm start -- --data-dir DIR`, stopped and started again (issue 20 item 6): the restarted
 * simulator still shows the first run's messages as Twilio would (body included, read through the
 * simulator's Twilio API), so the service does not mistake them for Message Redaction and can still
 * prove absence: a send that timed out before Twilio recorded it is resent and delivered once.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../support/fixtures.js';
import { expectConsistentTrail, type Pipeline, startPipeline } from '../support/pipeline-harness.js';

/** A message as the simulator's Twilio API shows it, with the stack's own account and token. */
async function simulatorMessage(pipe: Pipeline, sid: string): Promise<Record<string, unknown>> {
  const account = pipe.stack.config.providerAccountSid;
  const response = await fetch(`${pipe.stack.simUrl}/2010-04-01/Accounts/${account}/Messages/${sid}.json`, {
    headers: {
      authorization: `Basic ${Buffer.from(`${account}:${pipe.stack.config.providerAuthToken}`).toString('base64')}`,
    },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe('the local stack restarted with the same --data-dir', () => {
  let dataDir: string;
  const tableName = uniqueName('restart');
  let first: Pipeline | undefined;
  let second: Pipeline | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'reset-notifier-data-'));
  });
  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('reads the first run messages with their bodies, and still proves absence after a lost send', async () => {
    // Prepare: one reset delivered in the first run
    first = await startPipeline({ dataDir, tableName });
    const { idempotency_key: before } = await first.admit();
    const delivered = await first.waitFor(before, ['delivered']);
    const sid = delivered.provider.message_id ?? '';
    const body = (await simulatorMessage(first, sid)).body;
    await first.stop();
    first = undefined;

    // Act: the same data dir, and a send that times out before Twilio records it
    second = await startPipeline({ dataDir, tableName });
    const reloaded = await simulatorMessage(second, sid);
    await second.fault({ mode: 'timeout_before_accept', count: 1 });
    const { idempotency_key: key } = await second.admit();
    const view = await second.waitFor(key, ['delivered', 'expired', 'failed', 'undelivered']);

    // Assess
    expect(typeof body).toBe('string');
    expect(body).not.toBe('');
    expect(reloaded).toMatchObject({ sid, body, status: 'delivered' });
    expect(view.state).toBe('delivered');
    expect(await second.messages(key)).toHaveLength(1);
    const trail = await second.evidence(key);
    expect(trail.map((t) => t.reason)).toContain('reconciled_absent');
    expectConsistentTrail(trail, 'delivered');
    const ledger = await readFile(join(dataDir, 'simulator-ledger.jsonl'), 'utf8');
    expect(ledger).not.toContain(String(body));
  });
});
