import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DispatchStep, InjectedCrashError } from '../../local/faults/dispatch-crash.js';
import { aFreshCode, aRequestBody } from '../support/fixtures.js';
import { expectConsistentTrail, type Pipeline, startPipeline } from '../support/pipeline-harness.js';

/** Crashes the first dispatch of chosen keys at a chosen step, like a Lambda dying mid-flight. */
const crashPlan = new Map<string, DispatchStep>();

let pipe: Pipeline;
let duplicating: Pipeline;

beforeAll(async () => {
  [pipe, duplicating] = await Promise.all([
    startPipeline({
      onDispatchStep: (step, key) => {
        if (crashPlan.get(key) === step) {
          crashPlan.delete(key);
          throw new InjectedCrashError(`crash at ${step}`);
        }
      },
    }),
    // Every SQS batch is handed to two concurrent invocations, every stream batch delivered twice.
    startPipeline({ sqsDuplicateProbability: 1, streamDuplicateProbability: 1 }),
  ]);
});
afterAll(async () => {
  await Promise.all([pipe.stop(), duplicating.stop()]);
});

describe('crashes and duplicate deliveries', () => {
  for (const step of ['after_provider_call', 'before_outcome_write'] as const) {
    it(`a sender killed ${step.replaceAll('_', ' ')} leaves exactly one message`, async () => {
      // Prepare
      const body = aRequestBody({ params: { code: aFreshCode() } });
      const key = `crash-${step}-${Date.now()}`;
      crashPlan.set(key, step);
      // Act
      const response = await pipe.post(body, { 'idempotency-key': key });
      expect(response.status).toBe(202);
      await pipe.waitFor(key, ['delivered']);
      // Assess
      const trail = await pipe.evidence(key);
      // The trail in the failure message says how a second message came about, if one ever does.
      expect(await pipe.messages(key), JSON.stringify(trail)).toHaveLength(1);
      expect(trail.map((t) => t.reason)).toEqual(
        expect.arrayContaining(['lease_expired', 'reconciled_found']),
      );
      expect(trail.filter((t) => t.reason === 'claimed')).toHaveLength(1);
      expectConsistentTrail(trail, 'delivered');
    });
  }

  for (const step of ['before_claim', 'after_claim'] as const) {
    it(`a sender killed ${step.replaceAll('_', ' ')} still ends with exactly one message`, async () => {
      const key = `crash-${step}-${Date.now()}`;
      crashPlan.set(key, step);
      // Each key its own code: after a crash the message is found by the code in its body.
      await pipe.post(aRequestBody({ params: { code: aFreshCode() } }), { 'idempotency-key': key });
      await pipe.waitFor(key, ['delivered']);
      expect(await pipe.messages(key)).toHaveLength(1);
    });
  }

  it('the same SQS message delivered twice concurrently sends one message', async () => {
    const { idempotency_key: key } = await duplicating.admit();
    await duplicating.waitFor(key, ['delivered']);
    expect(await duplicating.messages(key)).toHaveLength(1);
    const trail = await duplicating.evidence(key);
    expect(trail.filter((t) => t.reason === 'claimed')).toHaveLength(1);
    expectConsistentTrail(trail, 'delivered');
  });

  it('20 concurrent duplicate POSTs send one message', async () => {
    // Prepare
    const body = aRequestBody();
    // Act
    const responses = await Promise.all(Array.from({ length: 20 }, () => pipe.post(body)));
    // Assess
    expect(responses.filter((r) => r.status === 202)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(19);
    const first = responses[0];
    if (!first) throw new Error('no response');
    const key = ((await first.json()) as { idempotency_key: string }).idempotency_key;
    await pipe.waitFor(key, ['delivered']);
    expect(await pipe.messages(key)).toHaveLength(1);
  });
});
