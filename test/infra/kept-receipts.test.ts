/**
 * Kept receipts in the stack (issue 24 item 6, docs/providers/aws.md#kept-receipts-and-redrive):
 * the End User Messaging receipts function's failed invocations go to a keeper that keeps copies
 * without numbers on an encrypted queue; the keeper drains the subscription's dead-letter queue;
 * alarms on both; least privilege, evaluated as IAM would.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  KEPT_RECEIPTS_RETENTION,
  RECEIPTS_DEAD_LETTER_RETENTION,
} from '../../infra/constructs/kept-receipts.js';
import {
  allActions,
  DEPLOYED,
  functionByDescription,
  onlyResource,
  referencedId,
  resolveIntrinsics,
  SYNTH_TIMEOUT_MS,
  statementsOfFunction,
  synthTemplate,
} from './support.js';

type Props = Record<string, unknown>;
const IDENTITY = 'arn:aws:sms-voice:eu-west-1:111111111111:pool/pool-0123456789abcdef';
const RECEIPTS = 'End User Messaging events -> receipts';
const KEEPER = 'keeps failed End User Messaging receipts';
const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];

const envOf = (properties: Props) => (properties.Environment as { Variables: Props }).Variables;

describe('kept receipts (provider eum)', () => {
  let template: Template;
  let resources: Record<string, { Type: string; Properties: Props }>;
  let receiptsId: string;
  let keeperId: string;
  let keptQueueId: string;
  let deadLetterQueueId: string;
  beforeAll(() => {
    ({ template } = synthTemplate({ provider: { kind: 'eum', originationIdentityArn: IDENTITY } }));
    resources = template.toJSON().Resources;
    receiptsId = functionByDescription(template, RECEIPTS).logicalId;
    keeperId = functionByDescription(template, KEEPER).logicalId;
    keptQueueId = referencedId(
      envOf(resources[keeperId]?.Properties ?? {}).KEPT_RECEIPTS_QUEUE_URL,
    ) as string;
    const subscription = onlyResource(template, 'AWS::SNS::Subscription', { Protocol: 'lambda' });
    const redrive = subscription.properties.RedrivePolicy as { deadLetterTargetArn: unknown };
    deadLetterQueueId = referencedId(redrive.deadLetterTargetArn) as string;
  }, SYNTH_TIMEOUT_MS);

  it('sends a receipts invocation that failed every attempt to the keeper (after two retries)', () => {
    // Act
    const config = onlyResource(template, 'AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: receiptsId },
    }).properties;

    // Assess
    expect(config).toMatchObject({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 6 * 3600 });
    const destination = (config.DestinationConfig as { OnFailure: { Destination: unknown } }).OnFailure;
    expect(referencedId(destination.Destination)).toBe(keeperId);
  });

  it('runs the receipts entry as keeper, the kept queue in its settings only', () => {
    // Prepare
    const receipts = resources[receiptsId]?.Properties ?? {};
    const keeper = resources[keeperId]?.Properties ?? {};

    // Assess: same handler, same settings, plus where to keep (the receipts function keeps nothing).
    expect(keeper.Handler).toBe(receipts.Handler);
    expect(envOf(keeper).EUM_EVENTS_TOPIC_ARN).toEqual(envOf(receipts).EUM_EVENTS_TOPIC_ARN);
    expect(resources[keptQueueId]?.Type).toBe('AWS::SQS::Queue');
    expect(envOf(receipts).KEPT_RECEIPTS_QUEUE_URL).toBeUndefined();
  });

  it('outputs the kept queue URL under a stable key (KeptReceiptsQueueUrl) for the redrive', () => {
    const output = template.toJSON().Outputs.KeptReceiptsQueueUrl as { Value: unknown };
    expect(referencedId(output.Value)).toBe(keptQueueId);
  });

  it('keeps copies on an encrypted, TLS-only queue for 14 days', () => {
    // Prepare
    const queue = resources[keptQueueId]?.Properties ?? {};
    const policy = onlyResource(template, 'AWS::SQS::QueuePolicy', { Queues: [{ Ref: keptQueueId }] });

    // Assess
    expect(queue).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: KEPT_RECEIPTS_RETENTION.toSeconds(),
    });
    expect(KEPT_RECEIPTS_RETENTION.toDays()).toBe(14);
    expect(JSON.stringify(policy.properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });

  it("drains the subscription's dead-letter queue with the keeper, which keeps raw copies 2 days only", () => {
    // Prepare
    const queue = resources[deadLetterQueueId]?.Properties ?? {};

    // Act
    const mapping = onlyResource(template, 'AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: keeperId },
    }).properties;

    // Assess
    expect(referencedId(mapping.EventSourceArn)).toBe(deadLetterQueueId);
    expect(queue.MessageRetentionPeriod).toBe(RECEIPTS_DEAD_LETTER_RETENTION.toSeconds());
    expect(RECEIPTS_DEAD_LETTER_RETENTION.toDays()).toBeLessThan(14);
    // Lambda's rule for SQS event sources: the visibility timeout covers the keeper's timeout (6x).
    expect(queue.VisibilityTimeout).toBe(6 * Number(resources[keeperId]?.Properties.Timeout));
  });

  it('keeper: sends to the kept queue and consumes the dead-letter queue; no table, no key, no provider', () => {
    // Act
    const statements = statementsOfFunction(template, keeperId);

    // Assess
    expect(allActions(statements)).toEqual(
      [
        ...LOGS,
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ].sort(),
    );
  });

  it('receipts function: writes command items and invokes the keeper, nothing more', () => {
    // Act
    const actions = allActions(statementsOfFunction(template, receiptsId));

    // Assess
    expect(actions).toEqual(
      [
        ...LOGS,
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'kms:Decrypt',
        'kms:DescribeKey',
        'kms:Encrypt',
        'kms:GenerateDataKey',
        'lambda:InvokeFunction',
      ].sort(),
    );
  });

  /** The alarm whose construct id is `name`, with the metrics it reads as `[namespace, name, dimension]`. */
  function alarmNamed(name: string) {
    const alarms = template.findResources('AWS::CloudWatch::Alarm');
    const id = Object.keys(alarms).find((key) => key.startsWith(`ResetNotifierObservability${name}`));
    const alarm = (alarms[id as string] as { Properties: Props }).Properties;
    type Stat = {
      MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: { Value: unknown }[] } };
    };
    const metrics = alarm.Metrics
      ? (alarm.Metrics as Stat[]).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []))
      : [alarm as unknown as { Namespace: string; MetricName: string; Dimensions: { Value: unknown }[] }];
    return {
      alarm,
      reads: metrics.map((m) => [m.Namespace, m.MetricName, referencedId(m.Dimensions[0]?.Value)]),
    };
  }

  it.each(['KeptReceipts', 'ReceiptsKeeperErrors'])(
    'alarm %s notifies the alarm topic like every alarm, on alarm and on recovery',
    (name) => {
      // Act
      const { alarm } = alarmNamed(name);

      // Assess
      expect(alarm).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
      const topicId = referencedId((alarm.AlarmActions as unknown[])[0]);
      expect(resources[topicId as string]?.Type).toBe('AWS::SNS::Topic');
      expect(topicId).toContain('ObservabilityAlarmTopic');
      expect(alarm.OKActions).toEqual(alarm.AlarmActions);
    },
  );

  it('alarms on the kept queue holding any copy', () => {
    expect(alarmNamed('KeptReceipts').reads).toEqual([
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', keptQueueId],
    ]);
  });

  it("alarms on the keeper's errors and on Lambda failing to hand it a failed receipt", () => {
    expect(alarmNamed('ReceiptsKeeperErrors').reads).toEqual([
      ['AWS/Lambda', 'Errors', keeperId],
      ['AWS/Lambda', 'DestinationDeliveryFailures', receiptsId],
    ]);
  });

  describe('evaluated as IAM would', () => {
    let arns: Record<string, string>;
    beforeAll(() => {
      // Every resource an ARN of its service's own form (what Ref / GetAtt resolve to when deployed).
      const at = `${DEPLOYED.region}:${DEPLOYED.account}`;
      const arnOf = (id: string, type: string) =>
        type === 'AWS::SQS::Queue'
          ? `arn:aws:sqs:${at}:${id}`
          : type === 'AWS::Lambda::Function'
            ? `arn:aws:lambda:${at}:function:${id}`
            : type === 'AWS::DynamoDB::Table'
              ? `arn:aws:dynamodb:${at}:table/${id}`
              : `arn:aws:${id}:${at}:${id}`;
      arns = Object.fromEntries(Object.entries(resources).map(([id, r]) => [id, arnOf(id, r.Type)]));
    });

    async function decide(fnId: string, action: string, resourceId: string): Promise<string> {
      const statements = statementsOfFunction(template, fnId);
      const result = await runSimulation(
        {
          request: {
            principal: `arn:aws:iam::${DEPLOYED.account}:role/${fnId}`,
            action,
            resource: { resource: arns[resourceId] as string, accountId: DEPLOYED.account },
            contextVariables: {},
          },
          identityPolicies: [
            { name: fnId, policy: resolveIntrinsics({ Version: '2012-10-17', Statement: statements }, arns) },
          ],
          serviceControlPolicies: [],
          resourceControlPolicies: [],
        },
        {},
      );
      if (result.resultType === 'error') throw new Error(JSON.stringify(result.errors));
      return result.overallResult;
    }

    it('the keeper may send to the kept queue only, and receive from the dead-letter queue only', async () => {
      // Prepare
      const dispatchQueueId = referencedId(envOf(resources[keeperId]?.Properties ?? {}).DISPATCH_QUEUE_URL);
      const tableId = referencedId(envOf(resources[keeperId]?.Properties ?? {}).TABLE_NAME);

      // Act / Assess
      expect(await decide(keeperId, 'sqs:SendMessage', keptQueueId)).toBe('Allowed');
      expect(await decide(keeperId, 'sqs:SendMessage', dispatchQueueId as string)).toBe('ImplicitlyDenied');
      expect(await decide(keeperId, 'sqs:SendMessage', deadLetterQueueId)).toBe('ImplicitlyDenied');
      expect(await decide(keeperId, 'sqs:ReceiveMessage', deadLetterQueueId)).toBe('Allowed');
      expect(await decide(keeperId, 'sqs:ReceiveMessage', keptQueueId)).toBe('ImplicitlyDenied');
      expect(await decide(keeperId, 'dynamodb:UpdateItem', tableId as string)).toBe('ImplicitlyDenied');
    });

    it('the receipts function may invoke the keeper and no other function, and not touch the kept queue', async () => {
      // Prepare
      const senderId = functionByDescription(template, 'calls the SMS provider once').logicalId;

      // Act / Assess
      expect(await decide(receiptsId, 'lambda:InvokeFunction', keeperId)).toBe('Allowed');
      expect(await decide(receiptsId, 'lambda:InvokeFunction', senderId)).toBe('ImplicitlyDenied');
      expect(await decide(receiptsId, 'sqs:SendMessage', keptQueueId)).toBe('ImplicitlyDenied');
    });
  });
});

describe('kept receipts (provider sns: no receipts function, nothing to keep)', () => {
  it('creates no keeper, no kept queue and no kept-receipts alarm', () => {
    // Act
    const { template, stack } = synthTemplate();

    // Assess
    expect(JSON.stringify(template.findResources('AWS::Lambda::Function'))).not.toContain(KEEPER);
    expect(JSON.stringify(template.toJSON())).not.toContain('KEPT_RECEIPTS_QUEUE_URL');
    expect(stack.notifier.awsSms.keptReceipts).toBeUndefined();
    expect(Object.keys(stack.notifier.observability.alarms)).not.toContain('keptReceipts');
  });
});
