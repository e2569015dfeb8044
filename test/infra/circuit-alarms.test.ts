import { beforeAll, describe, expect, it } from 'vitest';
import type { ProviderSettings } from '../../infra/settings.js';
import { CIRCUIT_LEVELS, circuitMetric } from '../../shared/handlers/service-metrics.js';
import { SYNTH_TIMEOUT_MS, synthTemplate } from './support.js';

type Props = Record<string, unknown>;

const EUM: ProviderSettings = {
  kind: 'eum',
  originationIdentityArn: 'arn:aws:sms-voice:eu-west-1:111111111111:phone-number/phone-1234567890abcdef',
};

/** The alarms of a stack on `providers`, by their metric name. */
function circuitAlarms(providers: readonly [ProviderSettings, ...ProviderSettings[]]): Map<string, Props> {
  const { template } = synthTemplate({ providers });
  const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
    (a) => (a as { Properties: Props }).Properties,
  );
  return new Map(
    alarms
      .filter((a) => String(a.MetricName).startsWith('ProviderCircuit_'))
      .map((a) => [String(a.MetricName), a] as const),
  );
}

describe('provider circuit alarms (docs/providers/failover.md#circuit)', () => {
  let two: Map<string, Props>;
  beforeAll(() => {
    two = circuitAlarms([{ kind: 'sns' }, EUM]);
  }, SYNTH_TIMEOUT_MS);

  it('has one alarm per listed provider, on the circuit level the senders publish', () => {
    // Assess
    expect([...two.keys()].sort()).toEqual([circuitMetric('eum'), circuitMetric('sns')].sort());
  });

  it('fires when a sender saw the circuit open within a minute, and stays OK without sends', () => {
    // Act
    const alarm = two.get(circuitMetric('sns'));
    // Assess
    expect(alarm).toMatchObject({
      Statistic: 'Maximum',
      Period: 60,
      Threshold: CIRCUIT_LEVELS.open,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      Dimensions: [{ Name: 'service', Value: 'reset-notifier' }],
    });
    expect(String(alarm?.AlarmDescription)).toMatch(/the sns circuit is open/);
    expect(alarm?.AlarmActions).toHaveLength(1);
    expect(alarm?.OKActions).toHaveLength(1);
  });

  it(
    'has none with one provider: the senders keep no circuit when there is nowhere else to send',
    () => {
      // Act
      const one = circuitAlarms([{ kind: 'sns' }]);
      // Assess
      expect([...one.keys()]).toEqual([]);
    },
    SYNTH_TIMEOUT_MS,
  );
});
