import { describe, expect, it } from 'vitest';
import {
  isConfigurationSet,
  isEmail,
  isOriginationIdentity,
  isSecretArn,
  isTopicArn,
  ORIGINATION_IDENTITY_SHAPE,
  validated,
} from '../../infra/external-resources.js';

describe('synth-time checks of settings that name resources outside the stack', () => {
  it.each<[string, (v: string) => boolean, string, boolean]>([
    [
      'complete secret ARN',
      isSecretArn,
      'arn:aws:secretsmanager:eu-west-1:111111111111:secret:tok-AbCdEf',
      true,
    ],
    [
      'partial secret ARN (no suffix)',
      isSecretArn,
      'arn:aws:secretsmanager:eu-west-1:111111111111:secret:tok',
      false,
    ],
    ['secret name', isSecretArn, 'reset-notifier/twilio-auth-token', false],
    ['topic ARN', isTopicArn, 'arn:aws:sns:eu-west-1:111111111111:ops-alarms', true],
    ['GovCloud topic ARN', isTopicArn, 'arn:aws-us-gov:sns:us-gov-west-1:111111111111:ops', true],
    ['queue ARN as topic', isTopicArn, 'arn:aws:sqs:eu-west-1:111111111111:ops', false],
    ['E.164 originator', isOriginationIdentity, '+18445550100', true],
    ['phone number id', isOriginationIdentity, 'phone-0123456789abcdef0123456789abcdef', true],
    [
      'pool ARN',
      isOriginationIdentity,
      'arn:aws:sms-voice:eu-west-1:111111111111:pool/pool-0123456789abcdef0123456789abcdef',
      true,
    ],
    ['sender id', isOriginationIdentity, 'MyBrand', true],
    ['sender id too long', isOriginationIdentity, 'MyBrandIsTooLong', false],
    ['configuration set name', isConfigurationSet, 'reset-notifier-events', true],
    ['configuration set with a space', isConfigurationSet, 'reset notifier', false],
    ['email', isEmail, 'ops@example.com', true],
    ['not an email', isEmail, 'ops@example', false],
  ])('%s', (_name, check, value, expected) => {
    expect(check(value)).toBe(expected);
  });

  it('names the setting and the expected shape when a value is rejected', () => {
    expect(() =>
      validated(
        'provider.originationIdentity',
        'not valid!',
        isOriginationIdentity,
        ORIGINATION_IDENTITY_SHAPE,
      ),
    ).toThrow(
      'ResetNotifier: provider.originationIdentity "not valid!" is not an E.164 number, phone-<32 hex>, pool-<32 hex>, a sender id (1-11 letters/digits) or an sms-voice ARN of one',
    );
  });
});
