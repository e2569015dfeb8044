/**
 * `reset-notifier receipts redrive` (issue 24 item 6): the kept End User Messaging receipts go back
 * through the receipts use case, each copy deleted once answered; repeating it changes nothing;
 * copies that are unreadable or name another topic are never deleted.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { BufferOut } from '../../../shared/cli/output.js';
import { runCli } from '../../../shared/cli/program.js';
import { runReceiptsRedrive } from '../../../shared/cli/receipts.js';
import { keptReceiptsRedrive } from '../../../shared/composition/receipts.js';
import { NotificationState as S } from '../../../shared/domain/states.js';
import { ManualClock } from '../../support/manual-clock.js';
import { aSentRecord } from '../domain/fixtures.js';
import { seededStore } from '../usecases/seeded-store.js';

const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:reset-notifier-eum-events';
const KEPT_URL = 'https://sqs.eu-west-1.amazonaws.com/111111111111/kept-receipts';
const KEY = 'sms:password_reset:evt-1';

/** A kept copy (as the keeper writes it: no number) of a TEXT_DELIVERED of attempt 1's `SM-1`. */
const keptDelivered = (topicArn = TOPIC) =>
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

/**
 * The kept-receipts queue, as SQS keeps it for these calls: a received message is hidden until
 * deleted or released (visibility 0); nothing else is modelled.
 */
class KeptQueue {
  private readonly messages = new Map<string, { body: string; visible: boolean }>();
  private next = 0;

  constructor(...bodies: string[]) {
    for (const body of bodies) this.messages.set(`m-${++this.next}`, { body, visible: true });
  }

  get bodies(): string[] {
    return [...this.messages.values()].map((m) => m.body);
  }

  readonly client = {
    send: async (command: unknown): Promise<unknown> => {
      if (command instanceof ReceiveMessageCommand) {
        expect(command.input.QueueUrl).toBe(KEPT_URL);
        const visible = [...this.messages].filter(([, m]) => m.visible);
        const taken = visible.slice(0, command.input.MaxNumberOfMessages ?? 1);
        for (const [, m] of taken) m.visible = false;
        const out: Message[] = taken.map(([id, m]) => ({ MessageId: id, ReceiptHandle: id, Body: m.body }));
        return { Messages: out };
      }
      if (command instanceof DeleteMessageBatchCommand) {
        for (const e of command.input.Entries ?? []) this.messages.delete(e.ReceiptHandle ?? '');
        return { Successful: command.input.Entries, Failed: [] };
      }
      if (command instanceof ChangeMessageVisibilityBatchCommand) {
        for (const e of command.input.Entries ?? []) {
          const m = this.messages.get(e.ReceiptHandle ?? '');
          if (m && e.VisibilityTimeout === 0) m.visible = true;
        }
        return { Successful: command.input.Entries, Failed: [] };
      }
      throw new Error(`unexpected ${String(command)}`);
    },
  } as unknown as SQSClient;
}

async function aRedrive(queue: KeptQueue, options: { storeDown?: () => boolean } = {}) {
  const { store, clock, policy } = await seededStore(
    aSentRecord({ provider: { name: 'eum', messageId: 'SM-1' } }),
    {
      beforeOperation: () => {
        if (options.storeDown?.()) throw new Error('store unavailable');
      },
    },
  );
  const out = new BufferOut();
  const deps = {
    sqs: queue.client,
    keptUrl: KEPT_URL,
    topicArn: TOPIC,
    redrive: keptReceiptsRedrive({ topicArn: TOPIC, store, clock, policy }),
    out,
    waitSeconds: 0,
  };
  return { deps, store, out };
}

describe('reset-notifier receipts redrive', () => {
  it('settles the record with a kept receipt and deletes the copy', async () => {
    // Prepare
    const queue = new KeptQueue(keptDelivered());
    const { deps, store } = await aRedrive(queue);

    // Act
    const report = await runReceiptsRedrive(deps, {});

    // Assess
    expect(report.redriven).toMatchObject([
      { event_type: 'TEXT_DELIVERED', client_reference: `${KEY}#1`, outcome: `applied:${S.delivered}` },
    ]);
    expect((await store.get(KEY))?.record.state).toBe(S.delivered);
    expect(queue.bodies).toEqual([]);
  });

  it('is idempotent: the same copy redriven again changes nothing', async () => {
    // Prepare: the copy was kept twice (or its original got through).
    const queue = new KeptQueue(keptDelivered());
    const { deps, store } = await aRedrive(queue);
    await runReceiptsRedrive(deps, {});
    const version = (await store.get(KEY))?.record.version;
    const again = new KeptQueue(keptDelivered());

    // Act
    const report = await runReceiptsRedrive({ ...deps, sqs: again.client }, {});

    // Assess
    expect(report.redriven).toMatchObject([{ outcome: 'ignored:final' }]);
    expect((await store.get(KEY))?.record.version).toBe(version);
    expect(again.bodies).toEqual([]);
  });

  it('never deletes an unreadable copy or one of another topic', async () => {
    // Prepare
    const other = keptDelivered('arn:aws:sns:eu-west-1:222222222222:someone-else');
    const queue = new KeptQueue('not json', other);
    const { deps, store } = await aRedrive(queue);

    // Act
    const report = await runReceiptsRedrive(deps, {});

    // Assess
    expect(report.left.map((e) => e.outcome)).toEqual(['left:not_a_kept_receipt', 'left:wrong_topic']);
    expect(report.redriven).toEqual([]);
    expect(queue.bodies).toEqual(['not json', other]);
    expect((await store.get(KEY))?.record.state).toBe(S.sent);
  });

  it('keeps a copy the store failed on, for the next run', async () => {
    // Prepare
    let down = false;
    const queue = new KeptQueue(keptDelivered());
    const { deps, store } = await aRedrive(queue, { storeDown: () => down });
    down = true;

    // Act
    const report = await runReceiptsRedrive(deps, {});
    down = false;
    const next = await runReceiptsRedrive(deps, {});

    // Assess
    expect(report.failed).toHaveLength(1);
    expect(next.redriven).toMatchObject([{ outcome: `applied:${S.delivered}` }]);
    expect((await store.get(KEY))?.record.state).toBe(S.delivered);
  });

  it('with --dry-run, lists what would be redriven or left, and keeps every copy', async () => {
    // Prepare
    const queue = new KeptQueue(keptDelivered(), keptDelivered('arn:aws:sns:eu-west-1:222222222222:other'));
    const { deps, store, out } = await aRedrive(queue);

    // Act
    const report = await runReceiptsRedrive(deps, { dryRun: true });

    // Assess
    expect(report).toMatchObject({
      dry_run: true,
      redriven: [{ outcome: 'pending' }],
      left: [{ outcome: 'left:wrong_topic' }],
    });
    expect(queue.bodies).toHaveLength(2);
    expect((await store.get(KEY))?.record.state).toBe(S.sent);
    expect(out.text()).toContain('dry run: nothing was redriven');
  });

  it('refuses to run without the kept queue, naming the setting (usage error, exit 2)', async () => {
    // Prepare
    const err = new BufferOut();

    // Act
    const code = await runCli(['receipts', 'redrive', '--topic-arn', TOPIC], {
      out: new BufferOut(),
      err,
      env: {},
      clock: new ManualClock(0),
    });

    // Assess
    expect(code).toBe(2);
    expect(err.text()).toContain('KEPT_RECEIPTS_QUEUE_URL');
  });
});
