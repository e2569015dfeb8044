import { describe, expect, it } from 'vitest';
import {
  type AlarmDefinition,
  type AlarmState,
  decide,
  evaluateAlarm,
  type MetricId,
  metricKey,
  type Sample,
  statistic,
} from '../../../local/alarms/evaluate.js';
import {
  evaluateExpression,
  parseExpression,
  UnsupportedAlarmError,
} from '../../../local/alarms/expression.js';

const metric: MetricId = { namespace: 'Ns', metricName: 'Errors', dimensions: { service: 's' } };

function alarmOf(overrides: Partial<AlarmDefinition> = {}): AlarmDefinition {
  return {
    name: 'Test',
    logicalId: 'TestABCDEF12',
    query: { kind: 'metric', stat: { metric, periodSeconds: 60, stat: 'Sum' } },
    threshold: 0,
    comparison: 'GreaterThanThreshold',
    evaluationPeriods: 1,
    datapointsToAlarm: 1,
    treatMissingData: 'notBreaching',
    ...overrides,
  };
}

/** The state after one decision from `current`, datapoints newest first (undefined: missing). */
function stateOf(
  alarm: AlarmDefinition,
  points: Array<number | undefined>,
  current: AlarmState = 'OK',
): AlarmState {
  return decide(alarm, points, current).state;
}

describe('statistics over one period', () => {
  it('computes Sum, Average, Minimum, Maximum, SampleCount and nearest-rank percentiles', () => {
    // Prepare
    const values = [1, 2, 3, 4, 10];
    // Act / Assess
    expect(statistic('Sum', values)).toBe(20);
    expect(statistic('Average', values)).toBe(4);
    expect(statistic('Minimum', values)).toBe(1);
    expect(statistic('Maximum', values)).toBe(10);
    expect(statistic('SampleCount', values)).toBe(5);
    expect(statistic('p50', values)).toBe(3);
    expect(statistic('p99', values)).toBe(10);
    expect(statistic('p99.9', values)).toBe(10);
  });

  it('has no datapoint for a period without samples, and refuses an unknown statistic', () => {
    expect(statistic('Sum', [])).toBeUndefined();
    expect(() => statistic('tm99', [1])).toThrow(UnsupportedAlarmError);
  });
});

describe('M out of N', () => {
  it('goes to ALARM when M of the last N datapoints breach, OK below M', () => {
    // Prepare: 2 out of 3
    const alarm = alarmOf({ evaluationPeriods: 3, datapointsToAlarm: 2 });
    // Act / Assess
    expect(stateOf(alarm, [1, 0, 1])).toBe('ALARM');
    expect(stateOf(alarm, [1, 0, 0])).toBe('OK');
    expect(stateOf(alarm, [0, 0, 0, 1, 1])).toBe('OK');
  });

  it('compares with each operator at the threshold', () => {
    const at = (comparison: AlarmDefinition['comparison']) =>
      stateOf(alarmOf({ comparison, threshold: 1 }), [1]);
    expect(at('GreaterThanThreshold')).toBe('OK');
    expect(at('GreaterThanOrEqualToThreshold')).toBe('ALARM');
    expect(at('LessThanThreshold')).toBe('OK');
    expect(at('LessThanOrEqualToThreshold')).toBe('ALARM');
  });

  it('words its reason as CloudWatch does', () => {
    const result = decide(alarmOf({ evaluationPeriods: 1 }), [3], 'OK');
    expect(result.reason).toBe(
      'Threshold Crossed: 1 out of the last 1 datapoints [3] was greater than the threshold (0) (minimum 1 datapoint for OK -> ALARM transition).',
    );
  });
});

describe('missing data (AWS: Configuring how CloudWatch alarms treat missing data)', () => {
  // The documentation's table: 3 out of 3, rows of datapoints oldest first there, newest first here.
  const three = (treatMissingData: AlarmDefinition['treatMissingData']) =>
    alarmOf({ evaluationPeriods: 3, datapointsToAlarm: 3, treatMissingData });

  it('notBreaching counts missing as good, breaching as bad', () => {
    expect(stateOf(three('notBreaching'), [1, undefined, 1])).toBe('OK');
    expect(stateOf(three('breaching'), [1, undefined, 1])).toBe('ALARM');
    expect(stateOf(three('breaching'), [undefined, undefined, undefined])).toBe('ALARM');
    expect(stateOf(three('notBreaching'), [undefined, undefined, undefined], 'ALARM')).toBe('OK');
  });

  it('missing goes to INSUFFICIENT_DATA when all are missing; ignore keeps the state', () => {
    expect(stateOf(three('missing'), [undefined, undefined, undefined], 'ALARM')).toBe('INSUFFICIENT_DATA');
    expect(stateOf(three('ignore'), [undefined, undefined, undefined], 'ALARM')).toBe('ALARM');
    expect(stateOf(three('ignore'), [undefined, undefined, undefined], 'OK')).toBe('OK');
  });

  it('missing and ignore alarm early when the oldest breach is M old and nothing newer is good', () => {
    expect(stateOf(three('missing'), [undefined, 1, 1])).toBe('ALARM');
    expect(stateOf(three('ignore'), [1, undefined, 1])).toBe('ALARM');
    // Not old enough, or a good datapoint after it.
    expect(stateOf(three('missing'), [1, 1, undefined])).toBe('OK');
    expect(stateOf(three('missing'), [0, 1, 1])).toBe('OK');
  });

  it('always ignores missing data for AWS/DynamoDB metrics', () => {
    const alarm = alarmOf({
      treatMissingData: 'breaching',
      query: {
        kind: 'metric',
        stat: { metric: { ...metric, namespace: 'AWS/DynamoDB' }, periodSeconds: 60, stat: 'Sum' },
      },
    });
    expect(stateOf(alarm, [undefined], 'OK')).toBe('OK');
  });
});

