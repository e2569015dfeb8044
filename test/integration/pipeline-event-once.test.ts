/**
 * The whole local stack (API, stream forwarder, queue, sender, reconciler, provider simulator):
 * a reset event sent with a fresh `Idempotency-Key` per HTTP retry, racing and after delivery,
 * results in exactly one provider message (issue 25 item 1), with the default budgets on.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DESTINATION_LIMITS } from '../../shared/domain/budgets.js';
import { aFreshCode, aRequestBody } from '../support/fixtures.js';
import {
  expectConsistentTrail,
  type Pipeline,
  type SimMessage,
  startPipeline,
} from '../support/pipeline-harness.js';

let pipe: Pipeline;

beforeAll(async () => {
  pipe = await startPipeline({ env: { DESTINATION_LIMITS: DEFAULT_DESTINATION_LIMITS } });
});
afterAll(async () => {
  await pipe.stop();
});

/** Every provider message sent for any of `keys`. */
async function messagesOf(keys: readonly string[]): Promise<SimMessage[]> {
  return (await Promise.all(keys.map((key) => pipe.messages(key)))).flat();
}

describe('one reset event, many idempotency keys', () => {
  it('sends exactly one SMS for 10 racing keys and 2 more after delivery', async () => {
    // Prepare: one event; a client that makes a fresh key for every retry.
    const body = aRequestBody({
      destination: { phone: `+1415${2_000_000 + Math.floor(Math.random() * 7_000_000)}` },
      params: { code: aFreshCode() },
    });
    const keys = Array.from({ length: 12 }, () => `retry-${randomUUID()}`);

    // Act
    const raced = await Promise.all(
      keys.slice(0, 10).map((key) => pipe.post(body, { 'idempotency-key': key })),
    );
    const winner = keys[raced.findIndex((r) => r.status === 202)] ?? '';
    await pipe.waitFor(winner, ['delivered']);
    const late = [];
    for (const key of keys.slice(10)) late.push(await pipe.post(body, { 'idempotency-key': key }));

    // Assess
    expect(raced.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 202]);
    expect(late.map((r) => r.status)).toEqual([200, 200]);
    const listed = (await (
      await fetch(
        `${pipe.stack.apiUrl}/v1/notifications?event_id=${encodeURIComponent(String(body.event_id))}`,
      )
    ).json()) as { items: Array<{ idempotency_key: string }> };
    expect(listed.items.map((i) => i.idempotency_key)).toEqual([winner]);
    expect(await messagesOf(keys)).toHaveLength(1);
    expectConsistentTrail(await pipe.evidence(winner), 'delivered');
  });
});
