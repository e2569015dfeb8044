import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BufferOut } from '../../shared/cli/output.js';
import { runCli } from '../../shared/cli/program.js';
import { runReconcile } from '../../shared/cli/reconcile.js';
import { systemClock } from '../../shared/domain/clock.js';
import { FAST_ENV, type Pipeline, startPipeline } from '../support/pipeline-harness.js';

let pipe: Pipeline;
let key: string;

beforeAll(async () => {
  // The stack's own reconciler timer is effectively off: only the CLI reconciles here.
  pipe = await startPipeline({ reconcileIntervalMs: 3_600_000 });
  await pipe.fault({ mode: 'timeout_after_accept', count: 1 });
  key = (await pipe.admit()).idempotency_key;
  // Normally the stream forwards the key at once; on a loaded machine the stream poller can lag,
  // and the schedule's safety net (a redrive of `accepted` keys) is what the timer would add.
  const deadline = Date.now() + 60_000;
  for (let last = Date.now(); ; ) {
    const { state } = await pipe.view(key);
    if (state === 'dispatch_unknown') break;
    if (Date.now() > deadline) throw new Error(`${key} stayed ${state}`);
    if (state === 'accepted' && Date.now() - last > 5000) {
      last = Date.now();
      await pipe.stack.reconcileNow();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
});
afterAll(async () => {
  await pipe.stop();
});

describe('reset-notifier reconcile', () => {
  it('without --now lists the due items and changes nothing', async () => {
    // Prepare: wait until the unknown outcome is due for a look.
    const store = pipe.stack.runtime.store;
    const deadline = Date.now() + 15_000;
    while (!(await store.due(Date.now(), 100)).items.some((r) => r.idempotencyKey === key)) {
      if (Date.now() > deadline) throw new Error('never became due');
      await new Promise((r) => setTimeout(r, 100));
    }
    const before = await store.get(key);
    const out = new BufferOut();
    let passes = 0;
    // Act
    const result = await runReconcile(
      {
        store,
        out,
        clock: systemClock,
        runPass: async () => {
          passes++;
          throw new Error('must not run');
        },
      },
      {},
    );
    // Assess
    expect(passes).toBe(0);
    expect(result.due).toEqual([
      expect.objectContaining({ idempotency_key: key, state: 'dispatch_unknown' }),
    ]);
    expect(out.text()).toContain('run with --now');
    expect((await store.get(key))?.record.version).toBe(before?.record.version);
  });

  it('--now runs one reconciler pass that finds the accepted message, without sending another', async () => {
    // Prepare: the CLI builds its own runtime from configuration, as against `npm start`.
    const config = pipe.stack.config;
    const env = {
      ...FAST_ENV,
      DYNAMODB_ENDPOINT: pipe.stack.dynamodbEndpoint,
      SQS_ENDPOINT: pipe.stack.sqsEndpoint,
      TABLE_NAME: pipe.stack.tableName,
      DISPATCH_QUEUE_URL: pipe.stack.queueUrl,
      DLQ_URL: pipe.stack.dlqUrl,
      PROVIDER_BASE_URL: pipe.stack.simUrl,
      LOCAL_DATA_KEY: config.localDataKey,
      FINGERPRINT_KEY: config.fingerprintKey,
    };
    const out = new BufferOut();
    const err = new BufferOut();
    // Act
    const code = await runCli(['reconcile', '--now', '--json'], { out, err, env, clock: systemClock });
    // Assess
    expect(err.text()).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(out.text()) as {
      due_before: number;
      summary: { lookups: number; transitioned: number };
    };
    expect(result.due_before).toBe(1);
    expect(result.summary).toMatchObject({ lookups: 1, transitioned: 1 });
    const trail = await pipe.evidence(key);
    expect(trail.at(-1)).toMatchObject({
      from_state: 'dispatch_unknown',
      reason: 'reconciled_found',
      actor: 'reconciler',
    });
    expect(await pipe.messages(key)).toHaveLength(1);
  });

  it('--now without the service keys explains what is missing', async () => {
    // Prepare
    const err = new BufferOut();
    // Act
    const code = await runCli(['reconcile', '--now'], {
      out: new BufferOut(),
      err,
      env: {
        DYNAMODB_ENDPOINT: pipe.stack.dynamodbEndpoint,
        SQS_ENDPOINT: pipe.stack.sqsEndpoint,
        TABLE_NAME: pipe.stack.tableName,
        DISPATCH_QUEUE_URL: pipe.stack.queueUrl,
      },
      clock: systemClock,
    });
    // Assess
    expect(code).toBe(2);
    expect(err.text()).toContain('--data-dir');
  });
});
