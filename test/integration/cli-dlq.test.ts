import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureQueues } from '../../local/resources.js';
import { runDlqList, runDlqRedrive } from '../../shared/cli/dlq.js';
import { BufferOut } from '../../shared/cli/output.js';
import { runCli } from '../../shared/cli/program.js';
import { systemClock } from '../../shared/domain/clock.js';
import { uniqueName } from '../support/fixtures.js';
import { type Pipeline, startPipeline } from '../support/pipeline-harness.js';

const sqs = new SQSClient({
  endpoint: inject('sqsEndpoint'),
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

async function depth(queueUrl: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) +
    Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

async function drain(queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
      }),
    );
    if (!out.Messages?.length) return bodies;
    bodies.push(...out.Messages.map((m) => m.Body ?? ''));
  }
}

const body = (key: string, version = 3) => JSON.stringify({ idempotency_key: key, version });

describe('reset-notifier dlq (queues only)', () => {
  let queueUrl: string;
  let dlqUrl: string;
  const deps = (out = new BufferOut()) => ({
    sqs,
    queueUrl,
    dlqUrl,
    out,
    clock: systemClock,
    waitSeconds: 0,
  });

  beforeAll(async () => {
    ({ queueUrl, dlqUrl } = await ensureQueues(sqs, uniqueName('dlq'), {
      visibilityTimeoutSeconds: 30,
      maxReceiveCount: 5,
    }));
    for (const message of [body('k-1'), body('k-2'), body('k-3'), 'not json at all']) {
      await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: message }));
    }
  });

  it('lists the DLQ without removing anything', async () => {
    // Prepare
    const out = new BufferOut();
    // Act
    const first = await runDlqList(deps(out), {});
    const second = await runDlqList(deps(), { json: true });
    // Assess
    expect(first.map((e) => e.idempotency_key).sort()).toEqual(['k-1', 'k-2', 'k-3', null].sort());
    expect(second).toHaveLength(4);
    expect(out.text()).toContain('4 message(s)');
    expect(out.text()).toContain('(not a dispatch message)');
    expect(await depth(dlqUrl)).toBe(4);
  });

  it('--dry-run says what would move and moves nothing', async () => {
    // Prepare
    const out = new BufferOut();
    // Act
    const report = await runDlqRedrive(deps(out), { dryRun: true });
    // Assess
    expect(report.moved.map((e) => e.idempotency_key).sort()).toEqual(['k-1', 'k-2', 'k-3']);
    expect(report.skipped).toHaveLength(1);
    expect(out.text()).toContain('would move 3 message(s)');
    expect(out.text()).toContain('dry run: nothing was moved');
    expect(await depth(dlqUrl)).toBe(4);
    expect(await depth(queueUrl)).toBe(0);
  });

  it('redrive moves dispatch messages to the dispatch queue unchanged and leaves the rest', async () => {
    // Act
    const report = await runDlqRedrive(deps(), {});
    // Assess
    expect(report.moved).toHaveLength(3);
    expect(report.failed).toHaveLength(0);
    expect((await drain(queueUrl)).sort()).toEqual([body('k-1'), body('k-2'), body('k-3')].sort());
    expect(await drain(dlqUrl)).toEqual(['not json at all']);
  });
});

describe('reset-notifier dlq redrive through the running pipeline', () => {
  let pipe: Pipeline;
  beforeAll(async () => {
    pipe = await startPipeline();
  });
  afterAll(async () => {
    await pipe.stop();
    sqs.destroy();
  });

  it('a redriven message for a key already delivered sends nothing more (the sender is idempotent)', async () => {
    // Prepare: a delivered key whose dispatch message also sits in the DLQ.
    const { idempotency_key: key } = await pipe.admit();
    await pipe.waitFor(key, ['delivered']);
    const trailBefore = await pipe.evidence(key);
    await sqs.send(new SendMessageCommand({ QueueUrl: pipe.stack.dlqUrl, MessageBody: body(key, 1) }));
    const out = new BufferOut();
    const env = {
      DYNAMODB_ENDPOINT: pipe.stack.dynamodbEndpoint,
      SQS_ENDPOINT: pipe.stack.sqsEndpoint,
      TABLE_NAME: pipe.stack.tableName,
      DISPATCH_QUEUE_URL: pipe.stack.queueUrl,
      DLQ_URL: pipe.stack.dlqUrl,
    };
    // Act: through the CLI, listing first (with the key's current state), then redriving.
    const listed = await runCli(['dlq', 'list', '--json'], {
      out,
      err: new BufferOut(),
      env,
      clock: systemClock,
    });
    const listing = JSON.parse(out.text()) as { messages: { idempotency_key: string; state: string }[] };
    const redrive = await runCli(['dlq', 'redrive'], {
      out: new BufferOut(),
      err: new BufferOut(),
      env,
      clock: systemClock,
    });
    // Assess: the sender consumed it and skipped; one message, the same trail.
    expect(listed).toBe(0);
    expect(listing.messages).toEqual([expect.objectContaining({ idempotency_key: key, state: 'delivered' })]);
    expect(redrive).toBe(0);
    expect(await depth(pipe.stack.dlqUrl)).toBe(0);
    const deadline = Date.now() + 10_000;
    while ((await depth(pipe.stack.queueUrl)) > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await depth(pipe.stack.queueUrl)).toBe(0);
    expect(await pipe.messages(key)).toHaveLength(1);
    expect(await pipe.evidence(key)).toEqual(trailBefore);
  });
});
