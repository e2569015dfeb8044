import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineStack } from '../../infra/main.js';
import { CONTEXT_KEYS } from '../../infra/stack.js';
import { CONTEXT_PREFIX, type ContextName } from '../../shared/settings.js';
import {
  EXAMPLE_ALLOW_LIST_CONTEXT,
  functionByDescription,
  onlyResource,
  referencedId,
  SYNTH_TIMEOUT_MS,
  statementsOfFunction,
  stubCode,
  testApp,
} from './support.js';

/**
 * Every CDK context key the docs list (docs/configuration.md, generated from shared/settings.ts)
 * reaches the template: the stack is synthesized from context exactly as `cdk deploy -c ...`
 * defines it (`defineStack`, without cdk-nag), once per case, and each case asserts what its key
 * documents. A key without a case fails the coverage test, so a new key must show its effect.
 */

const ACCOUNT = '111111111111';
const SECRET_ARN = `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:tok-AbCdEf`;
const KEY_ARN = `arn:aws:kms:eu-west-1:${ACCOUNT}:key/0a1b2c3d-0000-4000-8000-000000000001`;
const TOPIC_ARN = `arn:aws:sns:eu-west-1:${ACCOUNT}:ops-alarms`;
const IDENTITY_ARN = `arn:aws:sms-voice:eu-west-1:${ACCOUNT}:phone-number/phone-1234`;

/** The context of each provider's baseline (what a case of that provider changes from). */
const PROVIDERS = {
  sns: {},
  twilio: {
    provider: 'twilio',
    twilioAccountSid: 'AC1',
    twilioFrom: '+15005550006',
    twilioAuthTokenSecretArn: SECRET_ARN,
  },
  eum: { provider: 'eum', eumOriginationIdentityArn: IDENTITY_ARN },
  simulator: {
    provider: 'simulator',
    simulatorBaseUrl: 'https://sim.example.test',
    twilioAuthTokenSecretArn: SECRET_ARN,
  },
} as const satisfies Record<string, Partial<Record<ContextName, string>>>;
type ProviderName = keyof typeof PROVIDERS;

/** One stub package for every synthesis: the asset hashes stay equal, so templates compare. */
const CODE = stubCode();

function synth(context: Partial<Record<ContextName, string>>): Template {
  const full = Object.fromEntries(
    Object.entries(context).map(([name, value]) => [`${CONTEXT_PREFIX}${name}`, value]),
  );
  const stack = defineStack(testApp({ context: { ...EXAMPLE_ALLOW_LIST_CONTEXT, ...full } }), {
    code: CODE,
  });
  return Template.fromStack(stack);
}

type Props = Record<string, unknown>;
const resourcesOf = (template: Template) =>
  template.toJSON().Resources as Record<string, { Type: string; Properties: Props }>;
const SENDER = 'calls the SMS provider once';
const senderEnv = (template: Template) =>
  (functionByDescription(template, SENDER).properties.Environment as { Variables: Props }).Variables;
const functions = (template: Template) =>
  Object.values(resourcesOf(template)).filter((r) => r.Type === 'AWS::Lambda::Function');
const logGroupsNamed = (template: Template, name: string) =>
  Object.values(resourcesOf(template)).filter(
    (r) => r.Type === 'AWS::Logs::LogGroup' && r.Properties.LogGroupName === name,
  );

interface Case {
  /** The keys this case shows (every key of its context that is not its provider's baseline). */
  readonly keys: readonly ContextName[];
  readonly provider?: ProviderName;
  readonly context: Partial<Record<ContextName, string>>;
  readonly assess: (template: Template) => void;
}

