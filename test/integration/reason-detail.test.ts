import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BufferOut } from '../../shared/cli/output.js';
import { runStatus } from '../../shared/cli/status.js';
import { systemClock } from '../../shared/domain/clock.js';
import { TEST_CODE, TEST_PHONE } from '../support/fixtures.js';
import { type Pipeline, startPipeline } from '../support/pipeline-harness.js';

/**
 * Issue 20 item 4: every non-delivery explains itself. Through the real local stack (API, queue,
 * sender, reconciler, simulator over HTTP), the provider's code reaches the view, the evidence
 * and `reset-notifier status`; a command still in doubt says what the service waits for.
 */
interface Explained {
  readonly state: string;
  readonly expires_at: string;
  readonly reason_detail?: string;
  readonly waiting_for?: {
    readonly what: string;
    readonly until: string;
    readonly bounded_by_expiry: boolean;
  };
}
interface ExplainedTransition {
  readonly to_state: string;
  readonly reason: string;
  readonly reason_detail?: string;
}

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

describe('reason_detail through the pipeline', () => {
  it('a permanent provider rejection shows twilio:21211 in the view, the evidence and the CLI', async () => {
    // Prepare
    await pipe.fault({ mode: 'reject_permanent', count: 1 });
    const { idempotency_key: key } = await pipe.admit();

    // Act
    await pipe.waitFor(key, ['failed']);
    const view = (await pipe.view(key)) as unknown as Explained;
    const trail = (await pipe.evidence(key)) as unknown as ExplainedTransition[];
    const out = new BufferOut();
    const code = await runStatus(
      { store: pipe.stack.runtime.store, out, err: new BufferOut(), clock: systemClock },
      { key },
    );

    // Assess
    expect(view.reason_detail).toBe('twilio:21211');
    expect(view.waiting_for).toBeUndefined();
    expect(trail.at(-1)).toMatchObject({
      to_state: 'failed',
      reason: 'provider_rejected_permanent',
      reason_detail: 'twilio:21211',
    });
    expect(code).toBe(0);
    expect(out.text()).toMatch(/reason_detail\s+twilio:21211/);
    expect(JSON.stringify([view, trail, out.text()])).not.toContain(TEST_PHONE);
    expect(JSON.stringify([view, trail, out.text()])).not.toContain(TEST_CODE);
  });

  it('an unknown outcome says why, and what the service waits for until when', async () => {
    // Prepare: the provider hangs, so the send times out and lookups stay inconclusive.
    await pipe.fault({ mode: 'hang' });
    const { idempotency_key: key } = await pipe.admit();

    // Act
    await pipe.waitFor(key, ['dispatch_unknown']);
    const view = (await pipe.view(key)) as unknown as Explained;
    const trail = (await pipe.evidence(key)) as unknown as ExplainedTransition[];

    // Assess
    expect(view.reason_detail).toMatch(/^[a-z0-9_]+(:[A-Za-z0-9_.-]+)*$/);
    expect(trail.find((t) => t.to_state === 'dispatch_unknown')?.reason_detail).toMatch(/timeout/);
    expect(['reconcile_check', 'second_absence_read']).toContain(view.waiting_for?.what);
    expect(Date.parse(view.waiting_for?.until ?? '')).toBeLessThanOrEqual(Date.parse(view.expires_at));
  });
});
