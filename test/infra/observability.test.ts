import { Duration } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOG_METRICS } from '../../infra/constructs/observability.js';
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

  it('has no alarm actions unless a topic is given, then notifies it on alarm and recovery', () => {
    // Prepare
    expect(alarms.every((a) => a.AlarmActions === undefined)).toBe(true);

    // Act
    const { template: withTopic } = synthTemplate((stack) => ({
      alarmTopic: Topic.fromTopicArn(stack, 'Ops', 'arn:aws:sns:eu-west-1:111111111111:ops-alarms'),
    }));

    // Assess
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
  });

  it('has a dashboard that shows every alarm', () => {
    const dashboard = onlyResource(template, 'AWS::CloudWatch::Dashboard').properties;
    const body = JSON.stringify(dashboard.DashboardBody);
    for (const alarmId of Object.keys(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(body).toContain(alarmId);
    }
  });
});
