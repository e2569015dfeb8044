import { Duration } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOG_METRICS, RECEIPT_SIGNATURE_FAILURES } from '../../infra/constructs/observability.js';
import {
  functionByDescription,
  onlyResource,
  referencedId,
  SYNTH_TIMEOUT_MS,
  synthTemplate,
} from './support.js';

type Props = Record<string, unknown>;
interface MetricStat {
  readonly Id: string;
  readonly Expression?: string;
  readonly MetricStat?: {
    Metric: { MetricName: string; Namespace: string; Dimensions?: Array<{ Value: unknown }> };
  };
}

describe('observability: alarms, log-derived metrics and the dashboard', () => {
  let template: Template;
  let alarms: Props[];
  const ids = { forwarder: '', sender: '', reconciler: '' };
  beforeAll(() => {
    ({ template } = synthTemplate({
      dispatchUnknownAgeAlarm: Duration.minutes(20),
      unknownOutcomeRateAlarmPercent: 7,
    }));
    alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (a) => (a as { Properties: Props }).Properties,
    );
    ids.forwarder = functionByDescription(template, 'table stream -> dispatch queue').logicalId;
    ids.sender = functionByDescription(template, 'calls the SMS provider once').logicalId;
    ids.reconciler = functionByDescription(template, 'reconciles unknown outcomes').logicalId;
  }, SYNTH_TIMEOUT_MS);

  /** The one alarm whose description contains `text`. */
  const alarmAbout = (text: string): Props => {
    const found = alarms.filter((a) => String(a.AlarmDescription).includes(text));
    expect(found, text).toHaveLength(1);
    return found[0] as Props;
  };
  /** Queue logical id of a queue metric's `QueueName` dimension. */
  const queueOf = (alarm: Props) => referencedId((alarm.Dimensions as Array<{ Value: unknown }>)[0]?.Value);

  it('alarms when the dispatch dead-letter queue holds any message', () => {
    // Prepare
    const queues = Object.values(template.findResources('AWS::SQS::Queue')) as Array<{ Properties: Props }>;
    const redrive = queues.flatMap((q) => (q.Properties.RedrivePolicy ? [q.Properties.RedrivePolicy] : []));
    // The dispatch queue's and the reconcile queue's.
    expect(redrive).toHaveLength(2);
    const dlqIds = redrive.map((r) =>
      referencedId((r as { deadLetterTargetArn: unknown }).deadLetterTargetArn),
    );

    // Act
    const alarm = alarmAbout('dead-letter queue');

    // Assess
    expect(alarm).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(dlqIds).toContain(queueOf(alarm));
    const reconcile = alarmAbout('reconcile DLQ');
    expect(dlqIds).toContain(queueOf(reconcile));
    expect(queueOf(reconcile)).not.toBe(queueOf(alarm));
  });

  it('alarms when a poison item is parked, from the reconcile worker log', () => {
    const alarm = alarmAbout('was parked after its retries');
    expect(alarm).toMatchObject({ MetricName: 'ReconcileParkedItems', Threshold: 0 });
    const filters = template.findResources('AWS::Logs::MetricFilter');
    const parked = Object.values(filters).map((f) => (f as { Properties: Props }).Properties);
    expect(parked.some((f) => JSON.stringify(f.MetricTransformations).includes('$.parked'))).toBe(true);
  });

  it('alarms when due items wait longer than the unknown-age alarm (a backlog the workers do not drain)', () => {
    // Act
    const alarm = alarmAbout('due items wait longer');

    // Assess
    expect(alarm).toMatchObject({ MetricName: 'OldestDueLagMs', Statistic: 'Maximum', EvaluationPeriods: 2 });
    const filters = Object.values(template.findResources('AWS::Logs::MetricFilter')).map(
      (f) => (f as { Properties: Props }).Properties,
    );
    expect(filters.some((f) => JSON.stringify(f.MetricTransformations).includes('$.oldestDueLagMs'))).toBe(
      true,
    );
  });

  it('alarms when stream records reach the forwarder failure queue', () => {
    const alarm = alarmAbout('forwarder failure queue');
    expect(alarm).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 0 });
    const mapping = onlyResource(template, 'AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ids.forwarder },
    });
    const destination = (mapping.properties.DestinationConfig as { OnFailure: { Destination: unknown } })
      .OnFailure;
    expect(queueOf(alarm)).toBe(referencedId(destination.Destination));
  });

  it('alarms on the age of the oldest dispatch_unknown, from the reconciler log', () => {
    // Act
    const alarm = alarmAbout('dispatch_unknown');
    const filter = onlyResource(template, 'AWS::Logs::MetricFilter', {
      MetricTransformations: [Match.objectLike({ MetricName: LOG_METRICS.oldestDispatchUnknownAge })],
    }).properties;

    // Assess
    expect(alarm).toMatchObject({
      MetricName: LOG_METRICS.oldestDispatchUnknownAge,
      Statistic: 'Maximum',
      Threshold: Duration.minutes(20).toMilliseconds(),
    });
    expect(filter.FilterPattern).toBe('{ $.message = "reconciled" }');
    expect(filter.MetricTransformations).toEqual([
      expect.objectContaining({ MetricValue: '$.oldestUnknownAgeMs', Unit: 'Milliseconds' }),
    ]);
    const reconcilerLogGroup = referencedId(
      (
        functionByDescription(template, 'reconciles unknown outcomes').properties.LoggingConfig as {
          LogGroup: unknown;
        }
      ).LogGroup,
    );
    expect(referencedId(filter.LogGroupName)).toBe(reconcilerLogGroup);
  });

  it('alarms on the forwarder iterator age', () => {
    const alarm = alarmAbout('falls behind the table stream');
    expect(alarm).toMatchObject({ MetricName: 'IteratorAge', Namespace: 'AWS/Lambda', Statistic: 'Maximum' });
    expect((alarm.Dimensions as Array<{ Value: unknown }>)[0]?.Value).toEqual({ Ref: ids.forwarder });
  });

  it('alarms on sender errors: failed invocations plus failed records', () => {
    const metrics = alarmAbout('sender failed').Metrics as MetricStat[];
    const names = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : [])).sort();
    expect(names).toEqual(['Errors', LOG_METRICS.senderRecordFailures].sort());
    const errors = metrics.find((m) => m.MetricStat?.Metric.MetricName === 'Errors');
    expect(errors?.MetricStat?.Metric.Dimensions?.[0]?.Value).toEqual({ Ref: ids.sender });
  });

  it('alarms on reconciler failures, and when the reconciler stops running', () => {
    const failures = alarmAbout('reconciler failed').Metrics as MetricStat[];
    const errors = failures.find((m) => m.MetricStat?.Metric.MetricName === 'Errors');
    expect(errors?.MetricStat?.Metric.Dimensions?.[0]?.Value).toEqual({ Ref: ids.reconciler });
    expect(failures.some((m) => m.MetricStat?.Metric.MetricName === LOG_METRICS.reconcileItemErrors)).toBe(
      true,
    );
    expect(alarmAbout('has not run')).toMatchObject({
      MetricName: 'Invocations',
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
  });

  it('alarms on the provider unknown-outcome rate (unknown / sends, in percent)', () => {
    // Act
    const alarm = alarmAbout('unknown outcome');
    const metrics = alarm.Metrics as MetricStat[];

    // Assess
    expect(alarm).toMatchObject({ Threshold: 7, EvaluationPeriods: 2, DatapointsToAlarm: 2 });
    const expression = metrics.find((m) => m.Expression !== undefined)?.Expression;
    expect(expression).toBe('IF(sends > 0, 100 * FILL(unknowns, 0) / sends, 0)');
    expect(
      metrics
        .map((m) => m.MetricStat?.Metric.MetricName)
        .filter(Boolean)
        .sort(),
    ).toEqual([LOG_METRICS.providerSends, LOG_METRICS.providerUnknownOutcomes].sort());
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      FilterPattern: '{ ($.message = "dispatch") && ($.kind = "sent") && ($.outcome = "unknown") }',
      MetricTransformations: [
        Match.objectLike({ MetricName: LOG_METRICS.providerUnknownOutcomes, MetricValue: '1' }),
      ],
    });
  });

  it('creates an encrypted alarm topic CloudWatch can publish to, and every alarm notifies it', () => {
    // Prepare
    const topic = onlyResource(template, 'AWS::SNS::Topic');
    const keyId = referencedId((topic.properties.KmsMasterKeyId as { 'Fn::GetAtt': unknown }) ?? undefined);

    // Act
    const keyPolicy = JSON.stringify(
      (template.toJSON().Resources[keyId as string] as { Properties: Props }).Properties.KeyPolicy,
    );

    // Assess
    expect(keyPolicy).toContain('cloudwatch.amazonaws.com');
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) {
      expect(alarm, String(alarm.AlarmDescription)).toMatchObject({
        AlarmActions: [{ Ref: topic.logicalId }],
        OKActions: [{ Ref: topic.logicalId }],
      });
    }
    template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('subscribes the alarm email to the created topic when one is given', () => {
    // Act
    const { template: withEmail } = synthTemplate({ alarmEmail: 'ops@example.com' });

    // Assess
    withEmail.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
    expect(() => synthTemplate({ alarmEmail: 'ops' })).toThrow(/alarmEmail "ops" is not an email address/);
  });

  it('notifies a given topic instead, on alarm and recovery, and creates none', () => {
    // Act
    const { template: withTopic } = synthTemplate((stack) => ({
      alarmTopic: Topic.fromTopicArn(stack, 'Ops', 'arn:aws:sns:eu-west-1:111111111111:ops-alarms'),
    }));

    // Assess
    withTopic.resourceCountIs('AWS::SNS::Topic', 0);
    const withActions = Object.values(withTopic.findResources('AWS::CloudWatch::Alarm')) as Array<{
      Properties: Props;
    }>;
    expect(withActions.length).toBe(alarms.length);
    for (const alarm of withActions) {
      expect(alarm.Properties).toMatchObject({
        AlarmActions: ['arn:aws:sns:eu-west-1:111111111111:ops-alarms'],
        OKActions: ['arn:aws:sns:eu-west-1:111111111111:ops-alarms'],
      });
    }
    expect(() =>
      synthTemplate((stack) => ({
        alarmTopic: Topic.fromTopicArn(stack, 'Bad', 'arn:aws:sqs:eu-west-1:111111111111:ops'),
      })),
    ).toThrow(/alarmTopic "arn:aws:sqs:eu-west-1:111111111111:ops" is not arn:aws:sns/);
  });

  it.each([
    ['api', 'HTTP API'],
    ['forwarder', 'table stream -> dispatch queue'],
    ['sender', 'calls the SMS provider once'],
    ['reconciler', 'reconciles unknown outcomes'],
  ])('alarms on errors and throttles of the %s function', (name, description) => {
    // Prepare
    const fnId = functionByDescription(template, description).logicalId;
    const onFunction = (a: Props, metricName: string) => {
      const direct = a.MetricName === metricName && (a.Dimensions as Array<{ Value: unknown }>)[0]?.Value;
      const inMath = (a.Metrics as MetricStat[] | undefined)?.find(
        (x) => x.MetricStat?.Metric.MetricName === metricName,
      )?.MetricStat?.Metric.Dimensions?.[0]?.Value;
      return JSON.stringify(direct || inMath) === JSON.stringify({ Ref: fnId });
    };

    // Act
    const errors = alarms.filter((a) => onFunction(a, 'Errors'));
    const throttles = alarms.filter((a) => onFunction(a, 'Throttles'));

    // Assess
    expect(errors, name).toHaveLength(1);
    expect(errors[0]).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    expect(throttles, name).toHaveLength(1);
    expect(throttles[0]).toMatchObject({ Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 0 });
  });

  it('alarms on API 5xx and p99 latency (API Gateway metrics of this API)', () => {
    // Act
    const errors = alarmAbout('5xx');
    const latency = alarmAbout('p99 latency');

    // Assess
    expect(errors).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Statistic: 'Sum',
      Threshold: 5,
    });
    expect(latency).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Threshold: 1000,
      EvaluationPeriods: 3,
    });
    const apiId = referencedId(onlyResource(template, 'AWS::ApiGatewayV2::Stage').properties.ApiId);
    for (const alarm of [errors, latency]) {
      expect((alarm.Dimensions as Array<{ Name: string; Value: unknown }>)[0]).toEqual({
        Name: 'ApiId',
        Value: { Ref: apiId },
      });
    }
  });

  it('alarms when the oldest dispatch message waits longer than the queue safety net', () => {
    // Prepare
    // Two queues redrive to a DLQ (dispatch and reconcile): the alarm watches the dispatch queue.
    const withRedrive = Object.keys(
      template.findResources('AWS::SQS::Queue', { Properties: { RedrivePolicy: Match.anyValue() } }),
    );

    // Act
    const alarm = alarmAbout('oldest dispatch message');

    // Assess
    expect(alarm).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Statistic: 'Maximum',
      Threshold: 300,
      EvaluationPeriods: 3,
    });
    expect(withRedrive).toHaveLength(2);
    expect(withRedrive).toContain(queueOf(alarm));
    expect(queueOf(alarm)).toMatch(/DispatchQueue/);
  });

  it('alarms on receipt signature failures in the service namespace', () => {
    // Act
    const alarm = alarmAbout('signature check');

    // Assess
    expect(alarm).toMatchObject({
      MetricName: RECEIPT_SIGNATURE_FAILURES,
      Namespace: 'ResetNotifier/TestStack',
      Statistic: 'Sum',
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms on SNS SMS spend for the month, at the configured amount', () => {
    // Act
    const alarm = alarmAbout('SMS spend');
    const { template: custom } = synthTemplate({ smsSpendAlarmUsd: 40 });

    // Assess
    expect(alarm).toMatchObject({
      Namespace: 'AWS/SNS',
      MetricName: 'SMSMonthToDateSpentUSD',
      Statistic: 'Maximum',
      Threshold: 0.8,
    });
    expect(alarm.Dimensions).toBeUndefined();
    custom.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'SMSMonthToDateSpentUSD',
      Threshold: 40,
    });
  });

  it('has exactly the alarms this file tests (a new alarm needs a test here)', () => {
    // Act
    const { stack } = synthTemplate();

    // Assess
    expect(Object.keys(stack.notifier.observability.alarms).sort()).toEqual(
      [
        'dispatchDeadLetters',
        'forwarderFailures',
        'dispatchQueueAge',
        'apiErrors',
        'forwarderErrors',
        'senderErrors',
        'reconcilerFailures',
        'forwarderIteratorAge',
        'reconcilerStalled',
        'apiThrottles',
        'forwarderThrottles',
        'senderThrottles',
        'reconcilerThrottles',
        'reconcileWorkerThrottles',
        'reconcilePoisonParked',
        'reconcileDeadLetters',
        'reconcileLag',
        'apiServerErrors',
        'apiLatency',
        'oldestDispatchUnknown',
        'providerUnknownRate',
        'receiptSignatureFailures',
        'smsSpend',
      ].sort(),
    );
    expect(alarms).toHaveLength(23);
  });

  it('has a dashboard that shows every alarm', () => {
    const dashboard = onlyResource(template, 'AWS::CloudWatch::Dashboard').properties;
    const body = JSON.stringify(dashboard.DashboardBody);
    for (const alarmId of Object.keys(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(body).toContain(alarmId);
    }
  });
});
