import {
  type Message,
  type MessageSystemAttributeName,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** Where and how long {@link holdEachOnce} holds a queue's messages. */
export interface QueueHold {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** How long each received message stays hidden (default 60 s). */
  readonly holdSeconds?: number;
  /** Long-poll wait per receive (default 1 s). */
  readonly waitSeconds?: number;
  readonly systemAttributes?: MessageSystemAttributeName[];
}

/**
 * Receives every message currently in the queue (up to `max`), each once, hiding each for the
 * hold so a message is not seen twice. The caller deletes or releases them; if the CLI dies
 * midway, they reappear after the hold.
 */
export async function holdEachOnce(hold: QueueHold, max: number): Promise<Message[]> {
  const held: Message[] = [];
  const seen = new Set<string>();
  while (held.length < max) {
    const out = await hold.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: hold.queueUrl,
        MaxNumberOfMessages: Math.min(10, max - held.length),
        VisibilityTimeout: hold.holdSeconds ?? 60,
        WaitTimeSeconds: hold.waitSeconds ?? 1,
        ...(hold.systemAttributes ? { MessageSystemAttributeNames: hold.systemAttributes } : {}),
      }),
    );
    const messages = (out.Messages ?? []).filter((m) => !seen.has(m.MessageId ?? ''));
    if (messages.length === 0) break;
    for (const message of messages) {
      seen.add(message.MessageId ?? '');
      held.push(message);
    }
  }
  return held;
}

/** Runs `work` over `items` in SQS's batch size (10). */
export async function inBatches<T>(items: readonly T[], work: (batch: T[]) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += 10) await work(items.slice(i, i + 10));
}
