import { Duration, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { beforeAll, describe, expect, it } from 'vitest';
import { ResetNotifier } from '../../infra/reset-notifier.js';
import type { ResetNotifierProps, TwilioProviderSettings } from '../../infra/settings.js';
import { CONTEXT_KEYS, notifierPropsFromContext } from '../../infra/stack.js';
import { loadConfig } from '../../shared/config.js';
import {
  EXAMPLE_ALLOW_LISTS,
  functionByDescription,
  SYNTH_TIMEOUT_MS,
  stubCode,
  synthTemplate,
  testApp,
} from './support.js';

const TOKEN_ARN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:tok-AbCdEf';

/** The environment of the sender (the function that calls the SMS provider) in a synthesized template. */
function senderEnv(template: Template): Record<string, unknown> {
  return (
    functionByDescription(template, 'calls the SMS provider once').properties.Environment as {
      Variables: Record<string, unknown>;
    }
  ).Variables;
}

/** The sender's environment in a stack on Twilio (account AC1, a number, the token) plus `settings`. */
function twilioSenderEnv(settings: Partial<TwilioProviderSettings> = {}): Record<string, unknown> {
  const { template } = synthTemplate((stack) => ({
    provider: {
      kind: 'twilio',
      accountSid: 'AC1',
      from: '+15005550006',
      authTokenSecret: Secret.fromSecretCompleteArn(stack, 'Tok', TOKEN_ARN),
      ...settings,
    },
  }));
  return senderEnv(template);
}

/** `env` as shared/config.ts reads it in AWS, each deploy-time token (table name, queue URL) stubbed by name. */
function withTokensStubbed(env: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : `deploy-time:${name}`,
    ]),
  );
}

describe('function environment', () => {
  let env: Record<string, unknown>;
  beforeAll(() => {
    const { template } = synthTemplate({
      evidenceRetention: Duration.days(30),
      maxExpiry: Duration.hours(12),
      allowedDestinations: ['+1', '+44'],
      provider: { kind: 'sns', senderId: 'ResetCode' },
      timing: { providerTimeout: Duration.seconds(4), reconcileSettle: Duration.minutes(3) },
    });
    env = senderEnv(template);
  }, SYNTH_TIMEOUT_MS);

  it('is read by shared/config.ts as the props say (deploy-time values stubbed)', () => {
    // Prepare: tokens (table name, queue URL, key ARN) are resolved by CloudFormation.
    const literal = withTokensStubbed(env);

    // Act
    const config = loadConfig(literal);

    // Assess
    expect(config).toMatchObject({
      provider: 'sns',
      cipher: 'kms',
      kmsKeyId: 'deploy-time:KMS_KEY_ID',
      tableName: 'deploy-time:TABLE_NAME',
      dispatchQueueUrl: 'deploy-time:DISPATCH_QUEUE_URL',
      fingerprintKeySecretArn: 'deploy-time:FINGERPRINT_KEY_SECRET_ARN',
      evidenceRetentionDays: 30,
      maxExpiryHours: 12,
    });
    expect(config.policy).toMatchObject({ providerTimeoutMs: 4_000, reconcileSettleMs: 180_000 });
  });

  it('carries the SNS and destination settings the shared config does not know', () => {
    expect(env).toMatchObject({ ALLOWED_DESTINATION_PREFIXES: '+1,+44', SNS_SENDER_ID: 'ResetCode' });
    expect(env.SNS_DELIVERY_LOG_GROUPS).toBeDefined();
  });
});

