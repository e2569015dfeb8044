import { GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqsDispatchQueue, parseDispatchBody } from '../../../shared/adapters/sqs/dispatch-queue.js';

const sqs = mockClient(SQSClient);
afterEach(() => sqs.reset());

const message = (key: string, delaySeconds = 0) => ({
  id: key,
  message: { idempotencyKey: key, version: 1, delaySeconds },
});

describe('SQS dispatch queue', () => {
  it('sends keys only, in batches of ten, with clamped delays', async () => {
    // Prepare
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const queue = createSqsDispatchQueue(new SQSClient({ region: 'us-east-1' }), 'https://queue');
    // Act
    const result = await queue.enqueue([
      ...Array.from({ length: 11 }, (_, i) => message(`k${i}`)),
      message('late', 5000),
    ]);
    // Assess
    expect(result.failed).toEqual([]);
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls.map((c) => c.args[0].input.Entries?.length)).toEqual([10, 2]);
    const last = calls[1]?.args[0].input.Entries?.[1];
    expect(JSON.parse(last?.MessageBody ?? '')).toEqual({ idempotency_key: 'late', version: 1 });
    expect(last?.DelaySeconds).toBe(900);
  });

  it('maps failed entries back to the caller ids, even ids SQS would not accept', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolves({ Failed: [{ Id: '1', SenderFault: false, Code: 'InternalError' }] });
    const queue = createSqsDispatchQueue(new SQSClient({ region: 'us-east-1' }), 'https://queue');
    const result = await queue.enqueue([message('a:b#1'), message('c.d/2')]);
    expect(result.failed).toEqual(['c.d/2']);
  });

  it('reports a whole chunk failed when the call throws', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new Error('network'));
    const queue = createSqsDispatchQueue(new SQSClient({ region: 'us-east-1' }), 'https://queue');
    expect((await queue.enqueue([message('a'), message('b')])).failed).toEqual(['a', 'b']);
  });

  it('reports its backlog as waiting + in flight + delayed, and undefined when SQS cannot say', async () => {
    // Prepare
    sqs
      .on(GetQueueAttributesCommand)
      .resolvesOnce({
        Attributes: {
          ApproximateNumberOfMessages: '7',
          ApproximateNumberOfMessagesNotVisible: '3',
          ApproximateNumberOfMessagesDelayed: '2',
        },
      })
      .resolvesOnce({ Attributes: {} });
    const queue = createSqsDispatchQueue(new SQSClient({ region: 'us-east-1' }), 'https://queue');
    // Act
    const counted = await queue.backlog?.();
    const unknown = await queue.backlog?.();
    sqs.on(GetQueueAttributesCommand).rejects(new Error('AccessDenied'));
    const failed = await queue.backlog?.();
    // Assess
    expect([counted, unknown, failed]).toEqual([12, undefined, undefined]);
    expect(sqs.commandCalls(GetQueueAttributesCommand)[0]?.args[0].input).toMatchObject({
      QueueUrl: 'https://queue',
    });
  });

  it('parses only well-formed bodies', () => {
    expect(parseDispatchBody('{"idempotency_key":"k","version":3}')).toEqual({
      idempotency_key: 'k',
      version: 3,
    });
    expect(parseDispatchBody('{"idempotency_key":""}')).toBeUndefined();
    expect(parseDispatchBody('not json')).toBeUndefined();
  });
});
