import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { PROVIDER_INFRA, providerKindList } from '../shared/providers/infra-registry.js';
import { contextKeys } from '../shared/settings.js';
import { ResetNotifier } from './reset-notifier.js';
import type { ProviderSettings, ResetNotifierProps } from './settings.js';

/** Props of {@link ResetNotifierStack}. */
export interface ResetNotifierStackProps extends StackProps {
  /** The construct's props, or a function of the stack (to import resources into it). @default {} */
  readonly notifier?: ResetNotifierProps | ((stack: Stack) => ResetNotifierProps);
}

/**
 * The deployable stack: one {@link ResetNotifier} and its outputs. Environment-agnostic (no
 * account or region is resolved at synthesis), so `npm run synth` needs no credentials.
 */
export class ResetNotifierStack extends Stack {
  readonly notifier: ResetNotifier;

  constructor(scope: Construct, id: string, props: ResetNotifierStackProps = {}) {
    const { notifier: _notifier, ...stackProps } = props;
    super(scope, id, { description: 'reset-notifier: password-reset SMS, sent exactly once', ...stackProps });
    const notifierProps =
      typeof props.notifier === 'function' ? props.notifier(this) : (props.notifier ?? {});
    this.notifier = new ResetNotifier(this, 'ResetNotifier', notifierProps);
    const { api, storage, pipeline, observability } = this.notifier;
    new CfnOutput(this, 'ApiUrl', {
      value: api.url,
      description: 'Base URL of the HTTP API (IAM auth, SigV4)',
    });
    new CfnOutput(this, 'TableName', { value: storage.table.tableName });
    new CfnOutput(this, 'DispatchQueueUrl', { value: pipeline.dispatchQueue.queueUrl });
    new CfnOutput(this, 'DispatchDeadLetterQueueUrl', { value: pipeline.dispatchDeadLetterQueue.queueUrl });
    new CfnOutput(this, 'FieldKeyArn', { value: storage.fieldKey.keyArn });
    new CfnOutput(this, 'DashboardName', { value: observability.dashboard.dashboardName });
    new CfnOutput(this, 'AlarmTopicArn', { value: observability.alarmTopic.topicArn });
    if (api.invokerRole !== undefined) {
      new CfnOutput(this, 'ApiInvokerRoleArn', {
        value: api.invokerRole.roleArn,
        description:
          'Role callers in other accounts assume to call the API (execute-api:Invoke on its routes)',
      });
    }
    if (storage.fingerprintKeySecret !== undefined) {
      new CfnOutput(this, 'FingerprintKeySecretArn', { value: storage.fingerprintKeySecret.secretArn });
    }
  }
}

/**
 * Context keys read by `infra/app.ts` (`cdk deploy -c reset-notifier:provider=twilio ...`), one per
 * setting of the table that carries a context key (shared/settings.ts).
 */
export const CONTEXT_KEYS = contextKeys();

/**
 * The construct's props from CDK context ({@link CONTEXT_KEYS}), for `infra/app.ts`. Unset keys
 * keep the construct's defaults (SNS, 400 days, every minute, no destination restriction).
 */
export function notifierPropsFromContext(stack: Stack): ResetNotifierProps {
  const get = (key: string): string | undefined => {
    const value: unknown = stack.node.tryGetContext(key);
    return value === undefined || value === null || value === '' ? undefined : String(value);
  };
  const list = (key: string) =>
    (get(key) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const required = (key: string) => {
    const value = get(key);
    if (value === undefined) throw new Error(`context ${key} is required for this provider`);
    return value;
  };
  const number = (key: string) => {
    const value = get(key);
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) throw new Error(`context ${key} must be a number, got "${value}"`);
    return parsed;
  };

  const kind = get(CONTEXT_KEYS.provider) ?? 'sns';
  if (!Object.hasOwn(PROVIDER_INFRA, kind)) {
    throw new Error(`context ${CONTEXT_KEYS.provider} must be ${providerKindList()}, got "${kind}"`);
  }
  // The provider's own keys, read by its deploy side (shared/providers/<kind>/infra.ts).
  const provider: ProviderSettings = PROVIDER_INFRA[kind as keyof typeof PROVIDER_INFRA].fromContext({
    stack,
    get: (key) => get(CONTEXT_KEYS[key]),
    required: (key) => required(CONTEXT_KEYS[key]),
    name: (key) => CONTEXT_KEYS[key],
  });

  const retentionDays = number(CONTEXT_KEYS.evidenceRetentionDays);
  const reconcileMinutes = number(CONTEXT_KEYS.reconcileMinutes);
  const parameter = get(CONTEXT_KEYS.fingerprintKeyParameter);
  const topicArn = get(CONTEXT_KEYS.alarmTopicArn);
  const allowed = list(CONTEXT_KEYS.allowedDestinations);
  const destinationLimits = get(CONTEXT_KEYS.destinationLimits);
  const countryLimits = get(CONTEXT_KEYS.countryLimits);
  const numberTypes = list(CONTEXT_KEYS.allowedNumberTypes);
  const countries = list(CONTEXT_KEYS.allowedDestinationCountries);
  const hosts = list(CONTEXT_KEYS.resetUrlHosts);
  const segments = number(CONTEXT_KEYS.maxSmsSegments);
  const abuseLimits = {
    ...(destinationLimits === undefined ? {} : { destinationLimits }),
    ...(countryLimits === undefined ? {} : { countryLimits }),
    ...(numberTypes.length === 0 ? {} : { allowedNumberTypes: numberTypes }),
    ...(countries.length === 0 ? {} : { allowedDestinationCountries: countries }),
    ...(hosts.length === 0 ? {} : { resetUrlHosts: hosts }),
    ...(segments === undefined ? {} : { maxSmsSegments: segments }),
  };
  const invokers = [...list(CONTEXT_KEYS.apiInvokerPrincipals), ...list(CONTEXT_KEYS.apiInvokerRoleArns)];
  const secretArn = get(CONTEXT_KEYS.fingerprintKeySecretArn);
  const keyVersion = number(CONTEXT_KEYS.fingerprintKeyVersion);
  const alarmEmail = get(CONTEXT_KEYS.alarmEmail);
  const reserved = number(CONTEXT_KEYS.reconcilerReservedConcurrency);
  const sendsPerHourAlarm = number(CONTEXT_KEYS.sendsPerHourAlarm);
  return {
    provider,
    ...(retentionDays === undefined ? {} : { evidenceRetention: Duration.days(retentionDays) }),
    ...(reconcileMinutes === undefined ? {} : { reconcileSchedule: Duration.minutes(reconcileMinutes) }),
    ...(parameter === undefined ? {} : { fingerprintKeyParameterName: parameter }),
    ...(topicArn === undefined ? {} : { alarmTopic: Topic.fromTopicArn(stack, 'AlarmTopic', topicArn) }),
    ...(allowed.length === 0 ? {} : { allowedDestinations: allowed }),
    ...(Object.keys(abuseLimits).length === 0 ? {} : { abuseLimits }),
    ...(invokers.length === 0 ? {} : { apiInvokerPrincipals: invokers }),
    ...(secretArn === undefined
      ? {}
      : {
          fingerprintKeySecret: Secret.fromSecretCompleteArn(stack, 'FingerprintKeySecret', secretArn),
        }),
    ...(keyVersion === undefined ? {} : { fingerprintKeyVersion: keyVersion }),
    ...(alarmEmail === undefined ? {} : { alarmEmail }),
    ...(reserved === undefined ? {} : { reconcilerReservedConcurrency: reserved }),
    ...(sendsPerHourAlarm === undefined ? {} : { sendsPerHourAlarm }),
  };
}
