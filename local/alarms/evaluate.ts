/**
 * CloudWatch metric-alarm evaluation, pure: samples in, datapoints per period, the alarm's state
 * out. No npm package evaluates CloudWatch alarms (the package lists hold clients, EMF writers and
 * CDK constructs only), so this follows AWS's documented semantics:
 *
 * - Evaluating an alarm (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-evaluation.html):
 *   Period, Evaluation Periods (N) and Datapoints to Alarm (M); ALARM when at least M of the last N
 *   datapoints breach, OK otherwise; INSUFFICIENT_DATA when there is no data to decide.
 * - Configuring how CloudWatch alarms treat missing data
 *   (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html):
 *   `notBreaching` counts a missing datapoint as good, `breaching` as bad, `ignore` keeps the state
 *   when everything is missing, `missing` (the default) goes to INSUFFICIENT_DATA when every
 *   datapoint of the range is missing; alarms on `AWS/DynamoDB` metrics always ignore missing data.
 *   With `missing` and `ignore` an alarm goes to ALARM early ("avoiding premature transitions")
 *   when the oldest breaching datapoint is at least M datapoints old and every newer one breaches
 *   or is missing, even with fewer than M datapoints.
 * - Statistics (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Statistics-definitions.html):
 *   Sum, Average, Minimum, Maximum, SampleCount and percentiles `pNN[.NN]` over the period's samples.
 * - Metric math (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html):
 *   arithmetic and comparisons per timestamp, `FILL(m, value)`, `IF(condition, a[, b])`; see
 *   `expression.ts`.
 *
 * Where the datapoints fall: AWS does not document how an alarm's periods align to its evaluation
 * time. Here the datapoint k (k = 0 the newest) of an evaluation at `t` covers
 * `[t - (k + 1) * period, t - k * period)`: a sum crosses its threshold at the first evaluation after
 * the sample arrived, as alarms on `Errors > 0` page within a minute or two in AWS.
 */
import { evaluateExpression, parseExpression, UnsupportedAlarmError } from './expression.js';

/** A metric as CloudWatch identifies it: namespace, name and every dimension. */
export interface MetricId {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Readonly<Record<string, string>>;
}

/** One metric, one statistic, one period: a `MetricStat` (or the single-metric alarm's fields). */
export interface MetricStat {
  readonly metric: MetricId;
  readonly periodSeconds: number;
  /** `Sum`, `Average`, `Minimum`, `Maximum`, `SampleCount` or a percentile `p99`, `p99.9`. */
  readonly stat: string;
}

export type ComparisonOperator =
  | 'GreaterThanThreshold'
  | 'GreaterThanOrEqualToThreshold'
  | 'LessThanThreshold'
  | 'LessThanOrEqualToThreshold';

export type TreatMissingData = 'breaching' | 'notBreaching' | 'ignore' | 'missing';

export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

/** What the alarm evaluates: one metric, or a metric-math expression over `MetricStat`s. */
export type AlarmQuery =
  | { readonly kind: 'metric'; readonly stat: MetricStat }
  | {
      readonly kind: 'math';
      readonly expression: string;
      readonly metrics: Readonly<Record<string, MetricStat>>;
    };

/** An `AWS::CloudWatch::Alarm` as far as its evaluation goes. */
export interface AlarmDefinition {
  /** The construct id (`ZeroSmsOutcomes`); the template's logical id is `logicalId`. */
  readonly name: string;
  readonly logicalId: string;
  readonly description?: string;
  readonly query: AlarmQuery;
  readonly threshold: number;
  readonly comparison: ComparisonOperator;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly treatMissingData: TreatMissingData;
}

/** One observed value of a metric at a time (an EMF value, a queue depth, an invocation). */
export interface Sample {
  readonly metric: MetricId;
  readonly at: number;
  readonly value: number;
}

/** The canonical key of a metric: equal keys for equal namespace, name and dimension set. */
export function metricKey(metric: MetricId): string {
  const dims = Object.keys(metric.dimensions)
    .sort()
    .map((name) => `${name}=${metric.dimensions[name]}`)
    .join(',');
  return `${metric.namespace}|${metric.metricName}|${dims}`;
}

