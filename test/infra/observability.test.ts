import { runSimulation } from '@cloud-copilot/iam-simulate';
import { Duration, type Stack } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  RECEIPT_SIGNATURE_FAILURES,
  SERVICE_METRICS,
  ZERO_SMS_ALARM,
} from '../../infra/constructs/observability.js';
import type { ResetNotifierProps } from '../../infra/settings.js';
import { ZERO_SMS_CLASS_METRICS } from '../../shared/handlers/service-metrics.js';
import {
  DEPLOYED,
  functionByDescription,
  onlyResource,
  referencedId,
  resolveIntrinsics,
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
        SERVICE_METRICS.senderClockSkew,
        SERVICE_METRICS.reconcileItemErrors,
        SERVICE_METRICS.reconcileWorkerItemErrors,
        SERVICE_METRICS.providerSends,
        SERVICE_METRICS.providerUnknownOutcomes,
        SERVICE_METRICS.receiptSignatureFailures,
        SERVICE_METRICS.finalOutcomes,
        SERVICE_METRICS.zeroSmsOutcomes,
      ]),
    );
    for (const metric of [...direct, ...inMath]) expect(metric.Dimensions).toEqual(EMF.Dimensions);
  });

  it('pages on the zero-SMS rate: ZeroSmsOutcome / FinalOutcomes over 5 minutes, in percent, at the exported threshold', () => {
    // Act
    const alarm = alarmAbout('ended without any SMS to a valid destination');
    const metrics = alarm.Metrics as Array<MetricStat & { Period?: number }>;

    // Assess
    expect(alarm).toMatchObject({
      Threshold: ZERO_SMS_ALARM.ratePercent,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: ZERO_SMS_ALARM.evaluationPeriods,
      DatapointsToAlarm: ZERO_SMS_ALARM.evaluationPeriods,
      TreatMissingData: 'notBreaching',
    });
    expect(metrics.find((m) => m.Expression !== undefined)?.Expression).toBe(ZERO_SMS_ALARM.expression);
    const read = metrics.filter((m) => m.MetricStat);
    expect(read.map((m) => m.MetricStat?.Metric.MetricName).sort()).toEqual(
      [SERVICE_METRICS.finalOutcomes, SERVICE_METRICS.zeroSmsOutcomes].sort(),
    );
    for (const m of read) {
      expect(m.MetricStat?.Metric).toMatchObject(EMF);
      expect(m.MetricStat).toMatchObject({ Period: ZERO_SMS_ALARM.period.toSeconds(), Stat: 'Sum' });
    }
  });

  it('charts every zero-SMS class and the Twilio absence-proof events on the dashboard', () => {
    // Act
    const body = JSON.stringify(
      onlyResource(template, 'AWS::CloudWatch::Dashboard').properties.DashboardBody,
    );

    // Assess
    for (const name of [
      ...Object.values(ZERO_SMS_CLASS_METRICS),
      SERVICE_METRICS.zeroSmsDestinationFault,
      SERVICE_METRICS.twilioRedactionObserved,
      SERVICE_METRICS.twilioListLagObserved,
    ]) {
      // The body is a JSON string inside the template's JSON: its quotes are escaped.
      expect(body).toContain(`\\"${name}\\"`);
    }
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

  it('alarms on any clock-skew refusal of a sender in the service namespace (docs/design.md#clock-skew)', () => {
    // Act
    const alarm = alarmAbout("a sender's clock is off DynamoDB's");

    // Assess
    expect(alarm).toMatchObject({
      MetricName: SERVICE_METRICS.senderClockSkew,
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
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
        'senderClockSkew',
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
        'zeroSmsOutcomes',
      ].sort(),
    );
    expect(alarms).toHaveLength(25);
  });

  it('has a dashboard that shows every alarm', () => {
    const dashboard = onlyResource(template, 'AWS::CloudWatch::Dashboard').properties;
    const body = JSON.stringify(dashboard.DashboardBody);
    for (const alarmId of Object.keys(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(body).toContain(alarmId);
    }
  });
});

/** The alarm topic of a template (what every alarm notifies), its key, and both policies resolved. */
function alarmTopicPolicies(template: Template) {
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Props }>;
  const alarm = Object.values(resources).find((r) => r.Type === 'AWS::CloudWatch::Alarm');
  const topicId = referencedId((alarm?.Properties.AlarmActions as unknown[] | undefined)?.[0]);
  const topic = topicId === undefined ? undefined : resources[topicId];
  const keyId = referencedId(topic?.Properties.KmsMasterKeyId);
  const key = keyId === undefined ? undefined : resources[keyId];
  if (!topicId || !keyId || !key) throw new Error('no encrypted alarm topic');
  const topicArn = `arn:aws:sns:${DEPLOYED.region}:${DEPLOYED.account}:reset-notifier-alarms`;
  const keyArn = `arn:aws:kms:${DEPLOYED.region}:${DEPLOYED.account}:key/0a1b2c3d-0000-4000-8000-000000000001`;
  const arns = { [topicId]: topicArn, [keyId]: keyArn };
  const topicPolicies = Object.values(resources).filter(
    (r) =>
      r.Type === 'AWS::SNS::TopicPolicy' &&
      (r.Properties.Topics as unknown[]).some((t) => referencedId(t) === topicId),
  );
  expect(topicPolicies).toHaveLength(1);
  return {
    topicArn,
    keyArn,
    topicPolicy: resolveIntrinsics(topicPolicies[0]?.Properties.PolicyDocument, arns),
    keyPolicy: resolveIntrinsics(key.Properties.KeyPolicy, arns),
  };
}

