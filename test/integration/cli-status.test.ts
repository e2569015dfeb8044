import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BufferOut } from '../../shared/cli/output.js';
import { runCli } from '../../shared/cli/program.js';
import { runStatus } from '../../shared/cli/status.js';
import { systemClock } from '../../shared/domain/clock.js';
import { TEST_CODE, TEST_PHONE } from '../support/fixtures.js';
import { type Pipeline, startPipeline } from '../support/pipeline-harness.js';

let pipe: Pipeline;
let key: string;
let eventId: string;

beforeAll(async () => {
  pipe = await startPipeline();
  eventId = `evt-cli-status-${Date.now()}`;
  key = (await pipe.admit({ event_id: eventId })).idempotency_key;
  await pipe.waitFor(key, ['delivered']);
});
afterAll(async () => {
  await pipe.stop();
});

function deps() {
  return { store: pipe.stack.runtime.store, out: new BufferOut(), err: new BufferOut(), clock: systemClock };
}

describe('reset-notifier status', () => {
  it('prints the view and the evidence timeline for a key, and reading changes nothing', async () => {
    // Prepare
    const d = deps();
    const before = await pipe.stack.runtime.store.get(key);
    const trail = await pipe.evidence(key);
    // Act
    const code = await runStatus(d, { key });
    // Assess
    expect(code).toBe(0);
    const text = d.out.text();
    expect(text).toMatch(new RegExp(`notification\\s+${key}`));
    expect(text).toMatch(/state\s+delivered/);
    expect(text).toContain(`timeline (${trail.length} records)`);
    for (const step of [
      '(new) -> accepted',
      'accepted -> dispatching',
      'dispatching -> sent',
      'sent -> delivered',
    ]) {
      expect(text).toContain(step);
    }
    expect(text).not.toContain(TEST_PHONE);
    expect(text).not.toContain(TEST_CODE);
    const after = await pipe.stack.runtime.store.get(key);
    expect(after?.record.version).toBe(before?.record.version);
    expect(after?.record.updatedAt).toBe(before?.record.updatedAt);
  });

  it('prints JSON for machines, with the evidence in seq order', async () => {
    // Prepare
    const d = deps();
    // Act
    const code = await runStatus(d, { key, json: true });
    // Assess
    expect(code).toBe(0);
    const body = JSON.parse(d.out.text()) as {
      notification: { idempotency_key: string; state: string };
      evidence: { seq: number; to_state: string }[];
    };
    expect(body.notification).toMatchObject({ idempotency_key: key, state: 'delivered' });
    expect(body.evidence.map((e) => e.seq)).toEqual(body.evidence.map((_, i) => i + 1));
    expect(body.evidence.length).toBeGreaterThanOrEqual(4);
    expect(body.evidence[0]?.to_state).toBe('accepted');
    expect(body.evidence.at(-1)?.to_state).toBe('delivered');
    expect(body.evidence.map((e) => e.to_state)).toEqual(expect.arrayContaining(['dispatching', 'sent']));
  });

  it('finds every notification of an event with --event-id', async () => {
    // Prepare
    const d = deps();
    // Act
    const code = await runStatus(d, { eventId, json: true });
    // Assess
    expect(code).toBe(0);
    const body = JSON.parse(d.out.text()) as {
      event_id: string;
      items: { notification: { idempotency_key: string } }[];
    };
    expect(body.event_id).toBe(eventId);
    expect(body.items.map((i) => i.notification.idempotency_key)).toEqual([key]);
  });

  it('exits 1 for an unknown key and 2 for a wrong call', async () => {
    // Prepare
    const missing = deps();
    const both = deps();
    // Act
    const notFound = await runStatus(missing, { key: 'no-such-key' });
    const usage = await runStatus(both, { key, eventId });
    // Assess
    expect(notFound).toBe(1);
    expect(missing.err.text()).toContain('not found');
    expect(missing.out.text()).toBe('');
    expect(usage).toBe(2);
  });

  it('runs through the CLI with --json against the table of the running stack', async () => {
    // Prepare
    const out = new BufferOut();
    // Act
    const code = await runCli(['status', key, '--json', '--local', '--table', pipe.stack.tableName], {
      out,
      err: new BufferOut(),
      env: { DYNAMODB_ENDPOINT: inject('dynamodbEndpoint') },
      clock: systemClock,
    });
    // Assess
    expect(code).toBe(0);
    expect(JSON.parse(out.text())).toMatchObject({
      notification: { idempotency_key: key, state: 'delivered' },
    });
  });
});
