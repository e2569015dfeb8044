/**
 * The environment contract of docs/design.md#local-stack: with `PROVIDER=twilio`, `PROVIDER_BASE_URL`,
 * `PROVIDER_ACCOUNT_SID`, `PROVIDER_AUTH_TOKEN`, `PROVIDER_MESSAGING_SERVICE_SID` and
 * `PROVIDER_STATUS_CALLBACK_BASE`, the local stack talks to that Twilio-compatible endpoint (here
 * a second, separately started simulator with its own credentials) instead of its built-in one.
 * Redaction is not declared, so it is assumed on: an unknown outcome no listing can settle ends
 * `unknown_at_expiry` without a second SMS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSimulator, startSimulator } from '../../local/simulator/server.js';
import { aFreshCode } from '../support/fixtures.js';
import { type Pipeline, startPipeline } from '../support/pipeline-harness.js';

const ACCOUNT_SID = `AC${'7'.repeat(32)}`;
const AUTH_TOKEN = 'external-endpoint-token';
const SERVICE_SID = `MG${'d'.repeat(32)}`;

let external: RunningSimulator;
let pipe: Pipeline;

const ledgerOf = async (url: string) =>
  ((await (await fetch(`${url}/_sim/messages`)).json()) as { messages: Record<string, unknown>[] }).messages;

beforeAll(async () => {
  external = await startSimulator({ authToken: AUTH_TOKEN, statusDelaysMs: { sent: 50, delivered: 200 } });
  pipe = await startPipeline({
    env: {
      PROVIDER: 'twilio',
      PROVIDER_BASE_URL: external.url,
      PROVIDER_ACCOUNT_SID: ACCOUNT_SID,
      PROVIDER_AUTH_TOKEN: AUTH_TOKEN,
      PROVIDER_MESSAGING_SERVICE_SID: SERVICE_SID,
      PROVIDER_STATUS_CALLBACK_BASE: `${external.url}/_callbacks/status`,
    },
  });
});
afterAll(async () => {
  await pipe?.stop();
  await external?.stop();
});

describe('PROVIDER=twilio against a Twilio-compatible endpoint', () => {
  it('sends through the configured endpoint, with the messaging service, and polls it to delivered', async () => {
    // Act
    const { idempotency_key: key } = await pipe.admit();
    const view = await pipe.waitFor(key, ['delivered']);

    // Assess
    const ledger = await ledgerOf(external.url);
    expect(ledger).toMatchObject([
      { id: view.provider.message_id, client_reference: `${key}#1`, messaging_service_sid: SERVICE_SID },
    ]);
    expect(view.provider.name).toBe('twilio');
    expect(await ledgerOf(pipe.stack.simUrl)).toEqual([]);
    const callbacks = (
      (await (await fetch(`${external.url}/_sim/callbacks`)).json()) as {
        callbacks: { client_reference: string; signature_valid: boolean }[];
      }
    ).callbacks;
    expect(callbacks.length).toBeGreaterThan(0);
    expect(callbacks.every((c) => c.client_reference === `${key}#1` && c.signature_valid)).toBe(true);
  });

  it('with redaction assumed on, a timeout before acceptance ends unknown_at_expiry, with no second SMS', async () => {
    // Prepare
    await fetch(`${external.url}/_sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'timeout_before_accept', count: 1 }),
    });

    // Act
    const { idempotency_key: key } = await pipe.admit({
      params: { code: aFreshCode() },
      expires_at: new Date(Date.now() + 12_000).toISOString(),
    });
    const view = await pipe.waitFor(key, ['expired']);

    // Assess
    expect(view.last_reason).toBe('unknown_at_expiry');
    expect(view.attempts).toBe(1);
    const ledger = await ledgerOf(external.url);
    expect(ledger.filter((m) => String(m.client_reference).startsWith(`${key}#`))).toEqual([]);
    const reasons = (await pipe.evidence(key)).map((t) => t.reason);
    expect(reasons).not.toContain('reconciled_absent');
  });
});