/** A request by `principal`, evaluated against one resource policy alone, as IAM evaluates it. */
async function evaluate(request: {
  principal: string;
  action: string;
  resource: string;
  resourcePolicy: unknown;
  context: Record<string, string>;
}): Promise<string> {
  const result = await runSimulation(
    {
      request: {
        principal: request.principal,
        action: request.action,
        resource: { resource: request.resource, accountId: DEPLOYED.account },
        contextVariables: request.context,
      },
      identityPolicies: [],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      resourcePolicy: request.resourcePolicy,
    },
    {},
  );
  if (result.resultType === 'error') throw new Error(JSON.stringify(result.errors));
  return result.overallResult;
}

/** The context CloudWatch sends when one of this account's alarms in this region publishes. */
const ALARM_CONTEXT = {
  'aws:SourceAccount': DEPLOYED.account,
  'aws:SourceArn': `arn:aws:cloudwatch:${DEPLOYED.region}:${DEPLOYED.account}:alarm:reset-notifier-ZeroSmsOutcomes`,
  'aws:SecureTransport': 'true',
};

describe.each([
  ['sns', {}],
  [
    'eum',
    {
      provider: {
        kind: 'eum',
        originationIdentityArn: 'arn:aws:sms-voice:eu-west-1:111111111111:phone-number/phone-1234',
      },
    },
  ],
  [
    'simulator',
    (stack: Stack): ResetNotifierProps => ({
      provider: {
        kind: 'simulator',
        baseUrl: 'https://sim.example.test',
        authTokenSecret: Secret.fromSecretCompleteArn(
          stack,
          'Token',
          'arn:aws:secretsmanager:eu-west-1:111111111111:secret:simulator-token-AbCdEf',
        ),
      },
    }),
  ],
  ['twilio', 'twilio'],
] as const)('alarm topic and its key, evaluated as IAM would (provider %s)', (_name, variant) => {
  let policies: ReturnType<typeof alarmTopicPolicies>;
  beforeAll(() => {
    const { template } =
      variant === 'twilio'
        ? synthTemplate((stack) => ({
            provider: {
              kind: 'twilio',
              accountSid: 'AC123',
              from: '+15005550006',
              authTokenSecret: Secret.fromSecretCompleteArn(
                stack,
                'Token',
                'arn:aws:secretsmanager:eu-west-1:111111111111:secret:twilio-auth-token-AbCdEf',
              ),
            },
          }))
        : synthTemplate(variant as ResetNotifierProps | ((stack: Stack) => ResetNotifierProps));
    policies = alarmTopicPolicies(template);
  }, SYNTH_TIMEOUT_MS);

  const publish = (context: Record<string, string>, principal = 'cloudwatch.amazonaws.com') =>
    evaluate({
      principal,
      action: 'sns:Publish',
      resource: policies.topicArn,
      resourcePolicy: policies.topicPolicy,
      context,
    });

  it("allows CloudWatch to publish for this account's alarms, over HTTPS", async () => {
    expect(await publish(ALARM_CONTEXT)).toBe('Allowed');
  });

  it('denies a publish on behalf of another account, or of an alarm in another account or region', async () => {
    expect(await publish({ ...ALARM_CONTEXT, 'aws:SourceAccount': '222222222222' })).toBe('ImplicitlyDenied');
    expect(
      await publish({
        ...ALARM_CONTEXT,
        'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-1:222222222222:alarm:theirs',
      }),
    ).toBe('ImplicitlyDenied');
    expect(
      await publish({
        ...ALARM_CONTEXT,
        'aws:SourceArn': 'arn:aws:cloudwatch:us-east-1:111111111111:alarm:x',
      }),
    ).toBe('ImplicitlyDenied');
  });

  it('denies a publish over plain HTTP, even by CloudWatch for our own alarms (the HTTPS-only Deny stays)', async () => {
    expect(await publish({ ...ALARM_CONTEXT, 'aws:SecureTransport': 'false' })).toBe('ExplicitlyDenied');
  });

  it('gives no other service the topic', async () => {
    expect(await publish(ALARM_CONTEXT, 'events.amazonaws.com')).toBe('ImplicitlyDenied');
  });

  it.each(['kms:GenerateDataKey', 'kms:Decrypt'])(
    "lets CloudWatch use the topic's key (%s) for this account's alarms only",
    async (action) => {
      // Prepare
      const use = (context: Record<string, string>) =>
        evaluate({
          principal: 'cloudwatch.amazonaws.com',
          action,
          resource: policies.keyArn,
          resourcePolicy: policies.keyPolicy,
          context,
        });

      // Act / Assess
      expect(await use(ALARM_CONTEXT)).toBe('Allowed');
      expect(await use({ ...ALARM_CONTEXT, 'aws:SourceAccount': '222222222222' })).toBe('ImplicitlyDenied');
      expect(
        await use({ ...ALARM_CONTEXT, 'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-1:222222222222:alarm:x' }),
      ).toBe('ImplicitlyDenied');
    },
  );
});

