import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectConsistentTrail, type Pipeline, startPipeline } from '../support/pipeline-harness.js';

/**
 * One end-to-end test per simulator fault mode, on the real local stack: DynamoDB Local, its
 * stream, fauxqs, the sender, the reconciler and the simulator speaking HTTP.
 */
let pipe: Pipeline;

beforeAll(async () => {
  pipe = await startPipeline();
});
afterEach(async () => {
  await pipe.clearFaults();
});
afterAll(async () => {
  await pipe.stop();
});

describe('dispatch under provider faults', () => {
  it('happy path: exactly one message, delivered, with a complete trail', async () => {
    // Act
    const { idempotency_key: key } = await pipe.admit();
    const view = await pipe.waitFor(key, ['delivered']);
    // Assess
    expect(await pipe.messages(key)).toHaveLength(1);
    expect(view.provider.message_id).toMatch(/^SM/);
    const trail = await pipe.evidence(key);
    expect(trail.map((t) => t.reason)).toEqual(['admitted', 'claimed', 'provider_accepted', 'status_polled']);
    expectConsistentTrail(trail, 'delivered');
  });

  it('timeout_after_accept: dispatch_unknown, reconciled to found, still exactly one message', async () => {
    // Prepare
    await pipe.fault({ mode: 'timeout_after_accept', count: 1 });
    // Act
    const { idempotency_key: key } = await pipe.admit();
    await pipe.waitFor(key, ['sent', 'delivered']);
    const view = await pipe.waitFor(key, ['delivered']);
    // Assess
    const messages = await pipe.messages(key);
    expect(messages).toHaveLength(1);
    expect(view.provider.message_id).toBe(messages[0]?.id);
    const trail = await pipe.evidence(key);
    expect(trail.map((t) => [t.to_state, t.reason])).toEqual(
      expect.arrayContaining([
        ['dispatch_unknown', 'provider_timeout'],
        [expect.stringMatching(/^(sent|delivered)$/), 'reconciled_found'],
      ]),
    );
    expect(trail.filter((t) => t.reason === 'claimed')).toHaveLength(1);
    expectConsistentTrail(trail, 'delivered');
  });

  it('timeout_before_accept: reconciled absent after the settle time, resent once, one message', async () => {
    // Prepare
    await pipe.fault({ mode: 'timeout_before_accept', count: 1 });
    // Act
    const { idempotency_key: key } = await pipe.admit();
    const view = await pipe.waitFor(key, ['delivered']);
    // Assess
    expect(await pipe.messages(key)).toHaveLength(1);
    expect(view.attempts).toBe(2);
    const trail = await pipe.evidence(key);
    const reasons = trail.map((t) => t.reason);
    expect(reasons.indexOf('reconciled_absent')).toBeGreaterThan(reasons.indexOf('provider_timeout'));
    expect(reasons.filter((r) => r === 'claimed')).toHaveLength(2);
    // The second claim only after reconciliation established absence.
    expect(reasons.lastIndexOf('claimed')).toBeGreaterThan(reasons.indexOf('reconciled_absent'));
    expectConsistentTrail(trail, 'delivered');
  });

  it('error_5xx_after_accept: the 500 is an unknown outcome, reconciled found, one message', async () => {
    await pipe.fault({ mode: 'error_5xx_after_accept', count: 1 });
    const { idempotency_key: key } = await pipe.admit();
    await pipe.waitFor(key, ['delivered']);
    expect(await pipe.messages(key)).toHaveLength(1);
    const reasons = (await pipe.evidence(key)).map((t) => t.reason);
    expect(reasons).toContain('reconciled_found');
    expect(reasons.filter((r) => r === 'claimed')).toHaveLength(1);
  });

  it('error_5xx_before_accept: a 503 is still unknown (when in doubt), reconciled absent, resent, one message', async () => {
    await pipe.fault({ mode: 'error_5xx_before_accept', count: 1 });
    const { idempotency_key: key } = await pipe.admit();
    await pipe.waitFor(key, ['delivered']);
    expect(await pipe.messages(key)).toHaveLength(1);
  });

  it('rate_limited: retried after the backoff, one message', async () => {
    await pipe.fault({ mode: 'rate_limited', count: 1, retry_after_seconds: 1 });
    const { idempotency_key: key } = await pipe.admit();
    await pipe.waitFor(key, ['delivered']);
    expect(await pipe.messages(key)).toHaveLength(1);
    const trail = await pipe.evidence(key);
    expect(trail.map((t) => t.reason)).toContain('provider_rejected_retryable');
    const rejected = trail.find((t) => t.reason === 'provider_rejected_retryable');
    expect(rejected).toMatchObject({ from_state: 'dispatching', to_state: 'accepted' });
    expectConsistentTrail(trail, 'delivered');
  });

  it('reject_permanent: failed, zero messages', async () => {
    await pipe.fault({ mode: 'reject_permanent', count: 1 });
    const { idempotency_key: key } = await pipe.admit();
    const view = await pipe.waitFor(key, ['failed']);
    expect(view.last_reason).toBe('provider_rejected_permanent');
    expect(await pipe.messages(key)).toHaveLength(0);
  });

  it('hang until expiry: expired, zero messages, no provider call at or after expires_at - margin', async () => {
    // Prepare: the token lives 9 s, so the dispatch deadline is 4 s away.
    await pipe.fault({ mode: 'hang' });
    // Act
    const { idempotency_key: key, expires_at } = await pipe.admit({
      expires_at: new Date(Date.now() + 9_000).toISOString(),
    });
    const view = await pipe.waitFor(key, ['expired']);
    // Assess
    expect(await pipe.messages(key)).toHaveLength(0);
    const deadline = Date.parse(expires_at) - 5_000;
    const calls = await pipe.requests(key);
    for (const call of calls) expect(Date.parse(call.received_at)).toBeLessThan(deadline);
    expect(['unknown_at_expiry', 'expired_before_dispatch']).toContain(view.last_reason);
  });
});
