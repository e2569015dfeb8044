/**
 * The keeper as the stack deploys it (issue 24 item 6): the End User Messaging receipts entry with
 * `KEPT_RECEIPTS_QUEUE_URL` set keeps a failed invocation's events on that queue, without numbers;
 * without the variable the same entry keeps nothing and refuses such a record.
 */
import { type SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { composeEumReceipts } from '../../../shared/composition/handlers.js';
import { KeptReceiptsNotTakenError, keepReceiptsFor } from '../../../shared/composition/receipts.js';
import { loadConfig } from '../../../shared/config.js';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import type { KeptReceipt } from '../../../shared/providers/eum/index.js';
import { settingsEnv } from '../../../shared/settings.js';
import { PHONE } from '../domain/fixtures.js';

const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:reset-notifier-eum-events';
const KEPT_URL = 'https://sqs.eu-west-1.amazonaws.com/111111111111/kept-receipts';

/** The receipts function's settings as the stack writes them; `kept` adds the keeper's queue. */
function configOf(kept: boolean) {
  return loadConfig(
    settingsEnv({
      provider: 'eum',
      awsRegion: 'eu-west-1',
      tableName: 'reset-notifier',
      eumEventsTopicArn: TOPIC,
      keptReceiptsQueueUrl: kept ? KEPT_URL : undefined,
    }),
  );
}

/** A TEXT_DELIVERED notification of message `id`, destination number in clear. */
const notification = (id: number) => ({
  Type: 'Notification',
  MessageId: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
  TopicArn: TOPIC,
  Message: JSON.stringify({
    eventType: 'TEXT_DELIVERED',
    isFinal: true,
    destinationPhoneNumber: PHONE,
    messageId: `SM-${id}`,
    context: { client_reference: `sms:password_reset:evt-${id}#1` },
  }),
});

/** What Lambda hands the on-failure destination after the third failed attempt. */
const failedInvocation = (count: number) => ({
  version: '1.0',
  requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: 3 },
  requestPayload: {
    Records: Array.from({ length: count }, (_, i) => ({ EventSource: 'aws:sns', Sns: notification(i + 1) })),
  },
  responsePayload: { errorType: 'StoreUnavailableError' },
});

/** Every SendMessageBatch the SQS client was asked for, answered with `answer`. */
function recordBatches(answer: (command: SendMessageBatchCommand) => unknown = () => ({ Failed: [] })) {
  const sent: SendMessageBatchCommand['input'][] = [];
  vi.spyOn(SQSClient.prototype, 'send').mockImplementation(async (command: unknown) => {
    const batch = command as SendMessageBatchCommand;
    sent.push(batch.input);
    return answer(batch) as never;
  });
  return sent;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the receipts keeper, composed from the settings', () => {
  it('keeps every event of a failed invocation on the kept queue, in batches of ten, without the number', async () => {
    // Prepare
    const sent = recordBatches();
    const keeper = composeEumReceipts(configOf(true));

    // Act
    const result = await keeper(failedInvocation(12) as never);

    // Assess
    expect(result).toMatchObject({ reports: [], kept: 12 });
    expect(sent.map((batch) => [batch.QueueUrl, batch.Entries?.length])).toEqual([
      [KEPT_URL, 10],
      [KEPT_URL, 2],
    ]);
    const bodies = sent.flatMap((batch) => batch.Entries ?? []).map((e) => JSON.parse(e.MessageBody ?? ''));
    expect((bodies as KeptReceipt[]).map((b) => b.MessageId)).toEqual(
      Array.from({ length: 12 }, (_, i) => notification(i + 1).MessageId),
    );
    expect(JSON.stringify(sent)).not.toContain(PHONE.slice(1));
  });

  it('fails the invocation when SQS does not take a copy, so Lambda retries it', async () => {
    // Prepare
    recordBatches(() => ({ Failed: [{ Id: '0', Code: 'InternalError', SenderFault: false }] }));
    const keep = keepReceiptsFor(configOf(true));

    // Act
    const kept = keep?.([{ Type: 'Notification', MessageId: 'm', TopicArn: TOPIC, Message: '{}' }]);

    // Assess
    await expect(kept).rejects.toBeInstanceOf(KeptReceiptsNotTakenError);
    await expect(kept).rejects.toMatchObject({ code: 'kept_receipts_not_taken' });
  });

  it('keeps nothing where the kept queue is not set (the receipts function itself), and refuses the record', async () => {
    // Prepare
    const sent = recordBatches();
    const receipts = composeEumReceipts(configOf(false));

    // Act / Assess
    expect(keepReceiptsFor(configOf(false))).toBeUndefined();
    await expect(receipts(failedInvocation(1) as never)).rejects.toBeInstanceOf(InvalidConfigurationError);
    expect(sent).toEqual([]);
  });
});