const TOKEN_ARN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:provider-token-AbCdEf';
/** Each provider's props, as the stack tests build them. */
const PROVIDER_PROPS: Record<string, (stack: Stack) => ResetNotifierProps> = {
  sns: () => ({ provider: { kind: 'sns' } }),
  eum: () => ({
    provider: {
      kind: 'eum',
      originationIdentityArn: 'arn:aws:sms-voice:eu-west-1:111111111111:phone-number/phone-1234',
    },
  }),
  twilio: (stack) => ({
    provider: {
      kind: 'twilio',
      accountSid: 'AC123',
      from: '+15005550006',
      authTokenSecret: Secret.fromSecretCompleteArn(stack, 'Token', TOKEN_ARN),
    },
  }),
  simulator: (stack) => ({
    provider: {
      kind: 'simulator',
      baseUrl: 'https://sim.example.test',
      authTokenSecret: Secret.fromSecretCompleteArn(stack, 'Token', TOKEN_ARN),
    },
  }),
};

describe.each([
  [
    'sns',
    { Namespace: 'AWS/SNS', MetricName: 'SMSMonthToDateSpentUSD', Statistic: 'Maximum', Threshold: 0.8 },
  ],
  // https://docs.aws.amazon.com/sms-voice/latest/userguide/monitoring-cloudwatch.html: account-level metric.
  [
    'eum',
    {
      Namespace: 'AWS/SMSVoice',
      MetricName: 'TextMessageMonthlySpend',
      Statistic: 'Maximum',
      Threshold: 0.8,
    },
  ],
  // No spend metric in CloudWatch: our own sends per hour stand in for spend.
  [
    'twilio',
    { ...EMF, MetricName: SERVICE_METRICS.providerSends, Statistic: 'Sum', Period: 3600, Threshold: 500 },
  ],
  [
    'simulator',
    { ...EMF, MetricName: SERVICE_METRICS.providerSends, Statistic: 'Sum', Period: 3600, Threshold: 500 },
  ],
] as const)('a spend alarm for provider %s', (kind, expected) => {
  it(
    'alarms on the provider spend metric, or on sends per hour when it has none, notifying the topic',
    () => {
      // Prepare / Act
      const { template, stack } = synthTemplate(PROVIDER_PROPS[kind] as (stack: Stack) => ResetNotifierProps);
      const { alarms } = stack.notifier.observability;

      // Assess: exactly one of the two, with the metric and threshold of its provider.
      const spendAlarms = ['smsSpend', 'sendsPerHour'].filter((name) => name in alarms);
      expect(spendAlarms).toEqual([expected.Namespace.startsWith('AWS/') ? 'smsSpend' : 'sendsPerHour']);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        ...expected,
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: Match.anyValue(),
        OKActions: Match.anyValue(),
      });
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('sends-per-hour alarm threshold', () => {
  it(
    'takes sendsPerHourAlarm from the props and refuses one below 1',
    () => {
      // Prepare / Act
      const { template } = synthTemplate((stack) => ({
        ...(PROVIDER_PROPS.twilio as (stack: Stack) => ResetNotifierProps)(stack),
        sendsPerHourAlarm: 120,
      }));

      // Assess
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: SERVICE_METRICS.providerSends,
        Period: 3600,
        Threshold: 120,
      });
      expect(() => synthTemplate({ sendsPerHourAlarm: 0 })).toThrow(/sendsPerHourAlarm/);
    },
    SYNTH_TIMEOUT_MS,
  );
});
