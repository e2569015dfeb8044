/**
 * Receipts and confirmations end to end on DynamoDB Local: the use case over the real store (races,
 * duplicates), and the local stack where the simulator posts signed status callbacks to the API port.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import { admit, applyTransition, type NotificationRecord } from '../../shared/domain/notification.js';
import { DEFAULT_POLICY } from '../../shared/domain/policy.js';
import { TWILIO_RECEIPTS_PATH } from '../../shared/handlers/receipts-handler.js';
import { twilioSignature } from '../../shared/providers/twilio/status-callback.js';
import { ingestReceipt } from '../../shared/usecases/ingest-receipt.js';
import { aRequestBody, uniqueName } from '../support/fixtures.js';
import { ManualClock } from '../support/manual-clock.js';
import { expectConsistentTrail, type Pipeline, startPipeline } from '../support/pipeline-harness.js';

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const SID = `SM${'c'.repeat(32)}`;

describe('ingestReceipt over DynamoDB Local', () => {
  let client: DynamoDBClient;
  let store: DynamoNotificationStore;

  beforeAll(async () => {
    client = new DynamoDBClient({
      endpoint: inject('dynamodbEndpoint'),
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const tableName = uniqueName('receipts');
    await ensureTable(client, tableName);
    store = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
  });
  afterAll(() => client.destroy());

  /** A command the sender claimed and whose call timed out: dispatch_unknown, attempt 1, no id. */
  async function anUnknownCommand(): Promise<NotificationRecord> {
    const key = uniqueName('rcpt');
    const admission = admit({
      request: {
        idempotencyKey: key,
        eventId: `evt-${key}`,
        channel: 'sms',
        template: 'password_reset',
        locale: 'en',
        expiresAt: NOW + 600_000,
        sensitive: { phone: '+14155550123', params: { code: '123456' } },
      },
      destinationFingerprint: 'fp1:abc',
      payloadFingerprint: 'pf1:def',
      providerName: 'simulator',
      now: NOW,
      safetyNetAt: NOW + 60_000,
    });
    expect((await store.admit(admission.next, admission.evidence, 'aes1.sealed')).kind).toBe('admitted');
    let record = admission.next;
    for (const intent of [
      {
        to: 'dispatching',
        reason: 'claimed',
        actor: 'sender',
        at: NOW + 1,
        set: { attempts: 1, leaseUntil: NOW + 10_000, leaseOwner: 's', dueAt: NOW + 10_000 },
        remove: ['nextAttemptAt'],
      },
      {
        to: 'dispatch_unknown',
        reason: 'provider_timeout',
        actor: 'sender',
        at: NOW + 2,
        set: { unknownSince: NOW + 2, dueAt: NOW + 1_000, checks: 0 },
        remove: ['leaseUntil', 'leaseOwner'],
      },
    ] as const) {
      const written = await store.transition(applyTransition(record, intent));
      if (written.kind !== 'written') throw new Error('setup write lost');
      record = written.record;
    }
    return record;
  }

  it('applies concurrent duplicates of one receipt exactly once (one evidence record)', async () => {
    // Prepare
    const record = await anUnknownCommand();
    const deps = { store, clock: new ManualClock(NOW + 5_000), policy: DEFAULT_POLICY };
    const receipt = {
      provider: 'twilio',
      clientReference: `${record.idempotencyKey}#1`,
      messageId: SID,
      status: 'delivered',
      providerStatus: 'delivered',
    } as const;

    // Act
    const results = await Promise.all(Array.from({ length: 6 }, () => ingestReceipt(deps, receipt)));

    // Assess
    expect(results.filter((r) => r.kind === 'applied')).toHaveLength(1);
    const trail = await store.evidence(record.idempotencyKey);
    expect(trail.map((e) => e.reason)).toEqual([
      'admitted',
      'claimed',
      'provider_timeout',
      'delivery_receipt',
    ]);
    expect(trail.at(-1)).toMatchObject({ actor: 'receipt', toState: 'delivered', providerMessageId: SID });
  });

  it('racing sent and delivered receipts end delivered, never back at sent', async () => {
    // Prepare
    const record = await anUnknownCommand();
    const deps = { store, clock: new ManualClock(NOW + 5_000), policy: DEFAULT_POLICY };
    const base = {
      provider: 'twilio',
      clientReference: `${record.idempotencyKey}#1`,
      messageId: SID,
    } as const;

    // Act
    await Promise.all([
      ingestReceipt(deps, { ...base, status: 'sent', providerStatus: 'sent' }),
      ingestReceipt(deps, { ...base, status: 'delivered', providerStatus: 'delivered' }),
      ingestReceipt(deps, { ...base, status: 'sent', providerStatus: 'sent' }),
    ]);

    // Assess
    expect((await store.get(record.idempotencyKey))?.record.state).toBe('delivered');
    const trail = await store.evidence(record.idempotencyKey);
    expect(trail.filter((e) => e.toState === 'delivered')).toHaveLength(1);
    expect(trail.filter((e) => e.toState === 'sent').length).toBeLessThanOrEqual(1);
  });
});

