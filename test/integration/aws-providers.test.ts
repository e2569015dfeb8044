/**
 * `PROVIDER=sns` and `PROVIDER=eum` end to end on the local stack: the real SDK clients against the
 * AWS simulator through endpoint overrides, the same handlers as in Lambda.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aRequestBody } from '../support/fixtures.js';
import { type Pipeline, startPipeline } from '../support/pipeline-harness.js';

interface AwsLedgerEntry {
  readonly id: string;
  readonly protocol: string;
  readonly client_reference: string | null;
  readonly status: string;
}

let sns: Pipeline;
let eum: Pipeline;
// Known at collection time, so the event-settlement test runs once the receipts use case is merged.

beforeAll(async () => {
  [sns, eum] = await Promise.all([
    startPipeline({ env: { PROVIDER: 'sns' } }),
    startPipeline({ env: { PROVIDER: 'eum' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([sns?.stop(), eum?.stop()]);
});

async function ledger(pipe: Pipeline): Promise<AwsLedgerEntry[]> {
  const body = (await (await fetch(`${pipe.stack.simUrl}/_sim/messages`)).json()) as {
    messages: AwsLedgerEntry[];
  };
  return body.messages;
}

describe('PROVIDER=sns on the local stack', () => {
  it('publishes once and ends sent: a delivery-status SUCCESS line is carrier acceptance, never delivered', async () => {
    // Prepare
    const before = (await ledger(sns)).length;

    // Act
    const view = await sns.admit();
    const done = await sns.waitFor(view.idempotency_key, ['sent']);

    // Assess
    const added = (await ledger(sns)).slice(before);
    expect(added).toHaveLength(1);
    expect(done.provider.message_id).toBe(added[0]?.id);
  });

  it('a timeout after acceptance ends unknown_at_expiry with no second SMS (no guessing from logs)', async () => {
    // Prepare: the id never comes back; the token lives 20 s.
    await sns.fault({ mode: 'timeout_after_accept', count: 1 });
    const before = (await ledger(sns)).length;

    // Act
    const view = await sns.admit({ expires_at: new Date(Date.now() + 20_000).toISOString() });
    const done = await sns.waitFor(view.idempotency_key, ['expired'], 40_000);

    // Assess
    expect(done.last_reason).toBe('unknown_at_expiry');
    expect((await ledger(sns)).slice(before)).toHaveLength(1);
  });
});

describe('PROVIDER=eum on the local stack', () => {
  it('sends once with our reference in Context; its events move it on to delivered', async () => {
    const view = await eum.admit();
    const done = await eum.waitFor(view.idempotency_key, ['delivered']);
    const ours = (await ledger(eum)).filter((m) => m.client_reference === `${view.idempotency_key}#1`);
    expect(ours).toHaveLength(1);
    expect(done.provider.message_id).toBe(ours[0]?.id);
  });

  it('a permanent refusal (opted-out destination) fails without a message', async () => {
    await eum.fault({ mode: 'reject_permanent', count: 1 });
    const view = await eum.admit(aRequestBody());
    const done = await eum.waitFor(view.idempotency_key, ['failed']);
    expect(done.last_reason).toBe('provider_rejected_permanent');
    expect(
      (await ledger(eum)).filter((m) => m.client_reference?.startsWith(view.idempotency_key)),
    ).toHaveLength(0);
  });

  it('a timeout after acceptance is settled by the events (found, never resent)', async () => {
    await eum.fault({ mode: 'timeout_after_accept', count: 1 });
    const view = await eum.admit();
    const done = await eum.waitFor(view.idempotency_key, ['delivered']);
    expect(done.attempts).toBe(1);
    expect(
      (await ledger(eum)).filter((m) => m.client_reference?.startsWith(view.idempotency_key)),
    ).toHaveLength(1);
  });
});
