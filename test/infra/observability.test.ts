import { Duration } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { RECEIPT_SIGNATURE_FAILURES, SERVICE_METRICS } from '../../infra/constructs/observability.js';
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

/** Where the functions publish their EMF metrics (Powertools `Metrics`): the namespace and `service` dimension. */
const EMF = {
  Namespace: 'ResetNotifier/TestStack',
  Dimensions: [{ Name: 'service', Value: 'reset-notifier' }],
};

describe('observability: alarms, EMF metrics and the dashboard', () => {
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
    // The dispatch queue's, the reconcile queue's and the status-poll queue's (the reconcile DLQ).
    expect(redrive).toHaveLength(3);
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

  it("alarms when a poison item is parked, on the reconcile worker's EMF metric", () => {
    const alarm = alarmAbout('was parked after its retries');
    expect(alarm).toMatchObject({ MetricName: 'ReconcileParkedItems', Threshold: 0, ...EMF });
  });

  it('counts nothing from log lines: every function publishes EMF into the namespace the alarms read', () => {
    // Prepare
    const functions = Object.values(template.findResources('AWS::Lambda::Function')).map(
      (f) => (f as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties,
    );
    const serviceFunctions = functions.filter((f) => f.Environment?.Variables?.POWERTOOLS_SERVICE_NAME);

    // Act
    const namespaces = new Set(
      serviceFunctions.map((f) => f.Environment?.Variables?.POWERTOOLS_METRICS_NAMESPACE),
    );

    // Assess
    template.resourceCountIs('AWS::Logs::MetricFilter', 0);
    expect(serviceFunctions.length).toBeGreaterThanOrEqual(5);
    expect([...namespaces]).toEqual([EMF.Namespace]);
  });

  it('reads every service metric with the service dimension only (what Powertools publishes)', () => {
    // Prepare
    const direct = alarms.filter((a) => a.Namespace === EMF.Namespace);
    const inMath = alarms.flatMap((a) =>
      ((a.Metrics as MetricStat[] | undefined) ?? []).flatMap((m) =>
        m.MetricStat?.Metric.Namespace === EMF.Namespace ? [m.MetricStat.Metric] : [],
      ),
    );

    // Act
    const names = [...direct.map((a) => a.MetricName), ...inMath.map((m) => m.MetricName)];

    // Assess
    expect(new Set(names)).toEqual(
      new Set([
        SERVICE_METRICS.reconcileParked,
        SERVICE_METRICS.oldestDueLag,
        SERVICE_METRICS.oldestDispatchUnknownAge,
        SERVICE_METRICS.senderRecordFailures,
        SERVICE_METRICS.reconcileItemErrors,
        SERVICE_METRICS.reconcileWorkerItemErrors,
        SERVICE_METRICS.providerSends,
        SERVICE_METRICS.providerUnknownOutcomes,
        SERVICE_METRICS.receiptSignatureFailures,
      ]),
    );
    for (const metric of [...direct, ...inMath]) expect(metric.Dimensions).toEqual(EMF.Dimensions);
  });

  it('alarms when due items wait longer than the unknown-age alarm (a backlog the workers do not drain)', () => {
    // Act
    const alarm = alarmAbout('due items wait longer');

    // Assess
    expect(alarm).toMatchObject({
      MetricName: 'OldestDueLagMs',
      Statistic: 'Maximum',
      EvaluationPeriods: 2,
      ...EMF,
    });
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

  it("alarms on the age of the oldest dispatch_unknown, on the reconciler's EMF metric", () => {
    // Act
    const alarm = alarmAbout('dispatch_unknown');

    // Assess
    expect(alarm).toMatchObject({
      MetricName: SERVICE_METRICS.oldestDispatchUnknownAge,
      Statistic: 'Maximum',
      Threshold: Duration.minutes(20).toMilliseconds(),
      ...EMF,
    });
  });

  it('alarms on the forwarder iterator age', () => {
    const alarm = alarmAbout('falls behind the table stream');
    expect(alarm).toMatchObject({ MetricName: 'IteratorAge', Namespace: 'AWS/Lambda', Statistic: 'Maximum' });
    expect((alarm.Dimensions as Array<{ Value: unknown }>)[0]?.Value).toEqual({ Ref: ids.forwarder });
  });

  it('alarms on sender errors: failed invocations plus failed records', () => {
    const metrics = alarmAbout('sender failed').Metrics as MetricStat[];
    const names = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : [])).sort();
    expect(names).toEqual(['Errors', SERVICE_METRICS.senderRecordFailures].sort());
    const errors = metrics.find((m) => m.MetricStat?.Metric.MetricName === 'Errors');
    expect(errors?.MetricStat?.Metric.Dimensions?.[0]?.Value).toEqual({ Ref: ids.sender });
  });

  it('alarms on reconciler failures, and when the reconciler stops running', () => {
    const failures = alarmAbout('reconciler failed').Metrics as MetricStat[];
    const errors = failures.find((m) => m.MetricStat?.Metric.MetricName === 'Errors');
    expect(errors?.MetricStat?.Metric.Dimensions?.[0]?.Value).toEqual({ Ref: ids.reconciler });
    expect(
      failures.some((m) => m.MetricStat?.Metric.MetricName === SERVICE_METRICS.reconcileItemErrors),
    ).toBe(true);
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
    ).toEqual([SERVICE_METRICS.providerSends, SERVICE_METRICS.providerUnknownOutcomes].sort());
    for (const m of metrics.filter((x) => x.MetricStat)) expect(m.MetricStat?.Metric).toMatchObject(EMF);
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
    // Three queues redrive to a DLQ (dispatch, reconcile, status poll): the alarm watches the dispatch queue.
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
    expect(withRedrive).toHaveLength(3);
    expect(withRedrive).toContain(queueOf(alarm));
    expect(queueOf(alarm)).toMatch(/DispatchQueue/);
  });

  it('alarms on receipt signature failures in the service namespace', () => {
    // Act
    const alarm = alarmAbout('signature check');

    // Assess
    expect(alarm).toMatchObject({
      MetricName: RECEIPT_SIGNATURE_FAILURES,
      Statistic: 'Sum',
      TreatMissingData: 'notBreaching',
      ...EMF,
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
