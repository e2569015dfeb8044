import { CfnOutput, Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SETTINGS, settingsEnv } from '../../shared/settings.js';
import type { ResolvedSettings } from '../settings.js';
import { acknowledge } from './nag.js';
import { ServiceFunction, visibilityTimeoutFor } from './service-function.js';

/**
 * How long the SNS subscription's dead-letter queue keeps a message. It holds the notification as
 * SNS had it, destination number in clear, so only as long as the keeper needs: the keeper drains
 * it within seconds; the rest is time for an operator to fix a keeper that fails (its errors alarm)
 * before SNS's copies expire.
 */
export const RECEIPTS_DEAD_LETTER_RETENTION = Duration.days(2);

/** How long kept copies (no numbers) wait for `reset-notifier receipts redrive`: SQS's longest. */
export const KEPT_RECEIPTS_RETENTION = Duration.days(14);

/** Lambda's asynchronous retries of a receipts invocation before it goes to the keeper (Lambda's default). */
const RECEIPTS_RETRY_ATTEMPTS = 2;

/** The keeper's timeout: one batch of copies to SQS. */
const KEEPER_TIMEOUT = Duration.seconds(30);

/** Props of {@link KeptReceipts}. */
export interface KeptReceiptsProps {
  readonly settings: ResolvedSettings;
  /** The asynchronously invoked receipts function whose failed invocations are kept. */
  readonly receipts: ServiceFunction;
  /** The receipts entry file: the keeper runs the same handler, given a queue to keep copies in. */
  readonly entry: string;
  /** The receipts function's environment (the keeper's handler is built from the same settings). */
  readonly environment: Readonly<Record<string, string>>;
  /** The SNS subscription's dead-letter queue (holds numbers in clear): the keeper drains it. */
  readonly subscriptionDeadLetterQueue: Queue;
  /** How long Lambda keeps retrying an event before it counts as failed. */
  readonly maxEventAge: Duration;
}

/**
 * Receipts that fail every attempt are kept without phone numbers (issue 24 item 6,
 * docs/providers/aws.md#kept-receipts-and-redrive): the receipts function's on-failure destination
 * is the keeper, a function running the receipts entry with the kept queue's URL set, which
 * reduces Lambda's invocation record to copies without any number and puts them on the
 * kept-receipts queue. The keeper also consumes the SNS subscription's dead-letter queue (SNS could
 * not reach the function), so SNS's raw copies live there only until it takes them.
 * `reset-notifier receipts redrive` re-delivers the kept copies.
 */
export class KeptReceipts extends Construct {
  /** Copies without numbers, waiting for a redrive. */
  readonly queue: Queue;
  /** The receipts entry with a queue to keep copies in; it ingests nothing and touches no table. */
  readonly keeper: ServiceFunction;
  /** The receipts function whose failed invocations the keeper keeps. */
  readonly receipts: ServiceFunction;

  constructor(scope: Construct, id: string, props: KeptReceiptsProps) {
    super(scope, id);
    const { settings, receipts, subscriptionDeadLetterQueue } = props;
    this.receipts = receipts;
    // Copies carry no number (the keeper drops or masks every one): SQS-managed encryption as the
    // pipeline's queues, TLS only.
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: KEPT_RECEIPTS_RETENTION,
    });
    acknowledge(
      this.queue,
      'AwsSolutions-SQS3',
      'This queue is itself where failed receipts are kept; only `reset-notifier receipts redrive` consumes it.',
    );
    this.keeper = new ServiceFunction(this, 'Keeper', {
      entry: props.entry,
      description:
        'reset-notifier: keeps failed End User Messaging receipts without numbers (on-failure destination, subscription DLQ)',
      timeout: KEEPER_TIMEOUT,
      memorySize: 256,
      environment: { ...props.environment, ...settingsEnv({ keptReceiptsQueueUrl: this.queue.queueUrl }) },
      logRetention: settings.logRetention,
      projectRoot: settings.code.projectRoot,
      depsLockFilePath: settings.code.depsLockFilePath,
    });
    // Least privilege: the keeper only sends to the kept queue (SendMessageBatch is authorized as
    // sqs:SendMessage); no table, no key.
    this.keeper.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'KeepReceipts',
        actions: ['sqs:SendMessage'],
        resources: [this.queue.queueArn],
      }),
    );
    // A failed receipts invocation's record (with the SNS event, numbers in clear) goes to the
    // keeper, never to a queue as it is.
    receipts.configureAsyncInvoke({
      retryAttempts: RECEIPTS_RETRY_ATTEMPTS,
      maxEventAge: props.maxEventAge,
      onFailure: onlyTheFunction(this.keeper),
    });
    // The queue's visibility timeout is 6x the keeper's (receiptsDeadLetterQueue).
    this.keeper.addEventSource(new SqsEventSource(subscriptionDeadLetterQueue, { batchSize: 10 }));
    // A stable output key operators can query, as the stack's own outputs (`ApiUrl`, ...).
    new CfnOutput(this, 'QueueUrl', {
      description: `${SETTINGS.keptReceiptsQueueUrl.env} for \`reset-notifier receipts redrive\``,
      value: this.queue.queueUrl,
    }).overrideLogicalId('KeptReceiptsQueueUrl');
  }
}

/**
 * A Lambda destination that grants invoking the function's unqualified ARN, which is what the
 * destination names. CDK's `LambdaDestination` grants `<arn>` and `<arn>:*` (every version and
 * alias), wider than Lambda needs to deliver the record.
 */
function onlyTheFunction(target: ServiceFunction): lambda.IDestination {
  return {
    bind(_scope, fn) {
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          sid: 'InvokeOnFailureDestination',
          actions: ['lambda:InvokeFunction'],
          resources: [target.functionArn],
        }),
      );
      return { destination: target.functionArn };
    },
  };
}

/**
 * The SNS subscription's dead-letter queue (SNS could not reach the receipts function): it holds
 * numbers in clear, so {@link RECEIPTS_DEAD_LETTER_RETENTION} only, and the keeper consumes it.
 */
export function receiptsDeadLetterQueue(scope: Construct, id: string): Queue {
  const queue = new Queue(scope, id, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: RECEIPTS_DEAD_LETTER_RETENTION,
    visibilityTimeout: visibilityTimeoutFor(KEEPER_TIMEOUT),
  });
  acknowledge(
    queue,
    'AwsSolutions-SQS3',
    'This queue is itself the dead-letter queue of the receipts subscription; the keeper drains it.',
  );
  return queue;
}