const CASES: readonly Case[] = [
  {
    keys: ['provider', 'twilioAccountSid', 'twilioFrom', 'twilioAuthTokenSecretArn'],
    context: PROVIDERS.twilio,
    assess: (t) =>
      expect(senderEnv(t)).toMatchObject({
        PROVIDER: 'twilio',
        PROVIDER_ACCOUNT_SID: 'AC1',
        PROVIDER_FROM: '+15005550006',
        PROVIDER_AUTH_TOKEN_SECRET_ARN: SECRET_ARN,
      }),
  },
  {
    keys: ['twilioBaseUrl'],
    provider: 'twilio',
    context: { twilioBaseUrl: 'https://twilio.example.test' },
    assess: (t) => expect(senderEnv(t).PROVIDER_BASE_URL).toBe('https://twilio.example.test'),
  },
  {
    keys: ['twilioMessagingServiceSid', 'twilioRedaction', 'twilioAbsenceProbeTo'],
    provider: 'twilio',
    context: {
      twilioMessagingServiceSid: 'MG1',
      twilioRedaction: 'off',
      twilioAbsenceProbeTo: '+15005550009',
    },
    assess: (t) =>
      expect(senderEnv(t)).toMatchObject({
        PROVIDER_MESSAGING_SERVICE_SID: 'MG1',
        PROVIDER_REDACTION: 'off',
        PROVIDER_ABSENCE_PROBE_TO: '+15005550009',
      }),
  },
  {
    keys: ['twilioListLagAllowanceSeconds'],
    provider: 'twilio',
    context: { twilioListLagAllowanceSeconds: '120' },
    assess: (t) => expect(senderEnv(t).PROVIDER_LIST_LAG_ALLOWANCE_SECONDS).toBe('120'),
  },
  {
    keys: ['providers'],
    context: {
      twilioAccountSid: 'AC1',
      twilioFrom: '+15005550006',
      twilioAuthTokenSecretArn: SECRET_ARN,
      eumOriginationIdentityArn: IDENTITY_ARN,
      providers: 'twilio,eum',
    },
    assess: (t) => {
      expect(senderEnv(t)).toMatchObject({
        PROVIDER: 'twilio',
        PROVIDERS: 'twilio,eum',
        PROVIDER_ACCOUNT_SID: 'AC1',
        EUM_ORIGINATION_IDENTITY: IDENTITY_ARN,
      });
      onlyResource(t, 'AWS::SMSVOICE::ConfigurationSet');
      functionByDescription(t, 'Twilio status callbacks');
    },
  },
  {
    keys: ['simulatorBaseUrl'],
    context: PROVIDERS.simulator,
    assess: (t) =>
      expect(senderEnv(t)).toMatchObject({
        PROVIDER: 'simulator',
        PROVIDER_BASE_URL: 'https://sim.example.test',
      }),
  },
  {
    keys: ['snsSenderId'],
    context: { snsSenderId: 'ResetCode' },
    assess: (t) => expect(senderEnv(t).SNS_SENDER_ID).toBe('ResetCode'),
  },
  {
    keys: ['snsDeliveryLogGroups'],
    context: { snsDeliveryLogGroups: 'sns-a,sns-b' },
    assess: (t) => {
      expect(senderEnv(t).SNS_DELIVERY_LOG_GROUPS).toBe('sns-a,sns-b');
      expect(logGroupsNamed(t, 'sns-a')).toHaveLength(1);
      expect(logGroupsNamed(t, 'sns-b')).toHaveLength(1);
    },
  },
  {
    keys: ['snsManageDeliveryLogGroups'],
    context: { snsManageDeliveryLogGroups: 'off' },
    assess: (t) => {
      const named = Object.values(resourcesOf(t)).filter(
        (r) => r.Type === 'AWS::Logs::LogGroup' && r.Properties.LogGroupName !== undefined,
      );
      expect(named).toEqual([]);
      expect(Object.keys(t.toJSON().Outputs)).not.toContain(expect.stringMatching(/DeliveryStatusRole/));
      // The reconciler still reads them (they belong to another stack, or to the account).
      expect(senderEnv(t).SNS_DELIVERY_LOG_GROUPS).toBeDefined();
    },
  },
  {
    keys: ['snsDeliveryLogRetentionDays'],
    context: { snsDeliveryLogRetentionDays: '30' },
    assess: (t) =>
      t.hasResourceProperties('AWS::Logs::LogGroup', {
        LogGroupName: Match.objectLike({}),
        RetentionInDays: 30,
      }),
  },
  {
    keys: ['eumOriginationIdentityArn'],
    context: PROVIDERS.eum,
    assess: (t) => {
      expect(senderEnv(t)).toMatchObject({ PROVIDER: 'eum', EUM_ORIGINATION_IDENTITY: IDENTITY_ARN });
      onlyResource(t, 'AWS::SMSVOICE::ConfigurationSet');
    },
  },
  {
    keys: ['eumConfigurationSet'],
    provider: 'eum',
    context: { eumConfigurationSet: 'resets' },
    assess: (t) => {
      onlyResource(t, 'AWS::SMSVOICE::ConfigurationSet', { ConfigurationSetName: 'resets' });
      expect(senderEnv(t).EUM_CONFIGURATION_SET).toBe('resets');
    },
  },
  {
    keys: ['eumMaxPrice'],
    provider: 'eum',
    context: { eumMaxPrice: '0.05' },
    assess: (t) => expect(senderEnv(t).EUM_MAX_PRICE).toBe('0.05'),
  },
  {
    keys: ['eumProtectConfigurationId'],
    provider: 'eum',
    context: { eumProtectConfigurationId: 'protect-abc' },
    assess: (t) => {
      expect(senderEnv(t).EUM_PROTECT_CONFIGURATION_ID).toBe('protect-abc');
      onlyResource(t, 'AWS::SMSVOICE::ConfigurationSet', { ProtectConfigurationId: 'protect-abc' });
    },
  },
  {
    keys: ['eumMessageFeedback'],
    provider: 'eum',
    context: { eumMessageFeedback: 'on' },
    assess: (t) => {
      expect(senderEnv(t).EUM_MESSAGE_FEEDBACK).toBe('on');
      onlyResource(t, 'AWS::SMSVOICE::ConfigurationSet', { MessageFeedbackEnabled: true });
    },
  },
  {
    keys: ['evidenceRetentionDays', 'maxExpiryHours'],
    context: { evidenceRetentionDays: '30', maxExpiryHours: '12' },
    assess: (t) =>
      expect(senderEnv(t)).toMatchObject({ EVIDENCE_RETENTION_DAYS: '30', MAX_EXPIRY_HOURS: '12' }),
  },
  {
    keys: ['reconcileMinutes'],
    context: { reconcileMinutes: '5' },
    assess: (t) => t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' }),
  },
  {
    keys: ['allowedDestinations'],
    context: { allowedDestinations: '+44,+33' },
    assess: (t) => expect(senderEnv(t).ALLOWED_DESTINATION_PREFIXES).toBe('+44,+33'),
  },
  {
    keys: [
      'destinationLimits',
      'countryLimits',
      'allowedNumberTypes',
      'maxSmsSegments',
      'allowedDestinationCountries',
      'resetUrlHosts',
    ],
    context: {
      destinationLimits: '5/1h',
      countryLimits: 'US:2000/1h',
      allowedNumberTypes: 'MOBILE',
      maxSmsSegments: '2',
      allowedDestinationCountries: 'US,CA',
      resetUrlHosts: 'id.example.com,login.example.com',
    },
    assess: (t) =>
      expect(senderEnv(t)).toMatchObject({
        DESTINATION_LIMITS: '5/1h',
        COUNTRY_LIMITS: 'US:2000/1h',
        ALLOWED_NUMBER_TYPES: 'MOBILE',
        MAX_SMS_SEGMENTS: '2',
        ALLOWED_DESTINATION_COUNTRIES: 'US,CA',
        RESET_URL_HOSTS: 'id.example.com,login.example.com',
      }),
  },
  {
    keys: [
      'providerTimeoutMs',
      'dispatchMarginSeconds',
      'reconcileSettleSeconds',
      'statusHorizonSeconds',
      'statusPollSeconds',
      'queueSafetyNetSeconds',
    ],
    context: {
      providerTimeoutMs: '4000',
      dispatchMarginSeconds: '10',
      reconcileSettleSeconds: '180',
      statusHorizonSeconds: '7200',
      statusPollSeconds: '120',
      queueSafetyNetSeconds: '600',
    },
    assess: (t) =>
      expect(senderEnv(t)).toMatchObject({
        PROVIDER_TIMEOUT_MS: '4000',
        DISPATCH_MARGIN_SECONDS: '10',
        RECONCILE_SETTLE_SECONDS: '180',
        STATUS_HORIZON_SECONDS: '7200',
        STATUS_POLL_SECONDS: '120',
        QUEUE_SAFETY_NET_SECONDS: '600',
      }),
  },
  {
    keys: ['fingerprintKeyParameter', 'fingerprintKeyEncryptionKeyArn'],
    context: { fingerprintKeyParameter: '/resets/fingerprint-key', fingerprintKeyEncryptionKeyArn: KEY_ARN },
    assess: (t) => {
      expect(senderEnv(t).FINGERPRINT_KEY_PARAMETER).toBe('/resets/fingerprint-key');
      const decrypts = statementsOfFunction(t, functionByDescription(t, SENDER).logicalId).filter(
        (s) => s.Resource === KEY_ARN,
      );
      expect(decrypts).toEqual([
        expect.objectContaining({
          Action: 'kms:Decrypt',
          Condition: { StringEquals: { 'kms:ViaService': expect.anything() } },
        }),
      ]);
    },
  },
  {
    keys: ['fingerprintKeySecretArn'],
    context: { fingerprintKeySecretArn: SECRET_ARN },
    assess: (t) => {
      expect(senderEnv(t).FINGERPRINT_KEY_SECRET_ARN).toBe(SECRET_ARN);
      t.resourceCountIs('AWS::SecretsManager::Secret', 0);
    },
  },
  {
    keys: ['fingerprintKeyVersion'],
    context: { fingerprintKeyVersion: '2' },
    assess: (t) => {
      // Every function that reads the key gets it (docs/security.md#fingerprint-key-rotation).
      const readers = Object.values(t.findResources('AWS::Lambda::Function')).filter(
        (f) => f.Properties.Environment?.Variables?.FINGERPRINT_KEY_SECRET_ARN !== undefined,
      );
      expect(readers.length).toBeGreaterThanOrEqual(2);
      for (const f of readers) expect(f.Properties.Environment.Variables.FINGERPRINT_KEY_VERSION).toBe('2');
    },
  },
  {
    keys: ['alarmTopicArn'],
    context: { alarmTopicArn: TOPIC_ARN },
    assess: (t) => {
      t.resourceCountIs('AWS::SNS::Topic', 0);
      t.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmActions: [TOPIC_ARN] });
    },
  },
  {
    keys: ['alarmEmail'],
    context: { alarmEmail: 'ops@example.com' },
    assess: (t) =>
      t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' }),
  },
  {
    keys: ['apiInvokerPrincipals', 'apiInvokerRoleArns'],
    context: {
      apiInvokerPrincipals: '222222222222',
      apiInvokerRoleArns: 'arn:aws:iam::333333333333:role/auth',
    },
    assess: (t) => {
      const trust = JSON.stringify(
        Object.values(resourcesOf(t)).filter(
          (r) => r.Type === 'AWS::IAM::Role' && JSON.stringify(r.Properties).includes('222222222222'),
        ),
      );
      expect(trust).toContain('arn:aws:iam::333333333333:role/auth');
      expect(Object.keys(t.toJSON().Outputs)).toContain('ApiInvokerRoleArn');
    },
  },
  {
    keys: ['sendsPerHourAlarm'],
    provider: 'twilio',
    context: { sendsPerHourAlarm: '120' },
    assess: (t) => t.hasResourceProperties('AWS::CloudWatch::Alarm', { Period: 3600, Threshold: 120 }),
  },
  {
    keys: ['reconcilerReservedConcurrency'],
    context: { reconcilerReservedConcurrency: '2' },
    assess: (t) =>
      t.hasResourceProperties('AWS::Lambda::Function', {
        Description: Match.stringLikeRegexp('reconciles unknown outcomes'),
        ReservedConcurrentExecutions: 2,
      }),
  },
  {
    keys: ['stackName'],
    provider: 'eum',
    context: { stackName: 'ResetNotifierStaging' },
    assess: (t) => {
      onlyResource(t, 'AWS::SMSVOICE::ConfigurationSet', { ConfigurationSetName: 'ResetNotifierStaging' });
      expect(senderEnv(t).POWERTOOLS_METRICS_NAMESPACE).toBe('ResetNotifier/ResetNotifierStaging');
    },
  },
  {
    keys: ['tracing'],
    context: { tracing: 'on' },
    assess: (t) => {
      for (const fn of functions(t)) expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      const sender = functionByDescription(t, SENDER).logicalId;
      expect(JSON.stringify(statementsOfFunction(t, sender))).toContain('xray:PutTraceSegments');
    },
  },
  {
    keys: ['logRetentionDays'],
    context: { logRetentionDays: '30' },
    assess: (t) => {
      for (const fn of functions(t)) {
        const id = referencedId((fn.Properties.LoggingConfig as { LogGroup: unknown }).LogGroup) as string;
        expect(resourcesOf(t)[id]?.Properties.RetentionInDays).toBe(30);
      }
    },
  },
  {
    keys: ['apiThrottleRateLimit', 'apiThrottleBurstLimit'],
    context: { apiThrottleRateLimit: '200', apiThrottleBurstLimit: '400' },
    assess: (t) =>
      t.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        DefaultRouteSettings: Match.objectLike({ ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 }),
      }),
  },
  {
    keys: ['senderBatchSize', 'senderMaxConcurrency'],
    context: { senderBatchSize: '5', senderMaxConcurrency: '20' },
    assess: (t) =>
      onlyResource(t, 'AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: functionByDescription(t, SENDER).logicalId },
        BatchSize: 5,
        ScalingConfig: { MaximumConcurrency: 20 },
      }),
  },
  {
    keys: ['smsSpendAlarmUsd'],
    context: { smsSpendAlarmUsd: '40' },
    assess: (t) =>
      t.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'SMSMonthToDateSpentUSD',
        Threshold: 40,
      }),
  },
  {
    keys: ['dispatchUnknownAgeAlarmMinutes'],
    context: { dispatchUnknownAgeAlarmMinutes: '30' },
    assess: (t) =>
      t.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'OldestDispatchUnknownAgeMs',
        Threshold: 30 * 60_000,
      }),
  },
  {
    keys: ['unknownOutcomeRateAlarmPercent'],
    context: { unknownOutcomeRateAlarmPercent: '20' },
    assess: (t) =>
      t.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmDescription: Match.stringLikeRegexp('more than 20% of provider calls'),
        Threshold: 20,
      }),
  },
  {
    keys: ['metricsNamespace'],
    context: { metricsNamespace: 'Resets/Prod' },
    assess: (t) => {
      expect(senderEnv(t).POWERTOOLS_METRICS_NAMESPACE).toBe('Resets/Prod');
      t.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'Resets/Prod' });
    },
  },
];

