import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InjectedCrashError } from '../../local/faults/dispatch-crash.js';
import { eventually } from '../support/eventually.js';
import { type Pipeline, startPipeline } from '../support/pipeline-harness.js';

/**
 * The template's alarms on the local stack (local/alarms/): a fault class injected through the
 * stack's hooks makes the alarm docs/operations.md names for it go to ALARM, evaluated over the
 * EMF lines the handlers print, the functions' invocations and the queues' depths. The timer's
 * minute never ticks here: each test evaluates on demand once the fault has played out.
 */
let pipe: Pipeline;
let crashNextClaim = false;

beforeAll(async () => {
  pipe = await startPipeline({
    // A sender that dies once after its claim, when a test asks (the chaos rig's crash hook).
    onDispatchStep: (step, key) => {
      if (!crashNextClaim || step !== 'after_claim') return;
      crashNextClaim = false;
      throw new InjectedCrashError(`injected crash after claim of ${key}`);
    },
    alarms: { intervalMs: 3_600_000 },
  });
});
afterAll(async () => {
  await pipe.stop();
});

/** Evaluates until `alarm` is in ALARM (the metrics of an invocation are published as it ends). */
async function expectAlarm(alarm: string): Promise<void> {
  await eventually(
    async () => {
      await pipe.stack.alarms.evaluateNow();
      expect(pipe.stack.alarms.state(alarm)).toBe('ALARM');
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
}

describe('alarms evaluated on the local stack', () => {
  it('evaluates the template alarms it can observe, and none fires on a delivered reset', async () => {
    // Act
    const { idempotency_key: key } = await pipe.admit();
    await pipe.waitFor(key, ['delivered']);
    await pipe.stack.alarms.evaluateNow();
    // Assess
    const evaluated = pipe.stack.alarms.evaluated.map((a) => a.name);
    expect(evaluated).toEqual(
      expect.arrayContaining(['SenderErrors', 'ZeroSmsOutcomes', 'DispatchDeadLetters', 'ReconcilerStalled']),
    );
    expect(pipe.stack.alarms.unevaluated.map((a) => a.alarm)).toEqual(
      expect.arrayContaining(['ApiServerErrors', 'SenderThrottles', 'DispatchQueueAge']),
    );
    expect(pipe.stack.alarms.fired()).toEqual([]);
    expect(pipe.stack.alarms.state('ReconcilerStalled')).toBe('OK');
  });

  it('sender crash: SenderErrors goes to ALARM', async () => {
    // Prepare
    crashNextClaim = true;
    // Act
    const { idempotency_key: key } = await pipe.admit();
    await pipe.waitFor(key, ['delivered']);
    // Assess
    await expectAlarm('SenderErrors');
    expect(
      pipe.stack.alarms.changes().find((c) => c.alarm === 'SenderErrors' && c.to === 'ALARM')?.reason,
    ).toMatch(
      /^Threshold Crossed: 1 out of the last 1 datapoints \[[1-9]\d*\] was greater than the threshold \(0\)/,
    );
  });

  it('provider fails every message without sending it: ZeroSmsOutcomes goes to ALARM', async () => {
    // Prepare: every send accepted, then failed before reaching a carrier (Twilio's "not sent" codes)
    await pipe.fault({ mode: 'fail_not_sent' });
    try {
      // Act: the sender retries until its attempts run out: a final outcome without any SMS
      const { idempotency_key: key } = await pipe.admit();
      await pipe.waitFor(key, ['failed', 'expired', 'undelivered'], 90_000);
    } finally {
      await pipe.clearFaults();
    }
    // Assess
    await expectAlarm('ZeroSmsOutcomes');
  });

  it('a message in the dispatch dead-letter queue: DispatchDeadLetters goes to ALARM', async () => {
    // Prepare
    const sqs = new SQSClient({
      endpoint: pipe.stack.sqsEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    // Act
    await sqs.send(
      new SendMessageCommand({ QueueUrl: pipe.stack.dlqUrl, MessageBody: '{"idempotencyKey":"dead"}' }),
    );
    // Assess
    await expectAlarm('DispatchDeadLetters');
    expect(pipe.stack.alarms.fired()).toEqual(
      expect.arrayContaining(['SenderErrors', 'ZeroSmsOutcomes', 'DispatchDeadLetters']),
    );
  });
});
