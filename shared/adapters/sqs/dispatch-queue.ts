import { GetQueueAttributesCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { dispatchBodyOf } from '../../messages/dispatch-body.js';
import type { DispatchQueue, EnqueueResult } from '../../ports/queue.js';

const MAX_BATCH = 10;
const MAX_DELAY_SECONDS = 900;

export { type DispatchMessageBody, parseDispatchBody } from '../../messages/dispatch-body.js';

/** SQS implementation of {@link DispatchQueue}: `SendMessageBatch` in chunks of ten. */
export function createSqsDispatchQueue(client: SQSClient, queueUrl: string): DispatchQueue {
  return {
    async enqueue(messages): Promise<EnqueueResult> {
      const failed: string[] = [];
      for (let i = 0; i < messages.length; i += MAX_BATCH) {
        const chunk = messages.slice(i, i + MAX_BATCH);
        try {
          const out = await client.send(
            new SendMessageBatchCommand({
              QueueUrl: queueUrl,
              // Positional entry ids: caller ids may contain characters SQS does not allow.
              Entries: chunk.map(({ message }, index) => ({
                Id: String(index),
                MessageBody: JSON.stringify(dispatchBodyOf(message)),
                DelaySeconds: clampDelay(message.delaySeconds),
              })),
            }),
          );
          const failedIds = new Set((out.Failed ?? []).map((f) => f.Id));
          chunk.forEach(({ id }, index) => {
            if (failedIds.has(String(index))) failed.push(id);
          });
        } catch {
          // The whole chunk is reported failed; the stream source retries it.
          failed.push(...chunk.map(({ id }) => id));
        }
      }
      return { failed };
    },
    async backlog(): Promise<number | undefined> {
      try {
        const out = await client.send(
          new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...BACKLOG_ATTRIBUTES] }),
        );
        const counts = BACKLOG_ATTRIBUTES.map((name) => Number(out.Attributes?.[name]));
        return counts.every(Number.isFinite) ? counts.reduce((a, b) => a + b, 0) : undefined;
      } catch {
        // Not knowing is an answer: the caller falls back to its time-based rule.
        return undefined;
      }
    },
  };
}

/** Waiting, in flight and delayed: everything a consumer has yet to finish. */
const BACKLOG_ATTRIBUTES = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
] as const;

function clampDelay(seconds: number): number {
  return Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.ceil(seconds)));
}
