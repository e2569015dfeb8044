/**
 * The alarms of a synthesized template (`AWS::CloudWatch::Alarm`), read as CloudWatch reads them:
 * single-metric alarms (MetricName, Namespace, Dimensions, Statistic or ExtendedStatistic, Period)
 * and metric-math alarms (Metrics: one expression with `ReturnData`, the `MetricStat`s it names).
 * A dimension whose value is a reference keeps it as `Ref(<logicalId>)` or
 * `GetAtt(<logicalId>.<attribute>)`: the local sources name the resource the same way.
 */
import type { CfnTemplate } from '../iam/resolve.js';
import type {
  AlarmDefinition,
  AlarmQuery,
  ComparisonOperator,
  MetricId,
  MetricStat,
  TreatMissingData,
} from './evaluate.js';

/** A dimension value as an alarm names it: text, or a reference to a resource of the template. */
function dimensionValue(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
  if (typeof v?.Ref === 'string') return `Ref(${v.Ref})`;
  if (Array.isArray(v?.['Fn::GetAtt'])) return `GetAtt(${(v['Fn::GetAtt'] as string[]).join('.')})`;
  return JSON.stringify(value);
}

/** The logical id a `Ref(...)` or `GetAtt(...)` dimension value names, if it names one. */
export function referencedId(value: string): string | undefined {
  return /^(?:Ref\((?<ref>[^)]+)\)|GetAtt\((?<att>[^.)]+)\.[^)]+\))$/.exec(value)?.groups?.[
    value.startsWith('Ref') ? 'ref' : 'att'
  ];
}

/**
 * The alarm's name as the stack's construct tree gives it (`ZeroSmsOutcomes` for
 * `ResetNotifierObservabilityZeroSmsOutcomesCDC065E8`): the logical id without the CDK's hash
 * suffix and the path of the construct that holds the alarms.
 */
export function alarmName(logicalId: string): string {
  return logicalId.replace(/[0-9A-F]{8}$/, '').replace(/^.*?Observability(?=[A-Z])/, '');
}

type Props = Record<string, unknown>;

function metricOf(p: Props): MetricId {
  const dims = (p.Dimensions as Array<{ Name: string; Value: unknown }> | undefined) ?? [];
  return {
    namespace: String(p.Namespace),
    metricName: String(p.MetricName),
    dimensions: Object.fromEntries(dims.map((d) => [d.Name, dimensionValue(d.Value)])),
  };
}

function queryOf(p: Props): AlarmQuery {
  const metrics = p.Metrics as Props[] | undefined;
  if (metrics === undefined) {
    const stat: MetricStat = {
      metric: metricOf(p),
      periodSeconds: Number(p.Period),
      stat: String(p.ExtendedStatistic ?? p.Statistic),
    };
    return { kind: 'metric', stat };
  }
  const returned = metrics.filter((m) => m.ReturnData !== false);
  const stats: Record<string, MetricStat> = {};
  for (const m of metrics) {
    const ms = m.MetricStat as { Metric: Props; Period: number; Stat: string } | undefined;
    if (ms)
      stats[String(m.Id)] = { metric: metricOf(ms.Metric), periodSeconds: Number(ms.Period), stat: ms.Stat };
  }
  const only = returned[0];
  if (returned.length !== 1 || only === undefined) throw new Error('a math alarm returns exactly one series');
  if (typeof only.Expression !== 'string') {
    const stat = stats[String(only.Id)];
    if (stat === undefined) throw new Error(`metric ${String(only.Id)} has no MetricStat`);
    return { kind: 'metric', stat };
  }
  return { kind: 'math', expression: only.Expression, metrics: stats };
}

/** Every alarm of `template`, in template order. */
export function templateAlarms(template: CfnTemplate): AlarmDefinition[] {
  const alarms: AlarmDefinition[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::CloudWatch::Alarm') continue;
    const p = resource.Properties ?? {};
    const evaluationPeriods = Number(p.EvaluationPeriods);
    alarms.push({
      name: alarmName(logicalId),
      logicalId,
      ...(typeof p.AlarmDescription === 'string' ? { description: p.AlarmDescription } : {}),
      query: queryOf(p),
      threshold: Number(p.Threshold),
      comparison: p.ComparisonOperator as ComparisonOperator,
      evaluationPeriods,
      // CloudWatch: Datapoints to Alarm defaults to Evaluation Periods (N out of N).
      datapointsToAlarm: p.DatapointsToAlarm === undefined ? evaluationPeriods : Number(p.DatapointsToAlarm),
      treatMissingData: (p.TreatMissingData as TreatMissingData | undefined) ?? 'missing',
    });
  }
  return alarms;
}

/** Every metric an alarm reads. */
export function metricsOf(alarm: AlarmDefinition): MetricId[] {
  return alarm.query.kind === 'metric'
    ? [alarm.query.stat.metric]
    : Object.values(alarm.query.metrics).map((m) => m.metric);
}