describe('every documented CDK context key changes the template as documented', () => {
  const baselines = new Map<ProviderName, string>();
  beforeAll(() => {
    for (const name of Object.keys(PROVIDERS) as ProviderName[]) {
      baselines.set(name, JSON.stringify(synth(PROVIDERS[name]).toJSON()));
    }
  }, SYNTH_TIMEOUT_MS * 2);

  it('has a case for every context key of the settings table', () => {
    const covered = new Set(CASES.flatMap((c) => c.keys));
    const missing = Object.keys(CONTEXT_KEYS).filter((key) => !covered.has(key as ContextName));
    expect(missing).toEqual([]);
  });

  it.each(CASES.map((c) => [c.keys.join(', '), c] as const))(
    '%s',
    (_keys, { provider, context, assess }) => {
      // Prepare
      const base = provider === undefined ? {} : PROVIDERS[provider];

      // Act
      const template = synth({ ...base, ...context });

      // Assess: the template differs from its provider's baseline, in the documented way.
      const baseline =
        provider === undefined && 'provider' in context ? undefined : baselines.get(provider ?? 'sns');
      if (baseline !== undefined) expect(JSON.stringify(template.toJSON())).not.toBe(baseline);
      assess(template);
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('context values are parsed by the settings codecs', () => {
  it.each<[string, Partial<Record<ContextName, string>>, RegExp]>([
    [
      'a spend alarm that is not a number',
      { smsSpendAlarmUsd: 'forty' },
      /smsSpendAlarmUsd must be a number, got "forty"/,
    ],
    [
      'a batch above the SQS maximum',
      { senderBatchSize: '11' },
      /senderBatchSize must be at most 10, got "11"/,
    ],
    ['tracing that is neither on nor off', { tracing: 'yes' }, /tracing must be one of on, off, got "yes"/],
    [
      'a retention CloudWatch Logs does not offer',
      { logRetentionDays: '31' },
      /logRetentionDays must be a retention CloudWatch Logs offers/,
    ],
    [
      'a stack name CloudFormation refuses',
      { stackName: 'reset_notifier' },
      /stackName must be a CloudFormation stack name/,
    ],
    [
      'a budget the domain cannot parse',
      { destinationLimits: 'bogus' },
      /^context reset-notifier:destinationLimits: "bogus" is not a budget like 3\/15m/,
    ],
    [
      'a country that is no region code',
      { allowedDestinationCountries: 'USA' },
      /^context reset-notifier:allowedDestinationCountries: "USA" is not a region code/,
    ],
  ])('refuses %s, naming the key', (_name, context, message) => {
    expect(() => synth(context)).toThrow(message);
  });

  it("refuses another provider's key instead of ignoring it", () => {
    expect(() => synth({ ...PROVIDERS.twilio, snsSenderId: 'ResetCode' })).toThrow(
      /context reset-notifier:snsSenderId is not read with provider twilio/,
    );
    expect(() => synth({ twilioRedaction: 'off', eumMaxPrice: '0.05' })).toThrow(
      /context reset-notifier:twilioRedaction, reset-notifier:eumMaxPrice are not read with provider sns/,
    );
  });

  it('refuses a misspelt key instead of ignoring it', () => {
    expect(() => synth({ smsSpendAlarmUSD: '40' } as Partial<Record<ContextName, string>>)).toThrow(
      /context reset-notifier:smsSpendAlarmUSD is not a setting \(did you mean reset-notifier:smsSpendAlarmUsd\?\)/,
    );
  });
});
