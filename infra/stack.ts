import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { ContextReader } from '../shared/providers/infra.js';
import { PROVIDER_INFRA } from '../shared/providers/infra-registry.js';
import {
  CONTEXT_PREFIX,
  type ContextName,
  type ContextValue,
  contextKeys,
  decodeContext,
  orderedProviders,
  SETTINGS,
} from '../shared/settings.js';
import { retentionDaysOf } from './log-retention.js';
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
 * Refuses a `reset-notifier:` context key that no setting declares: a misspelt key would
 * otherwise leave its setting at the default without a word.
 */
function rejectUnknownContextKeys(stack: Stack): void {
  const known = new Set<string>(Object.values(CONTEXT_KEYS));
  for (const key of Object.keys(stack.node.getAllContext())) {
    if (key.startsWith(CONTEXT_PREFIX) && !known.has(key)) {
      const near = [...known].filter((k) => k.toLowerCase() === key.toLowerCase());
      throw new Error(
        `context ${key} is not a setting${near.length > 0 ? ` (did you mean ${near.join(', ')}?)` : ''}: docs/configuration.md lists every key`,
      );
    }
  }
}

/**
 * The construct's props from CDK context ({@link CONTEXT_KEYS}), for `infra/app.ts`. Every key is
 * parsed by the codec of its entry in the settings table (shared/settings.ts), so a malformed value
 * fails synthesis naming the key; unset keys keep the construct's defaults.
 */
