import { Token } from 'aws-cdk-lib';
import { providerInfra } from '../shared/providers/infra-registry.js';
import type { FingerprintKeySource, ResetNotifierProps } from './settings.js';

/**
 * Checks, at synth, of settings that name resources outside the stack. CloudFormation would
 * accept a malformed ARN and the functions would fail at their first call; these fail `cdk synth`
 * with the setting's name and the expected shape instead. They check form only: whether the
 * resource exists is for `npm run deploy:check` (it needs credentials).
 */

/** A partition prefix: `arn:aws:`, `arn:aws-cn:`, `arn:aws-us-gov:`. */
const ARN = 'arn:aws(?:-[a-z]+)*';
const REGION = '[a-z]{2}(?:-[a-z]+)+-\\d';
const ACCOUNT = '\\d{12}';

/** The shape of a complete Secrets Manager secret ARN (with the 6-character suffix). */
export const SECRET_ARN_SHAPE = 'arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>';
/** A complete Secrets Manager secret ARN (IAM grants need the suffix; a partial ARN matches nothing). */
export const isSecretArn = (value: string): boolean =>
  new RegExp(`^${ARN}:secretsmanager:${REGION}:${ACCOUNT}:secret:[\\w/+=.@-]+-[A-Za-z0-9]{6}$`).test(value);

export const TOPIC_ARN_SHAPE = 'arn:aws:sns:<region>:<account>:<topic name>';
/** An SNS topic ARN. */
export const isTopicArn = (value: string): boolean =>
  new RegExp(`^${ARN}:sns:${REGION}:${ACCOUNT}:[\\w-]{1,256}(?:\\.fifo)?$`).test(value);

export const ORIGINATION_IDENTITY_SHAPE =
  'an E.164 number, phone-<32 hex>, pool-<32 hex>, a sender id (1-11 letters/digits) or an sms-voice ARN of one';
/**
 * An AWS End User Messaging origination identity as `SendTextMessage` accepts it: a phone number,
 * a phone number or pool id, a sender id, or the ARN of one of those.
 */
export const isOriginationIdentity = (value: string): boolean =>
  /^\+[1-9]\d{6,14}$/.test(value) ||
  /^(?:phone|pool)-[0-9a-f]{32}$/.test(value) ||
  /^[A-Za-z0-9-]{1,11}$/.test(value) ||
  new RegExp(`^${ARN}:sms-voice:${REGION}:${ACCOUNT}:(?:phone-number|pool|sender-id)/[\\w+.:-]{1,128}$`).test(
    value,
  );

export const CONFIGURATION_SET_SHAPE =
  'a name of 1-64 letters, digits, _ or -, or an sms-voice configuration-set ARN';
/** An AWS End User Messaging configuration set name or ARN. */
export const isConfigurationSet = (value: string): boolean =>
  /^[A-Za-z0-9_-]{1,64}$/.test(value) ||
  new RegExp(`^${ARN}:sms-voice:${REGION}:${ACCOUNT}:configuration-set/[A-Za-z0-9_-]{1,64}$`).test(value);

export const EMAIL_SHAPE = 'an email address like ops@example.com';
/** Good enough for an SNS email subscription (SNS sends a confirmation mail). */
export const isEmail = (value: string): boolean => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value);

/** Returns `value` when `check` accepts it; otherwise throws naming the setting and the expected shape. */
export function validated(
  setting: string,
  value: string,
  check: (v: string) => boolean,
  shape: string,
): string {
  if (!check(value)) throw new Error(`ResetNotifier: ${setting} "${value}" is not ${shape}`);
  return value;
}

/** Settings that name resources outside the stack, checked for form (literal values only). */
export function validateExternalResources(props: ResetNotifierProps, fail: (message: string) => never): void {
  const check = (setting: string, value: string | undefined, ok: (v: string) => boolean, shape: string) => {
    if (value === undefined || Token.isUnresolved(value)) return;
    try {
      validated(setting, value, ok, shape);
    } catch (error) {
      fail((error as Error).message.replace(/^ResetNotifier: /, ''));
    }
  };
  for (const provider of [
    ...(props.provider === undefined ? [] : [props.provider]),
    ...(props.providers ?? []),
  ]) {
    providerInfra(provider).checkExternal?.(provider, check);
  }
  check('fingerprintKeySecret', props.fingerprintKeySecret?.secretArn, isSecretArn, SECRET_ARN_SHAPE);
  check('alarmTopic', props.alarmTopic?.topicArn, isTopicArn, TOPIC_ARN_SHAPE);
  check('alarmEmail', props.alarmEmail, isEmail, EMAIL_SHAPE);
  if (props.alarmEmail !== undefined && props.alarmTopic !== undefined) {
    fail(
      'alarmEmail subscribes to the topic the stack creates; with alarmTopic given, subscribe to that topic yourself',
    );
  }
}

/** A 12-digit AWS account id. */
export const isAccountId = (value: string): boolean => /^\d{12}$/.test(value);
/** An IAM role ARN (any partition, any path). */
export const isRoleArn = (value: string): boolean =>
  /^arn:aws(-[a-z]+)*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/.test(value);

/** Where the fingerprint key comes from, from the props (one of parameter or secret, or generated). */
export function fingerprintKeySource(
  props: ResetNotifierProps,
  fail: (message: string) => never,
): FingerprintKeySource {
  const name = props.fingerprintKeyParameterName;
  if (name !== undefined && props.fingerprintKeySecret !== undefined) {
    fail('set fingerprintKeyParameterName or fingerprintKeySecret, not both');
  }
  if (props.fingerprintKeySecret !== undefined) return { kind: 'secret', secret: props.fingerprintKeySecret };
  if (name === undefined) {
    if (props.fingerprintKeyEncryptionKey !== undefined) {
      fail('fingerprintKeyEncryptionKey needs fingerprintKeyParameterName (it is the key of that parameter)');
    }
    return { kind: 'generated' };
  }
  if (!/^\/?[A-Za-z0-9_.\-/]{1,2047}$/.test(name)) {
    fail(`fingerprintKeyParameterName "${name}" is not an SSM parameter name (letters, digits, _ . - /)`);
  }
  return {
    kind: 'parameter',
    name,
    ...(props.fingerprintKeyEncryptionKey === undefined
      ? {}
      : { encryptionKey: props.fingerprintKeyEncryptionKey }),
  };
}
