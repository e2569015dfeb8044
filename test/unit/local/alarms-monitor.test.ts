import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { samplesOfEmf, tappedMetrics } from '../../../local/alarms/emf.js';
import type { AlarmDefinition, MetricId } from '../../../local/alarms/evaluate.js';
import { createAlarmMonitor, formatChange, type MonitorTimers } from '../../../local/alarms/monitor.js';
import { alarmName, templateAlarms } from '../../../local/alarms/template.js';
import type { CfnTemplate } from '../../../local/iam/resolve.js';
import { ManualClock } from '../../support/manual-clock.js';

const NAMESPACE = 'ResetNotifier/Test';
const failures: MetricId = {
  namespace: NAMESPACE,
  metricName: 'SenderRecordFailures',
  dimensions: { service: 'reset-notifier' },
};

/** A template holding one single-metric alarm and one metric-math alarm, as the CDK writes them. */
const TEMPLATE: CfnTemplate = {
  Resources: {
    ResetNotifierObservabilitySenderClockSkew34CD927B: {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        DatapointsToAlarm: 1,
        Dimensions: [{ Name: 'service', Value: 'reset-notifier' }],
        MetricName: 'SenderRecordFailures',
        Namespace: NAMESPACE,
        Period: 300,
        Statistic: 'Sum',
        Threshold: 0,
        TreatMissingData: 'notBreaching',
      },
    },
    ResetNotifierObservabilitySenderErrors0ACD129C: {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        Metrics: [
          { Expression: 'FILL(invocationErrors, 0) + FILL(other, 0)', Id: 'expr_1', ReturnData: true },
          {
            Id: 'invocationErrors',
            MetricStat: {
              Metric: {
                Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'Sender5326E09C' } }],
                MetricName: 'Errors',
                Namespace: 'AWS/Lambda',
              },
              Period: 300,
              Stat: 'Sum',
            },
            ReturnData: false,
          },
          {
            Id: 'other',
            MetricStat: {
              Metric: {
                Dimensions: [{ Name: 'service', Value: 'reset-notifier' }],
                MetricName: 'SenderRecordFailures',
                Namespace: NAMESPACE,
              },
              Period: 300,
              Stat: 'Sum',
            },
            ReturnData: false,
          },
        ],
        Threshold: 0,
      },
    },
    SomethingElse: { Type: 'AWS::SQS::Queue' },
  },
};

/** Timers a test fires by hand. */
function manualTimers(): MonitorTimers & { tick(): void } {
  const tasks: Array<() => void> = [];
  return {
    every(_interval, task) {
      tasks.push(task);
      return () => tasks.splice(tasks.indexOf(task), 1);
    },
    tick: () => {
      for (const task of tasks) task();
    },
  };
}

describe('alarms of a template', () => {
  it('reads single-metric and metric-math alarms with their defaults', () => {
    // Act
    const [skew, errors] = templateAlarms(TEMPLATE);
    // Assess
    expect(skew).toMatchObject({
      name: 'SenderClockSkew',
      query: { kind: 'metric', stat: { metric: failures, periodSeconds: 300, stat: 'Sum' } },
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: 'notBreaching',
    });
    expect(errors).toMatchObject({
      name: 'SenderErrors',
      // CloudWatch's defaults: M = N, missing data 'missing'.
      datapointsToAlarm: 1,
      treatMissingData: 'missing',
      query: {
        kind: 'math',
        metrics: { invocationErrors: { metric: { dimensions: { FunctionName: 'Ref(Sender5326E09C)' } } } },
      },
    });
    expect(alarmName('ResetNotifierObservabilityKeptReceiptsD7C3CAF3')).toBe('KeptReceipts');
  });
});

describe('EMF tap', () => {
  it('turns what Powertools would print into samples, arrays as one sample per value', () => {
    // Prepare
    const lines: string[] = [];
    const metrics = tappedMetrics(NAMESPACE, (line) => lines.push(line));
    // Act
    metrics.addMetric('SenderRecordFailures', MetricUnit.Count, 1);
    metrics.addMetric('SenderRecordFailures', MetricUnit.Count, 1);
    metrics.addMetric('ProviderSends', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    // Assess
    expect(lines).toHaveLength(1);
    const samples = samplesOfEmf(lines[0] as string);
    expect(samples.filter((s) => s.metric.metricName === 'SenderRecordFailures').map((s) => s.value)).toEqual(
      [1, 1],
    );
    expect(samples[0]?.metric).toEqual(failures);
    expect(metrics.hasStoredMetrics()).toBe(false);
    expect(samplesOfEmf('not json')).toEqual([]);
    expect(samplesOfEmf('{"level":"INFO"}')).toEqual([]);
  });
});

describe('the monitor', () => {
  const observability = (metric: MetricId) =>
    metric.namespace === NAMESPACE ? undefined : 'not observed by the local runtime';

  it('lists alarms on metrics nothing local observes, with the reason, and evaluates the others', () => {
    // Act
    const monitor = createAlarmMonitor({
      alarms: templateAlarms(TEMPLATE),
      observability,
      clock: new ManualClock(),
    });
    // Assess
    expect(monitor.evaluated.map((a) => a.name)).toEqual(['SenderClockSkew']);
    expect(monitor.unevaluated).toEqual([
      { alarm: 'SenderErrors', reason: 'AWS/Lambda Errors: not observed by the local runtime' },
    ]);
  });

  it('goes OK -> ALARM on a sample and back once its period has passed, on the injected clock', async () => {
    // Prepare
    const clock = new ManualClock();
    const timers = manualTimers();
    const [skew] = templateAlarms(TEMPLATE) as [AlarmDefinition];
    const monitor = createAlarmMonitor({ alarms: [skew], observability, clock, timers });
    const lines: string[] = [];
    monitor.onChange((change) => lines.push(formatChange(change)));
    monitor.start();
    // Act: a quiet minute, a failure, then 5 quiet minutes
    clock.advance(60_000);
    await monitor.evaluateNow();
    monitor.record({ metric: failures, at: clock.now(), value: 1 });
    clock.advance(60_000);
    await monitor.evaluateNow();
    clock.advance(300_000);
    timers.tick();
    await monitor.evaluateNow();
    monitor.stop();
    // Assess
    expect(monitor.changes().map((c) => `${c.from}->${c.to}`)).toEqual([
      'INSUFFICIENT_DATA->OK',
      'OK->ALARM',
      'ALARM->OK',
    ]);
    expect(monitor.fired()).toEqual(['SenderClockSkew']);
    expect(lines[1]).toMatch(
      /^alarm SenderClockSkew: OK -> ALARM at \d\d:\d\d:\d\dZ \(Threshold Crossed: 1 out of the last 1 datapoints \[1\] was greater than the threshold \(0\)/,
    );
    expect(monitor.state('SenderClockSkew')).toBe('OK');
  });

  it('reads its polled sources before each evaluation', async () => {
    // Prepare
    const clock = new ManualClock();
    const [skew] = templateAlarms(TEMPLATE) as [AlarmDefinition];
    let depth = 0;
    const monitor = createAlarmMonitor({
      alarms: [skew],
      observability,
      clock,
      beforeEvaluation: async () => monitor.record({ metric: failures, at: clock.now() - 1, value: depth }),
    });
    // Act
    await monitor.evaluateNow();
    depth = 2;
    const changes = await monitor.evaluateNow();
    // Assess
    expect(changes.map((c) => c.to)).toEqual(['ALARM']);
  });
});