export function notifierPropsFromContext(stack: Stack): ResetNotifierProps {
  rejectUnknownContextKeys(stack);
  const text = (key: ContextName): string | undefined => {
    const value: unknown = stack.node.tryGetContext(CONTEXT_KEYS[key]);
    return value === undefined || value === null || String(value).trim() === '' ? undefined : String(value);
  };
  const value = <K extends ContextName>(key: K): ContextValue<K> | undefined => {
    const raw = text(key);
    return raw === undefined ? undefined : decodeContext(key, raw);
  };
  /** A list key: unset and empty lists alike are undefined. */
  const list = (key: ContextName & ListContextName): string[] | undefined => {
    const items = value(key);
    return items === undefined || items.length === 0 ? undefined : items;
  };
  const get = (key: ContextName) => (value(key) === undefined ? undefined : text(key));
  const required = (key: ContextName) => {
    const raw = get(key);
    if (raw === undefined) throw new Error(`context ${CONTEXT_KEYS[key]} is required for this provider`);
    return raw;
  };

  // `providers` in order (`twilio,eum`), or `provider` alone: the one-element case.
  const kinds = orderedProviders(value('provider'), value('providers'), 'sns', {
    single: CONTEXT_KEYS.provider,
    list: CONTEXT_KEYS.providers,
  });
  // Each provider's own keys, read by its deploy side (shared/providers/<kind>/infra.ts); the keys
  // they read are noted, so a key of a provider that is not listed is refused rather than ignored.
  const read = new Set<ContextName>();
  const reader: ContextReader = {
    stack,
    get: (key) => {
      read.add(key);
      return get(key);
    },
    required: (key) => {
      read.add(key);
      return required(key);
    },
    name: (key) => CONTEXT_KEYS[key],
    value: (key) => {
      read.add(key);
      return value(key);
    },
  };
  const [primary, ...failovers] = kinds;
  const providers: [ProviderSettings, ...ProviderSettings[]] = [
    PROVIDER_INFRA[primary].fromContext(reader),
    ...failovers.map((kind) => PROVIDER_INFRA[kind].fromContext(reader)),
  ];
  const foreign = (Object.keys(CONTEXT_KEYS) as ContextName[]).filter(
    (key) => PROVIDER_KEY.test(key) && !read.has(key) && text(key) !== undefined,
  );
  if (foreign.length > 0) {
    throw new Error(
      `context ${foreign.map((key) => CONTEXT_KEYS[key]).join(', ')} ${foreign.length === 1 ? 'is' : 'are'} not read with ${kinds.length === 1 ? 'provider' : 'providers'} ${kinds.join(',')}: remove ${foreign.length === 1 ? 'it' : 'them'} or set ${CONTEXT_KEYS.providers}`,
    );
  }

  const abuseLimits = defined({
    destinationLimits: get('destinationLimits'),
    countryLimits: get('countryLimits'),
    allowedNumberTypes: list('allowedNumberTypes'),
    allowedDestinationCountries: list('allowedDestinationCountries'),
    resetUrlHosts: list('resetUrlHosts'),
    maxSmsSegments: value('maxSmsSegments'),
  });
  const seconds = (key: ContextName & NumberContextName) => {
    const n = value(key);
    return n === undefined ? undefined : Duration.millis(n * 1000);
  };
  const providerTimeoutMs = value('providerTimeoutMs');
  const timing = defined({
    providerTimeout: providerTimeoutMs === undefined ? undefined : Duration.millis(providerTimeoutMs),
    dispatchMargin: seconds('dispatchMarginSeconds'),
    reconcileSettle: seconds('reconcileSettleSeconds'),
    statusHorizon: seconds('statusHorizonSeconds'),
    statusPoll: seconds('statusPollSeconds'),
    queueSafetyNet: seconds('queueSafetyNetSeconds'),
  });
  const invokers = [...(list('apiInvokerPrincipals') ?? []), ...(list('apiInvokerRoleArns') ?? [])];
  const rate = value('apiThrottleRateLimit');
  const burst = value('apiThrottleBurstLimit');
  const retentionDays = value('evidenceRetentionDays');
  const reconcileMinutes = value('reconcileMinutes');
  const maxExpiryHours = value('maxExpiryHours');
  const logRetentionDays = value('logRetentionDays');
  const unknownAgeMinutes = value('dispatchUnknownAgeAlarmMinutes');
  const topicArn = get('alarmTopicArn');
  const secretArn = get('fingerprintKeySecretArn');
  const encryptionKeyArn = get('fingerprintKeyEncryptionKeyArn');
  const tracing = value('tracing');
  return {
    ...(providers.length === 1 ? { provider: providers[0] } : { providers }),
    ...defined({
      evidenceRetention: retentionDays === undefined ? undefined : Duration.days(retentionDays),
      reconcileSchedule: reconcileMinutes === undefined ? undefined : Duration.minutes(reconcileMinutes),
      maxExpiry: maxExpiryHours === undefined ? undefined : Duration.hours(maxExpiryHours),
      fingerprintKeyParameterName: get('fingerprintKeyParameter'),
      fingerprintKeyEncryptionKey:
        encryptionKeyArn === undefined
          ? undefined
          : Key.fromKeyArn(stack, 'FingerprintKeyEncryptionKey', encryptionKeyArn),
      fingerprintKeySecret:
        secretArn === undefined
          ? undefined
          : Secret.fromSecretCompleteArn(stack, 'FingerprintKeySecret', secretArn),
      fingerprintKeyVersion: value('fingerprintKeyVersion'),
      alarmTopic: topicArn === undefined ? undefined : Topic.fromTopicArn(stack, 'AlarmTopic', topicArn),
      alarmEmail: get('alarmEmail'),
      allowedDestinations: list('allowedDestinations'),
      abuseLimits: Object.keys(abuseLimits).length === 0 ? undefined : abuseLimits,
      timing: Object.keys(timing).length === 0 ? undefined : timing,
      apiInvokerPrincipals: invokers.length === 0 ? undefined : invokers,
      apiThrottle:
        rate === undefined && burst === undefined
          ? undefined
          : {
              rateLimit: rate ?? SETTINGS.apiThrottleRateLimit.aws,
              burstLimit: burst ?? SETTINGS.apiThrottleBurstLimit.aws,
            },
      logRetention:
        logRetentionDays === undefined
          ? undefined
          : retentionDaysOf(logRetentionDays, `context ${CONTEXT_KEYS.logRetentionDays}`),
      reconcilerReservedConcurrency: value('reconcilerReservedConcurrency'),
      senderBatchSize: value('senderBatchSize'),
      senderMaxConcurrency: value('senderMaxConcurrency'),
      smsSpendAlarmUsd: value('smsSpendAlarmUsd'),
      sendsPerHourAlarm: value('sendsPerHourAlarm'),
      dispatchUnknownAgeAlarm:
        unknownAgeMinutes === undefined ? undefined : Duration.minutes(unknownAgeMinutes),
      unknownOutcomeRateAlarmPercent: value('unknownOutcomeRateAlarmPercent'),
      metricsNamespace: get('metricsNamespace'),
      tracing: tracing === undefined ? undefined : tracing === 'on',
    }),
  };
}

/** The keys that belong to one provider (`twilioFrom`, `snsSenderId`, `eumMaxPrice`, `simulatorBaseUrl`). */
const PROVIDER_KEY = /^(twilio|sns|eum|simulator)[A-Z]/;

/** The context keys whose codec yields a list / a number. */
type ListContextName = { [C in ContextName]: ContextValue<C> extends string[] ? C : never }[ContextName];
type NumberContextName = { [C in ContextName]: ContextValue<C> extends number ? C : never }[ContextName];

/** `record` without its undefined entries (the props are `exactOptionalPropertyTypes`). */
function defined<T extends Record<string, unknown>>(
  record: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
