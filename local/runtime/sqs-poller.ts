import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export type QueueHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

export interface SqsPollerOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly handler: QueueHandler;
  readonly batchSize?: number;
  /** Parallel pollers (Lambda's concurrency for this event source). */
  readonly concurrency?: number;
  readonly waitTimeSeconds?: number;
  /** Chaos: hand the same batch to a second, concurrent invocation with this probability. */
  readonly duplicateProbability?: number;
  readonly random?: () => number;
  readonly onError?: (error: unknown) => void;
}

/** Converts an SQS API message into the record Lambda's SQS event source would deliver. */
export function toSqsRecord(message: Message, queueArn: string): SQSRecord {
  const a = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: 'us-east-1',
  };
}

/**
 * Feeds the sender like Lambda's SQS event source with partial batch responses: successful
 * messages are deleted, reported failures (or all, if the handler throws) stay on the queue and
 * come back after the visibility timeout, until the queue's redrive policy moves them to the DLQ.
 */
export function startSqsPoller(options: SqsPollerOptions): { stop(): Promise<void> } {
  let running = true;
  const random = options.random ?? Math.random;

  const handleBatch = async (messages: Message[]) => {
    const records = messages.map((m) => toSqsRecord(m, options.queueArn));
    let failed: Set<string>;
    try {
      const invocations = [options.handler({ Records: records })];
      if (options.duplicateProbability && random() < options.duplicateProbability) {
        invocations.push(options.handler({ Records: records }));
      }
      const responses = await Promise.all(invocations);
      failed = new Set(responses.flatMap((r) => (r?.batchItemFailures ?? []).map((f) => f.itemIdentifier)));
    } catch (error) {
      options.onError?.(error);
      return;
    }
    const done = records.filter((r) => !failed.has(r.messageId));
    if (done.length === 0) return;
    await options.client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
      }),
    );
  };

  const worker = async () => {
    while (running) {
      try {
        const out = await options.client.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: options.batchSize ?? 10,
            WaitTimeSeconds: options.waitTimeSeconds ?? 1,
            MessageSystemAttributeNames: ['All'],
          }),
        );
        if (out.Messages?.length) await handleBatch(out.Messages);
      } catch (error) {
        if (!running) break;
        options.onError?.(error);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  };

  const workers = Array.from({ length: options.concurrency ?? 2 }, worker);
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

/** Runs `task` every `intervalMs`, never overlapping itself (like a reserved-concurrency-1 schedule). */
export function startTimer(intervalMs: number, task: () => Promise<unknown>, onError?: (e: unknown) => void) {
  let running = true;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (running) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, intervalMs);
      });
      if (!running) break;
      try {
        await task();
      } catch (error) {
        onError?.(error);
      }
    }
  })();
  return {
    async stop() {
      running = false;
      wake?.();
      await loop;
    },
  };
}