describe('Twilio absence settings reach the functions (the probe works in AWS, not only locally)', () => {
  it(
    'maps messaging service, redaction and probe number into the environment shared/config.ts reads',
    () => {
      // Prepare
      const env = twilioSenderEnv({
        messagingServiceSid: 'MG1',
        redaction: 'off',
        absenceProbeTo: '+15005550009',
      });

      // Act
      const config = loadConfig(withTokensStubbed(env));

      // Assess
      expect(env).toMatchObject({
        PROVIDER_REDACTION: 'off',
        PROVIDER_MESSAGING_SERVICE_SID: 'MG1',
        PROVIDER_ABSENCE_PROBE_TO: '+15005550009',
      });
      expect(config).toMatchObject({
        providerMessagingServiceSid: 'MG1',
        providerRedaction: 'off',
        providerAbsenceProbeTo: '+15005550009',
      });
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'declares redaction on when nothing is said',
    () => {
      const env = twilioSenderEnv();
      expect(env.PROVIDER_REDACTION).toBe('on');
      expect(env.PROVIDER_ABSENCE_PROBE_TO).toBeUndefined();
    },
    SYNTH_TIMEOUT_MS,
  );

  it('reads them from context and refuses a probe without a messaging service or with redaction on', () => {
    const context = {
      [CONTEXT_KEYS.provider]: 'twilio',
      [CONTEXT_KEYS.twilioAccountSid]: 'AC1',
      [CONTEXT_KEYS.twilioFrom]: '+15005550006',
      [CONTEXT_KEYS.twilioAuthTokenSecretArn]: TOKEN_ARN,
      [CONTEXT_KEYS.twilioRedaction]: 'off',
      [CONTEXT_KEYS.twilioAbsenceProbeTo]: '+15005550009',
    };
    const stack = new Stack(testApp({ context }), 'S');
    const props = notifierPropsFromContext(stack);
    expect(props.provider).toMatchObject({ redaction: 'off', absenceProbeTo: '+15005550009' });
    expect(
      () => new ResetNotifier(stack, 'N', { code: stubCode(), abuseLimits: EXAMPLE_ALLOW_LISTS, ...props }),
    ).toThrow(/absenceProbeTo needs messagingServiceSid and redaction off/);
  });
});

describe('props validation', () => {
  const build = (props: ResetNotifierProps) => () =>
    new ResetNotifier(new Stack(testApp(), 'S'), 'N', {
      code: stubCode(),
      abuseLimits: EXAMPLE_ALLOW_LISTS,
      ...props,
    });

  it.each<[string, ResetNotifierProps, RegExp]>([
    ['fractional retention', { evidenceRetention: Duration.hours(36) }, /evidenceRetention/],
    ['sub-minute schedule', { reconcileSchedule: Duration.seconds(30) }, /reconcileSchedule/],
    ['destination that is not an E.164 prefix', { allowedDestinations: ['44'] }, /allowedDestinations/],
    [
      'provider timeout too long for the sender',
      { timing: { providerTimeout: Duration.seconds(20) } },
      /providerTimeout/,
    ],
    ['batch above the SQS maximum', { senderBatchSize: 11 }, /senderBatchSize/],
    [
      'simulator without URL',
      { provider: { kind: 'simulator', baseUrl: 'sim', authTokenSecret: {} as never } },
      /simulator\) needs an http/,
    ],
    [
      'an invoker that is a user, not a role',
      { apiInvokerPrincipals: ['arn:aws:iam::111111111111:user/x'] },
      /apiInvokerPrincipals/,
    ],
    ['a malformed alarm email', { alarmEmail: 'ops@' }, /alarmEmail "ops@" is not an email address/],
    ['a non-positive spend alarm', { smsSpendAlarmUsd: 0 }, /smsSpendAlarmUsd/],
    [
      'an encryption key without its parameter',
      { fingerprintKeyEncryptionKey: {} as never },
      /needs fingerprintKeyParameterName/,
    ],
  ])('rejects %s', (_name, props, message) => {
    expect(build(props)).toThrow(message);
  });

  it('accepts the defaults', () => {
    expect(build({})).not.toThrow();
  });
});

describe('configuration from CDK context (cdk deploy -c ...)', () => {
  const propsFrom = (context: Record<string, string>) => {
    const stack = new Stack(testApp({ context }), 'S');
    return notifierPropsFromContext(stack);
  };

  it('defaults to SNS with the construct defaults', () => {
    expect(propsFrom({})).toEqual({ provider: { kind: 'sns' } });
  });

  it('reads twilio settings, retention, schedule and allowed destinations', () => {
    // Act
    const props = propsFrom({
      [CONTEXT_KEYS.provider]: 'twilio',
      [CONTEXT_KEYS.twilioAccountSid]: 'AC1',
      [CONTEXT_KEYS.twilioFrom]: '+15005550006',
      [CONTEXT_KEYS.twilioAuthTokenSecretArn]:
        'arn:aws:secretsmanager:eu-west-1:111111111111:secret:tok-AbCdEf',
      [CONTEXT_KEYS.evidenceRetentionDays]: '90',
      [CONTEXT_KEYS.reconcileMinutes]: '2',
      [CONTEXT_KEYS.allowedDestinations]: '+44, +33',
    });

    // Assess
    expect(props.provider).toMatchObject({ kind: 'twilio', accountSid: 'AC1', from: '+15005550006' });
    expect(props.provider?.kind === 'twilio' && props.provider.authTokenSecret.secretArn).toBe(
      'arn:aws:secretsmanager:eu-west-1:111111111111:secret:tok-AbCdEf',
    );
    expect(props.evidenceRetention?.toDays()).toBe(90);
    expect(props.reconcileSchedule?.toMinutes()).toBe(2);
    expect(props.allowedDestinations).toEqual(['+44', '+33']);
  });

  it('reads invoker principals (also under the older apiInvokerRoleArns), alarm email, secret and reserved concurrency', () => {
    // Act
    const props = propsFrom({
      [CONTEXT_KEYS.apiInvokerPrincipals]: '111111111111',
      [CONTEXT_KEYS.apiInvokerRoleArns]: 'arn:aws:iam::222222222222:role/auth',
      [CONTEXT_KEYS.alarmEmail]: 'ops@example.com',
      [CONTEXT_KEYS.fingerprintKeySecretArn]:
        'arn:aws:secretsmanager:eu-west-1:111111111111:secret:fp-AbCdEf',
      [CONTEXT_KEYS.reconcilerReservedConcurrency]: '1',
    });

    // Assess: role ARNs become trusted principals of the invoker role, never policies on a role name.
    expect(props.apiInvokerPrincipals).toEqual(['111111111111', 'arn:aws:iam::222222222222:role/auth']);
    expect(props.apiInvokers).toBeUndefined();
    expect(props.alarmEmail).toBe('ops@example.com');
    expect(props.fingerprintKeySecret?.secretArn).toBe(
      'arn:aws:secretsmanager:eu-west-1:111111111111:secret:fp-AbCdEf',
    );
    expect(props.reconcilerReservedConcurrency).toBe(1);
  });

  it('names the missing context key', () => {
    expect(() => propsFrom({ [CONTEXT_KEYS.provider]: 'twilio' })).toThrow(CONTEXT_KEYS.twilioAccountSid);
    expect(() => propsFrom({ [CONTEXT_KEYS.provider]: 'pigeon' })).toThrow(
      /context reset-notifier:provider must be one of simulator, twilio, sns, eum, got "pigeon"/,
    );
  });
});
