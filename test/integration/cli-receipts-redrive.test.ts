/**
 * `reset-notifier receipts redrive` against the local SQS emulator (issue 24 item 6): kept copies
 * are deleted once the receipts use case answered, copies it must not touch stay (visible again at
 * once), and a second run changes nothing. The store is the memory one: the queue calls are the
 * point here (the use case's idempotence is covered in test/unit/cli/receipts-redrive.test.ts).
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { BufferOut } from '../../shared/cli/output.js';
import { runReceiptsRedrive } from '../../shared/cli/receipts.js';
import { keptReceiptsRedrive } from '../../shared/composition/receipts.js';
import { NotificationState as S } from '../../shared/domain/states.js';
import { uniqueName } from '../support/fixtures.js';
import { aSentRecord } from '../unit/domain/fixtures.js';
import { seededStore } from '../unit/usecases/seeded-store.js';

const sqs = new SQSClient({
  endpoint: inject('sqsEndpoint'),
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const TOPIC = 'arn:aws:sns:us-east-1:000000000000:reset-notifier-eum-events';
const KEY = 'sms:password_reset:evt-1';

/** A kept copy (no number) of a TEXT_DELIVERED of attempt 1's `SM-1`, as the keeper writes it. */
const kept = (topicArn = TOPIC) =>
  JSON.stringify({
    Type: 'Notification',
    MessageId: '9b7a3c1e-0000-4000-8000-000000000001',
    TopicArn: topicArn,
    Message: JSON.stringify({
      eventType: 'TEXT_DELIVERED',
      isFinal: true,
      messageId: 'SM-1',
      context: { client_reference: `${KEY}#1` },
    }),
  });

async function visible(queueUrl: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
}

describe('reset-notifier receipts redrive (the local SQS emulator)', () => {
  let keptUrl: string;
  beforeAll(async () => {
    keptUrl =
      (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('kept-receipts') }))).QueueUrl ?? '';
    for (const body of [kept(), kept(), kept('arn:aws:sns:us-east-1:000000000000:other'), 'not json']) {
      await sqs.send(new SendMessageCommand({ QueueUrl: keptUrl, MessageBody: body }));
    }
  });

  it('redrives and deletes the kept copies, leaves the others visible, and a second run changes nothing', async () => {
    // Prepare
    const { store, clock, policy } = await seededStore(
      aSentRecord({ provider: { name: 'eum', messageId: 'SM-1' } }),
    );
    const deps = {
      sqs,
      keptUrl,
      topicArn: TOPIC,
      redrive: keptReceiptsRedrive({ topicArn: TOPIC, store, clock, policy }),
      out: new BufferOut(),
      waitSeconds: 0,
    };

    // Act
    const first = await runReceiptsRedrive(deps, {});
    const second = await runReceiptsRedrive(deps, {});

    // Assess
    // Either copy may come first (a standard queue has no order): one applies, the other changes nothing.
    expect(first.redriven.map((e) => e.outcome).sort()).toEqual([`applied:${S.delivered}`, 'ignored:final']);
    expect(first.left.map((e) => e.outcome).sort()).toEqual(['left:not_a_kept_receipt', 'left:wrong_topic']);
    expect((await store.get(KEY))?.record.state).toBe(S.delivered);
    expect(second.redriven).toEqual([]);
    expect(second.left).toHaveLength(2);
    expect(await visible(keptUrl)).toBe(2);
  });
});
