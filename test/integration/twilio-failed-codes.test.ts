/**
 * Twilio `failed` messages end to end, on the real local stack (DynamoDB Local, fauxqs, the sender,
 * the reconciler, the simulator over HTTP): a message that fails with a "not sent, retryable" code
 * (30500, Twilio's internal error: "Try sending the message again") is sent again and delivered
 * once; one that fails with a "not sent, permanent" code (30450, SMS pumping protection) ends
 * `failed` and is never sent again. Both through the status poll (no callbacks) and through signed
 * status callbacks (docs/providers/twilio.md, "Failed messages, code by code").
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectConsistentTrail, type Pipeline, startPipeline } from '../support/pipeline-harness.js';

/** Long enough for several reconciler passes and status polls (250 ms, 200 ms) after the outcome. */
const QUIET_AFTER_MS = 2_000;

describe.each([
  ['the status poll', {}],
  // '' = the simulator posts its signed callbacks to the stack's own receipts route.
  ['status callbacks', { PROVIDER_STATUS_CALLBACK_BASE: '' }],
] as const)('Twilio failed codes through %s', (_, env) => {
  let pipe: Pipeline;

  beforeAll(async () => {
    pipe = await startPipeline({ env });
  });
  afterEach(async () => {
    await pipe.clearFaults();
  });
  afterAll(async () => {
    await pipe.stop();
  });

  it('30500 (Twilio internal error): sent again, delivered once', async () => {
    // Prepare
    await pipe.fault({ mode: 'fail_not_sent', error_code: 30500, count: 1 });

    // Act
    const { idempotency_key: key } = await pipe.admit();
    const view = await pipe.waitFor(key, ['delivered', 'failed', 'undelivered', 'expired']);

    // Assess
    expect(view.state).toBe('delivered');
    expect(view.attempts).toBe(2);
    const messages = await pipe.messages(key);
    expect(messages.map((m) => m.status)).toEqual(['failed', 'delivered']);
    const trail = await pipe.evidence(key);
    expect(trail).toContainEqual(
      expect.objectContaining({
        to_state: 'accepted',
        reason: 'provider_not_sent',
        reason_detail: 'twilio:30500',
      }),
    );
    // Two provider calls (a claim given back before any call, `call_not_started`, sends nothing).
    expect(await pipe.requests(key)).toHaveLength(2);
    expectConsistentTrail(trail, 'delivered');
  });

  it('30450 (SMS pumping protection): failed, never sent again', async () => {
    // Prepare
    await pipe.fault({ mode: 'fail_not_sent', error_code: 30450, count: 1 });

    // Act
    const { idempotency_key: key } = await pipe.admit();
    const view = await pipe.waitFor(key, ['delivered', 'failed', 'undelivered', 'expired']);
    await new Promise((resolve) => setTimeout(resolve, QUIET_AFTER_MS));

    // Assess
    expect(view.state).toBe('failed');
    expect(view.attempts).toBe(1);
    expect(await pipe.requests(key)).toHaveLength(1);
    expect((await pipe.messages(key)).map((m) => m.status)).toEqual(['failed']);
    const trail = await pipe.evidence(key);
    expect(trail.at(-1)).toMatchObject({
      to_state: 'failed',
      reason: 'provider_not_sent',
      reason_detail: 'twilio:30450',
    });
    expectConsistentTrail(trail, 'failed');
    expect((await pipe.view(key)).state).toBe('failed');
  });
});