describe('datapoints from samples', () => {
  it('aggregates the samples of each period ending at the evaluation time', () => {
    // Prepare: a 2-out-of-2 Sum over 60 s periods; samples 30 s and 90 s before now
    const now = 1_000_000;
    const samples: Sample[] = [
      { metric, at: now - 30_000, value: 2 },
      { metric, at: now - 90_000, value: 1 },
      { metric: { ...metric, dimensions: { service: 'other' } }, at: now - 10_000, value: 5 },
    ];
    const read = (m: MetricId, from: number, to: number) =>
      samples
        .filter((s) => metricKey(s.metric) === metricKey(m) && s.at >= from && s.at < to)
        .map((s) => s.value);
    // Act
    const result = evaluateAlarm(alarmOf({ evaluationPeriods: 2, datapointsToAlarm: 2 }), read, now, 'OK');
    // Assess
    expect(result.datapoints).toEqual([2, 1]);
    expect(result.state).toBe('ALARM');
  });

  it('evaluates a metric-math alarm per period (FILL and IF as the zero-SMS alarm uses them)', () => {
    // Prepare
    const finals = { ...metric, metricName: 'FinalOutcomes' };
    const zero = { ...metric, metricName: 'ZeroSmsOutcome' };
    const alarm = alarmOf({
      threshold: 5,
      query: {
        kind: 'math',
        expression: 'IF(finals > 0, 100 * FILL(zeroSms, 0) / finals, 0)',
        metrics: {
          finals: { metric: finals, periodSeconds: 300, stat: 'Sum' },
          zeroSms: { metric: zero, periodSeconds: 300, stat: 'Sum' },
        },
      },
    });
    const read = (values: Record<string, number[]>) => (m: MetricId) => values[m.metricName] ?? [];
    // Act / Assess: 1 of 10 finals without SMS: 10 % > 5 %
    expect(
      evaluateAlarm(alarm, read({ FinalOutcomes: Array(10).fill(1), ZeroSmsOutcome: [1] }), 0, 'OK').state,
    ).toBe('ALARM');
    // No zero-SMS outcome: FILL makes it 0 %
    expect(evaluateAlarm(alarm, read({ FinalOutcomes: [1, 1] }), 0, 'ALARM').datapoints).toEqual([0]);
    // No final outcome at all: the condition has no value, so neither has the expression (missing)
    expect(evaluateAlarm(alarm, read({}), 0, 'ALARM').datapoints).toEqual([undefined]);
  });
});

describe('metric math expressions', () => {
  it('follows precedence, comparisons, AND/OR and missing values', () => {
    const at = (source: string, values: Record<string, number | undefined> = {}) =>
      evaluateExpression(parseExpression(source), values);
    expect(at('1 + 2 * 3')).toBe(7);
    expect(at('(1 + 2) * 3')).toBe(9);
    expect(at('-a + 1', { a: 2 })).toBe(-1);
    expect(at('a > 1 AND b < 1', { a: 2, b: 0 })).toBe(1);
    expect(at('a > 1 || b > 1', { a: 0, b: 0 })).toBe(0);
    expect(at('a + b', { a: 1, b: undefined })).toBeUndefined();
    expect(at('FILL(a, 0) + FILL(b, 0)', { a: 1, b: undefined })).toBe(1);
    expect(at('IF(a, 1)', { a: 0 })).toBeUndefined();
    expect(at('a / 0', { a: 1 })).toBeUndefined();
  });

  it('refuses functions it does not implement and malformed input', () => {
    expect(() => parseExpression('ANOMALY_DETECTION_BAND(m1, 2)')).toThrow(UnsupportedAlarmError);
    expect(() => parseExpression('1 +')).toThrow(UnsupportedAlarmError);
    expect(() => parseExpression('FILL(a)')).toThrow(UnsupportedAlarmError);
    expect(() => evaluateExpression(parseExpression('x + 1'), {})).toThrow(UnsupportedAlarmError);
  });
});
