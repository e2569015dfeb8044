import { describe, expect, it } from 'vitest';
import type { AlarmDefinition, MetricId } from '../../../local/alarms/evaluate.js';
import { createAlarmMonitor } from '../../../local/alarms/monitor.js';
import { formatTemplateAlarms, templateAlarmsReport } from '../../../scripts/chaos/alarms.js';
import { ManualClock } from '../../support/manual-clock.js';

const metric: MetricId = {
  namespace: 'Ns',
  metricName: 'SenderRecordFailures',
  dimensions: { service: 's' },
};

function anAlarm(name: string, observed = true): AlarmDefinition {
  return {
    name,
    logicalId: `ResetNotifierObservability${name}0ACD129C`,
    query: {
      kind: 'metric',
      stat: {
        metric: observed ? metric : { ...metric, namespace: 'AWS/ApiGateway' },
        periodSeconds: 300,
        stat: 'Sum',
      },
    },
    threshold: 0,
    comparison: 'GreaterThanThreshold',
    evaluationPeriods: 1,
    datapointsToAlarm: 1,
    treatMissingData: 'notBreaching',
  };
}

describe('the chaos report of the template alarms', () => {
  it('evaluates once more at the end of the run and names the alarms that fired', async () => {
    // Prepare: a run shorter than the evaluation minute, one failure recorded
    const clock = new ManualClock();
    const monitor = createAlarmMonitor({
      alarms: [anAlarm('SenderErrors'), anAlarm('ApiServerErrors', false)],
      observability: (m) => (m.namespace === 'Ns' ? undefined : 'no API Gateway locally'),
      clock,
    });
    monitor.record({ metric, at: clock.now(), value: 1 });
    clock.advance(1_000);
    // Act
    const report = await templateAlarmsReport(monitor);
    const lines = formatTemplateAlarms(report);
    // Assess
    expect(report).toMatchObject({ fired: ['SenderErrors'], evaluated: 1, unevaluated: ['ApiServerErrors'] });
    expect(lines[0]).toBe(
      'alarms: template alarms fired during the run: SenderErrors (1 evaluated locally, 1 not: ApiServerErrors; docs/operations.md#alarms-on-the-local-stack)',
    );
    expect(lines[1]).toMatch(/^ {2}alarm SenderErrors: INSUFFICIENT_DATA -> ALARM at /);
    expect(formatTemplateAlarms(undefined)).toEqual([]);
  });
});