/** A statistic over one period's values; undefined when the period has none (a missing datapoint). */
export function statistic(stat: string, values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  switch (stat) {
    case 'Sum':
      return values.reduce((a, b) => a + b, 0);
    case 'Average':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'Minimum':
      return Math.min(...values);
    case 'Maximum':
      return Math.max(...values);
    case 'SampleCount':
      return values.length;
  }
  const percentile = /^p(\d{1,2}(?:\.\d+)?|100)$/.exec(stat);
  if (!percentile) throw new UnsupportedAlarmError(`statistic ${stat}`);
  // Nearest rank: the smallest value with at least p % of the samples at or below it.
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((Number(percentile[1]) / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Reads the samples of one metric between two times (`from` inclusive, `to` exclusive). */
export type SampleSource = (metric: MetricId, from: number, to: number) => readonly number[];

/** The alarm's datapoints at `now`, newest first (undefined: missing), `count` of them. */
function datapoints(
  query: AlarmQuery,
  samples: SampleSource,
  now: number,
  count: number,
): Array<number | undefined> {
  const periodMs = periodOf(query) * 1000;
  const window = (k: number): [number, number] => [now - (k + 1) * periodMs, now - k * periodMs];
  if (query.kind === 'metric') {
    return Array.from({ length: count }, (_, k) =>
      statistic(query.stat.stat, samples(query.stat.metric, ...window(k))),
    );
  }
  const expression = parseExpression(query.expression);
  return Array.from({ length: count }, (_, k) => {
    const values: Record<string, number | undefined> = {};
    for (const [id, stat] of Object.entries(query.metrics))
      values[id] = statistic(stat.stat, samples(stat.metric, ...window(k)));
    return evaluateExpression(expression, values);
  });
}

/** The period of a query (a math alarm's metrics share theirs, as CloudWatch requires). */
export function periodOf(query: AlarmQuery): number {
  if (query.kind === 'metric') return query.stat.periodSeconds;
  const periods = new Set(Object.values(query.metrics).map((m) => m.periodSeconds));
  if (periods.size !== 1) throw new UnsupportedAlarmError('metrics with different periods');
  return [...periods][0] as number;
}

/** Whether `value` is on the wrong side of the threshold. */
function breaches(comparison: ComparisonOperator, value: number, threshold: number): boolean {
  switch (comparison) {
    case 'GreaterThanThreshold':
      return value > threshold;
    case 'GreaterThanOrEqualToThreshold':
      return value >= threshold;
    case 'LessThanThreshold':
      return value < threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= threshold;
  }
}

/** The outcome of one evaluation: the new state, and a reason worded as CloudWatch's `StateReason`. */
export interface Evaluation {
  readonly state: AlarmState;
  readonly reason: string;
  /** The datapoints evaluated, newest first (undefined: missing). */
  readonly datapoints: ReadonlyArray<number | undefined>;
}

const COMPARISON_WORDS: Record<ComparisonOperator, string> = {
  GreaterThanThreshold: 'greater than',
  GreaterThanOrEqualToThreshold: 'greater than or equal to',
  LessThanThreshold: 'less than',
  LessThanOrEqualToThreshold: 'less than or equal to',
};

/**
 * The alarm's state from its last N datapoints (newest first) and its current state, by the
 * missing-data rules cited at the top of this file.
 */
export function decide(
  alarm: AlarmDefinition,
  points: ReadonlyArray<number | undefined>,
  current: AlarmState,
): Evaluation {
  const n = alarm.evaluationPeriods;
  const m = alarm.datapointsToAlarm;
  const last = points.slice(0, n);
  const treat =
    alarm.query.kind === 'metric' && alarm.query.stat.metric.namespace === 'AWS/DynamoDB'
      ? 'ignore'
      : alarm.treatMissingData;
  const shown = last
    .filter((p): p is number => p !== undefined)
    .map((p) => Number(p.toFixed(3)))
    .join(', ');
  const words = COMPARISON_WORDS[alarm.comparison];
  const present = last.filter((p) => p !== undefined).length;
  if (present === 0 && (treat === 'missing' || treat === 'ignore')) {
    return treat === 'missing'
      ? {
          state: 'INSUFFICIENT_DATA',
          reason: `Insufficient Data: ${n} datapoints were unknown.`,
          datapoints: last,
        }
      : { state: current, reason: 'no datapoints: state kept (missing data ignored)', datapoints: last };
  }
  const verdicts = last.map((p) =>
    p === undefined
      ? treat === 'breaching'
        ? true
        : treat === 'notBreaching'
          ? false
          : undefined
      : breaches(alarm.comparison, p, alarm.threshold),
  );
  const breaching = verdicts.filter((v) => v === true).length;
  let alarmed = breaching >= m;
  if (!alarmed && (treat === 'missing' || treat === 'ignore')) {
    // Premature-transition rule: the oldest breaching datapoint is at least M old and every newer
    // one breaches or is missing.
    const oldest = verdicts.lastIndexOf(true);
    alarmed = oldest >= m - 1 && verdicts.slice(0, oldest).every((v) => v !== false);
  }
  const reason = `Threshold Crossed: ${breaching} out of the last ${n} datapoints [${shown}] ${
    breaching === 1 ? 'was' : 'were'
  } ${alarmed ? '' : 'not '}${words} the threshold (${alarm.threshold}) (minimum ${m} datapoint${
    m === 1 ? '' : 's'
  } for OK -> ALARM transition)${missingNote(last, treat)}.`;
  return { state: alarmed ? 'ALARM' : 'OK', reason, datapoints: last };
}

/** How many datapoints were missing and how they were treated (empty when none was). */
function missingNote(points: ReadonlyArray<number | undefined>, treat: TreatMissingData): string {
  const missing = points.filter((p) => p === undefined).length;
  if (missing === 0) return '';
  const as = treat === 'breaching' ? 'Breaching' : treat === 'notBreaching' ? 'NonBreaching' : 'missing';
  return ` (${missing} missing datapoint${missing === 1 ? ' was' : 's were'} treated as [${as}])`;
}

/** Evaluates `alarm` at `now` over `samples`, from its `current` state. */
export function evaluateAlarm(
  alarm: AlarmDefinition,
  samples: SampleSource,
  now: number,
  current: AlarmState,
): Evaluation {
  return decide(alarm, datapoints(alarm.query, samples, now, alarm.evaluationPeriods), current);
}