describe('the local stack with receipts on the API port', () => {
  let pipe: Pipeline;

  beforeAll(async () => {
    // '' = the simulator posts its status callbacks to the stack's own receipts route.
    pipe = await startPipeline({ env: { PROVIDER_STATUS_CALLBACK_BASE: '' } });
  });
  afterAll(() => pipe.stop());

  it('points the callback base at its own receipts route', () => {
    expect(pipe.stack.config.providerStatusCallbackBase).toBe(`${pipe.stack.apiUrl}${TWILIO_RECEIPTS_PATH}`);
  });

  it('a delivered message is settled by its signed status callbacks (actor receipt)', async () => {
    // Prepare
    const key = uniqueName('e2e-receipt');

    // Act
    expect((await pipe.post(aRequestBody(), { 'idempotency-key': key })).status).toBe(202);
    await pipe.waitFor(key, ['delivered']);

    // Assess: receipts (sent, delivered) or a status poll may win the race; a receipt settles it at least
    // sometimes, and the trail never records one fact twice.
    const trail = await pipe.evidence(key);
    expectConsistentTrail(trail, 'delivered');
    expect(trail.filter((t) => t.to_state === 'delivered')).toHaveLength(1);
    expect(await pipe.messages(key)).toHaveLength(1);
  });

  it('at least one record of a small batch is moved by a receipt', async () => {
    // Prepare
    const keys = Array.from({ length: 4 }, () => uniqueName('batch-receipt'));

    // Act
    for (const key of keys) await pipe.post(aRequestBody(), { 'idempotency-key': key });
    for (const key of keys) await pipe.waitFor(key, ['delivered']);

    // Assess
    const actors = (await Promise.all(keys.map((key) => pipe.evidence(key)))).flatMap((trail) =>
      trail.map((t) => t.actor),
    );
    expect(actors).toContain('receipt');
  });

  it('answers 403 to an unsigned or badly signed callback and writes nothing', async () => {
    // Prepare
    const key = uniqueName('forged');
    await pipe.post(aRequestBody(), { 'idempotency-key': key });
    await pipe.waitFor(key, ['delivered']);
    const before = await pipe.evidence(key);
    const query = `client_reference=${encodeURIComponent(`${key}#1`)}`;
    const url = `${pipe.stack.apiUrl}${TWILIO_RECEIPTS_PATH}?${query}`;
    const form = new URLSearchParams({ MessageSid: SID, MessageStatus: 'undelivered' });

    // Act
    const unsigned = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const wrongKey = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilioSignature('not-the-token', url, form),
      },
      body: form.toString(),
    });

    // Assess
    expect([unsigned.status, wrongKey.status]).toEqual([403, 403]);
    expect(await pipe.evidence(key)).toEqual(before);
  });

  it('records a user confirmation once, 404s an unknown key and 409s a command never sent', async () => {
    // Prepare
    const key = uniqueName('confirm');
    await pipe.post(aRequestBody(), { 'idempotency-key': key });
    await pipe.waitFor(key, ['delivered']);
    const confirm = (k: string, body?: unknown) =>
      fetch(`${pipe.stack.apiUrl}/v1/notifications/${encodeURIComponent(k)}/confirmation`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    await pipe.fault({ mode: 'reject_permanent', count: 1 });
    const rejected = uniqueName('never-sent');
    await pipe.post(aRequestBody(), { 'idempotency-key': rejected });
    await pipe.waitFor(rejected, ['failed']);

    // Act
    const first = await confirm(key, { confirmed_at: new Date().toISOString() });
    const second = await confirm(key);
    const unknown = await confirm('no-such-key');
    const neverSent = await confirm(rejected);
    const invalid = await confirm(key, { confirmed_at: 'yesterday' });

    // Assess
    expect([first.status, second.status, unknown.status, neverSent.status, invalid.status]).toEqual([
      200, 200, 404, 409, 422,
    ]);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(((await neverSent.json()) as { code: string }).code).toBe('not_sent');
    const trail = await pipe.evidence(key);
    expect(trail.filter((t) => t.reason === 'user_confirmed')).toEqual([
      expect.objectContaining({ from_state: 'delivered', to_state: 'delivered', actor: 'api' }),
    ]);
    expectConsistentTrail(trail, 'delivered');
  });
});
