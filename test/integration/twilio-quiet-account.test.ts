/**
 * Issue 20, defect 1, through `npm start` as an operator runs it (default timings): in a quiet
 * Twilio account (the simulator has no message at all), a send that times out before Twilio
 * records it (`timeout_before_accept`, redaction off) is proven absent with the scheduled probe,
 * resent and delivered exactly once before the token expires, and the probe never goes out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { aFreshCode, aRequestBody } from '../support/fixtures.js';
import { type NpmStartStack, startNpmStack } from '../support/npm-start.js';

const FINAL_STATES = ['delivered', 'undelivered', 'failed', 'expired'];

interface Transition {
  readonly to_state: string;
  readonly reason: string;
  readonly at: string;
}

describe('npm start: a quiet Twilio account', () => {
  let stack: NpmStartStack | undefined;
  afterEach(async () => {
    await stack?.kill();
  });

  it('delivers a timeout_before_accept exactly once before expiry; the probe is canceled, never sent', async () => {
    // Prepare: the whole stack on free ports, nothing sent yet
    stack = await startNpmStack();
    const api = `http://127.0.0.1:${stack.ports.PORT}`;
    const sim = `http://127.0.0.1:${stack.ports.SIM_PORT}`;
    const faults = await fetch(`${sim}/_sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'timeout_before_accept', count: 1 }),
    });
    expect(faults.ok).toBe(true);

    // Act
    const admitted = await fetch(`${api}/v1/notifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(aRequestBody({ params: { code: aFreshCode() } })),
    });
    expect(admitted.status).toBe(202);
    const { idempotency_key: key, expires_at: expiresAt } = (await admitted.json()) as {
      idempotency_key: string;
      expires_at: string;
    };
    const path = `${api}/v1/notifications/${encodeURIComponent(key)}`;
    // Readiness is a final state, bounded by the token's life, not a budget a loaded machine can miss.
    const final = await eventually(
      async () => {
        const view = (await (await fetch(path)).json()) as { state: string };
        expect(FINAL_STATES).toContain(view.state);
        return view.state;
      },
      { timeoutMs: Date.parse(expiresAt) - Date.now() + 60_000, intervalMs: 200 },
    );
    expect(final).toBe('delivered');

    // Assess: one message for the key, delivered before expiry, resent only after absence was proven
    const ledger = (await (await fetch(`${sim}/_sim/messages`)).json()) as {
      messages: { client_reference: string | null; status: string; accepted_at: string }[];
    };
    const ours = ledger.messages.filter((m) => m.client_reference?.startsWith(`${key}#`));
    expect(ours.map((m) => [m.client_reference, m.status])).toEqual([[`${key}#2`, 'delivered']]);
    expect(Date.parse(ours[0]?.accepted_at ?? '')).toBeLessThan(Date.parse(expiresAt));
    const others = ledger.messages.filter((m) => m.client_reference === null);
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((m) => m.status === 'canceled')).toBe(true);
    const trail = ((await (await fetch(`${path}/evidence`)).json()) as { transitions: Transition[] })
      .transitions;
    const reasons = trail.map((t) => t.reason);
    expect(reasons.filter((r) => r === 'claimed')).toHaveLength(2);
    expect(reasons.lastIndexOf('claimed')).toBeGreaterThan(reasons.indexOf('reconciled_absent'));
    // A safety net, not a budget: the waits are on the ready line and a final state within the token's life.
  }, 900_000);
});
