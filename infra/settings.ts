import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Stack } from 'aws-cdk-lib';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { parseCountryLimits, parseDestinationLimits } from '../shared/domain/budgets.js';
import { parseHosts } from '../shared/domain/sms-body.js';
import { parseCountries, parseNumberTypes } from '../shared/http/destination.js';
import {
  PROVIDER_INFRA,
  type ProviderSettings,
  providerInfra,
  providerKindList,
} from '../shared/providers/infra-registry.js';
import { CONTEXT_PREFIX, SETTINGS, type Setting, settingsEnv } from '../shared/settings.js';
import {
  fingerprintKeySource,
  isAccountId,
  isRoleArn,
  validateExternalResources,
} from './external-resources.js';

/**
 * Which SMS provider the functions use (`PROVIDER`): each kind's props are declared in its folder
 * (`shared/providers/<kind>/infra.ts`) and listed in `shared/providers/infra-registry.ts`.
 */
export type {
  EumProviderSettings,
  ProviderSettings,
  SimulatorProviderSettings,
  SnsProviderSettings,
  TwilioProviderSettings,
} from '../shared/providers/infra-registry.js';

/** Timing settings handed to the functions (docs/design.md#promise and docs/design.md#local-stack). */
export interface TimingSettings {
  /** No provider call starts within this margin of `expires_at`. @default 5 seconds */
  readonly dispatchMargin?: Duration;
  /** Upper bound of one provider call. @default 5 seconds */
  readonly providerTimeout?: Duration;
  /** A lookup may conclude "absent" only this long after the unknown outcome began. @default 2 minutes */
  readonly reconcileSettle?: Duration;
  /** How long `sent` is polled for a final status. @default 1 hour */
  readonly statusHorizon?: Duration;
  /** Interval between status polls of a `sent` item. @default 1 minute */
  readonly statusPoll?: Duration;
  /** When the reconciler re-drives an `accepted` command the queue did not deliver. @default 5 minutes */
  readonly queueSafetyNet?: Duration;
}

/**
 * Abuse limits of the API (docs/design.md#abuse-limits), in the spelling of their environment variables,
 * which the functions receive as is.
 */
export interface AbuseLimitSettings {
  /** `DESTINATION_LIMITS`: budgets per destination, `count/window` (`s`, `m`, `h`, `d`), or `off`. @default '3/15m,10/24h' */
  readonly destinationLimits?: string;
  /** `COUNTRY_LIMITS`: `CC:count/window` per country, or `count/window` for every country. @default - off */
  readonly countryLimits?: string;
  /** `ALLOWED_NUMBER_TYPES`: libphonenumber types sent to, or `['ANY']`. @default ['MOBILE', 'FIXED_LINE_OR_MOBILE'] */
  readonly allowedNumberTypes?: readonly string[];
  /**
   * `ALLOWED_DESTINATION_COUNTRIES`: ISO 3166 alpha-2 region codes. Required: a deployment that
   * sends anywhere is an SMS-pumping relay, so synthesis fails without it.
   */
  readonly allowedDestinationCountries?: readonly string[];
  /**
   * `RESET_URL_HOSTS`: the hosts a `reset_url` may point at. Required: a deployment that links
   * anywhere is a phishing relay, so synthesis fails without it.
   */
  readonly resetUrlHosts?: readonly string[];
  /** `MAX_SMS_SEGMENTS`: most segments a rendered body may take. @default 3 */
  readonly maxSmsSegments?: number;
}

/** Where the Lambda sources live. Defaults to this package's `functions/` directory. */
export interface FunctionCodeSettings {
  /** Directory with `api.ts`, `forwarder.ts`, `sender.ts`, `reconciler.ts`, each exporting `handler`. */
  readonly entryDirectory?: string;
  /** The package root esbuild bundles from. */
  readonly projectRoot?: string;
  /** That package's lock file. @default `<projectRoot>/package-lock.json` */
  readonly depsLockFilePath?: string;
}

/** Props of the reusable {@link ResetNotifier} construct. Every prop is optional. */
export interface ResetNotifierProps {
  /** The one provider: the one-element case of {@link providers} (set one of the two). @default { kind: 'sns' } */
  readonly provider?: ProviderSettings;
  /**
   * The providers in order (`PROVIDERS`): the first is the primary, each next one is failed over
   * to when the ones before it provably did not send (docs/providers/failover.md). Every listed
   * provider's deploy side applies (environment, grants, resources, receipts path); each kind at
   * most once. @default [provider]
   */
  readonly providers?: readonly ProviderSettings[];
  /** How long evidence outlives the token (`ttl = expires_at + retention`), whole days. @default 400 days */
  readonly evidenceRetention?: Duration;
  /** How often the reconciler runs (whole minutes, at least 1). @default 1 minute */
  readonly reconcileSchedule?: Duration;
  /**
   * E.164 prefixes a destination must start with (`+1`, `+44`, or a full test number);
   * passed as `ALLOWED_DESTINATION_PREFIXES`. @default - every valid E.164 number
   */
  readonly allowedDestinations?: readonly string[];
  /** The latest `expires_at` accepted, from now. @default 24 hours */
  readonly maxExpiry?: Duration;
  /** Destination budgets, number types, countries and body rules. @default - the defaults of each setting */
  readonly abuseLimits?: AbuseLimitSettings;
  readonly timing?: TimingSettings;
  /**
   * An existing SSM SecureString parameter holding the fingerprint key (at least 32 bytes, hex or
   * base64). When neither this nor `fingerprintKeySecret` is set, the stack creates the key
   * itself (a generated Secrets Manager secret under the field key).
   * @default - a generated secret
   */
  readonly fingerprintKeyParameterName?: string;
  /** The KMS key of that parameter, when it is not the AWS managed `aws/ssm` key. @default - aws/ssm */
  readonly fingerprintKeyEncryptionKey?: IKey;
  /**
   * An existing Secrets Manager secret whose `SecretString` is the fingerprint key (hex or base64,
   * at least 32 bytes). @default - a generated secret
   */
  readonly fingerprintKeySecret?: ISecret;
  /**
   * The version of the fingerprint key that fingerprints new commands, when the key value holds a
   * ring `<version>:<key>,...` (docs/security.md#fingerprint-key-rotation). @default 1
   */
  readonly fingerprintKeyVersion?: number;
  /** Retention of the functions' and the API's log groups. @default THREE_MONTHS */
  readonly logRetention?: RetentionDays;
  /** Stage throttling of the HTTP API. @default { rateLimit: 50, burstLimit: 100 } */
  readonly apiThrottle?: { readonly rateLimit: number; readonly burstLimit: number };
  /**
   * Principals in this account (e.g. the auth service's function) granted `execute-api:Invoke`
   * on every route, directly on their own policy. @default - none
   */
  readonly apiInvokers?: readonly IGrantable[];
  /**
   * Callers in other accounts: 12-digit account ids or IAM role ARNs. The stack creates one
   * invoker role that trusts exactly these and may invoke exactly the API's routes; callers
   * assume it (stack output `ApiInvokerRoleArn`). HTTP APIs have no resource policy, so this is
   * how another account gets in. A role ARN must exist at deploy time (IAM validates principals).
   * @default - no invoker role
   */
  readonly apiInvokerPrincipals?: readonly string[];
  /** Records per sender invocation (handled in parallel). @default 10 */
  readonly senderBatchSize?: number;
  /** At most this many concurrent sender invocations (bounds the provider's request rate). @default 10 */
  readonly senderMaxConcurrency?: number;
  /**
   * Reserved concurrency of the reconciler (opt-in). Single-pass safety does not depend on it:
   * every write is conditional on the item's state and version, so overlapping passes lose
   * races harmlessly. Reserving concurrency takes it from the account's unreserved pool, and
   * Lambda keeps at least 100 unreserved (an account whose quota is 100 or less, as a new
   * account's may be, can reserve nothing), so it is off by default.
   * @default - none reserved
   */
  readonly reconcilerReservedConcurrency?: number;
  /** Alarms (and their return to OK) notify this topic. @default - a topic created by the stack */
  readonly alarmTopic?: ITopic;
  /** An email address subscribed to the created alarm topic (SNS mails a confirmation link first). @default - none */
  readonly alarmEmail?: string;
  /** Age of the oldest `dispatch_unknown` that raises an alarm. @default 15 minutes */
  readonly dispatchUnknownAgeAlarm?: Duration;
  /** Unknown provider outcomes, in percent of sends over 5 minutes, that raise an alarm. @default 10 */
  readonly unknownOutcomeRateAlarmPercent?: number;
  /**
   * Month-to-date SNS SMS spend (USD, `SMSMonthToDateSpentUSD`) that raises an alarm; set it a
   * little below the account's SMS spend limit (`npm run deploy:check` prints the limit).
   * @default 0.8 (80 % of the $1 limit of a new account)
   */
  readonly smsSpendAlarmUsd?: number;
  /**
   * Provider sends in one hour (the service's own `ProviderSends`) that raise an alarm: the spend
   * alarm of a provider that publishes no spend metric in CloudWatch (Twilio, the simulator).
   * @default 500
   */
  readonly sendsPerHourAlarm?: number;
  /** CloudWatch namespace of the service's log-derived metrics. @default `ResetNotifier/<stack name>` */
  readonly metricsNamespace?: string;
  /**
   * X-Ray active tracing of every function. Off by default: at low traffic X-Ray's sampling
   * (the first request each second, then 5 %) traces nearly every invocation, which costs more
   * than the service itself (issue 22). @default false
   */
  readonly tracing?: boolean;
  readonly code?: FunctionCodeSettings;
}

/** Where the fingerprint key comes from: given (parameter or secret) or generated by the stack. */
export type FingerprintKeySource =
  | { readonly kind: 'parameter'; readonly name: string; readonly encryptionKey?: IKey }
  | { readonly kind: 'secret'; readonly secret: ISecret }
  | { readonly kind: 'generated' };

/** Time between the passes of one scheduled reconciler invocation (`RECONCILE_PASS_SPACING_SECONDS`' default). */
export const RECONCILE_PASS_SPACING = Duration.seconds(SETTINGS.reconcilePassSpacing.local);
/** The longest run of passes one invocation makes (Lambda's 15-minute limit, with room to spare). */
export const RECONCILE_MAX_RUN = Duration.minutes(10);

/** The props with every default applied and checked. */
export interface ResolvedSettings {
  /** Every provider, in order (`PROVIDERS`), checked: at least one, each kind once. */
  readonly providers: readonly [ProviderSettings, ...ProviderSettings[]];
  /** The primary: the first of {@link providers}. What is per provider must go through `providers`. */
  readonly provider: ProviderSettings;
  readonly evidenceRetentionDays: number;
  readonly reconcileSchedule: Duration;
  /**
   * Passes one scheduled invocation runs, {@link RECONCILE_PASS_SPACING} apart, so a due entry
   * waits about that long for a pass rather than a whole schedule period (at most 10 minutes of passes).
   */
  readonly reconcilePassesPerRun: number;
  readonly allowedDestinations: readonly string[];
  readonly maxExpiryHours: number;
  /** The abuse-limit environment variables, checked (names as in `shared/config.ts`). */
  readonly abuseLimitEnvironment: Readonly<Record<string, string>>;
  readonly timing: Required<TimingSettings>;
  readonly fingerprintKey: FingerprintKeySource;
  readonly fingerprintKeyVersion: number;
  readonly logRetention: RetentionDays;
  readonly apiThrottle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly apiInvokers: readonly IGrantable[];
  readonly apiInvokerPrincipals: readonly string[];
  readonly senderTimeout: Duration;
  readonly senderBatchSize: number;
  readonly senderMaxConcurrency: number;
  readonly reconcilerReservedConcurrency?: number;
  readonly alarmTopic?: ITopic;
  readonly alarmEmail?: string;
  readonly dispatchUnknownAgeAlarm: Duration;
  readonly unknownOutcomeRateAlarmPercent: number;
  readonly smsSpendAlarmUsd: number;
  readonly sendsPerHourAlarm: number;
  readonly metricsNamespace: string;
  readonly tracing: boolean;
  readonly code: Required<FunctionCodeSettings>;
}

/** This package's root, found from this file (`infra/settings.ts`), not from the working directory. */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Names of the four entry files inside the entry directory. */
export const FUNCTION_ENTRIES = {
  api: 'api.ts',
  forwarder: 'forwarder.ts',
  sender: 'sender.ts',
  reconciler: 'reconciler.ts',
  /** Only deployed with the End User Messaging provider (its events). */
  eumReceipts: 'eum-receipts.ts',
  /** Only deployed with a Twilio(-compatible) provider. */
  receipts: 'receipts.ts',
  reconcileWorker: 'reconcile-worker.ts',
} as const;

/** The sender's Lambda timeout: the provider call, the lease writes and a margin. */
const SENDER_TIMEOUT = Duration.seconds(30);

/** Applies defaults and rejects settings that cannot work, with the prop's name in the message. */
export function resolveSettings(scope: Construct, props: ResetNotifierProps): ResolvedSettings {
  const fail = (message: string): never => {
    throw new Error(`ResetNotifier: ${message}`);
  };
  const providers = resolveProviders(scope, props, fail);
  const evidenceRetentionDays = (
    props.evidenceRetention ?? Duration.days(SETTINGS.evidenceRetention.aws)
  ).toDays({
    integral: false,
  });
  if (!Number.isInteger(evidenceRetentionDays) || evidenceRetentionDays < 1) {
    fail('evidenceRetention must be a whole number of days, at least 1');
  }
  const reconcileSchedule = props.reconcileSchedule ?? Duration.minutes(1);
  const scheduleMinutes = reconcileSchedule.toMinutes({ integral: false });
  if (!Number.isInteger(scheduleMinutes) || scheduleMinutes < 1) {
    fail('reconcileSchedule must be a whole number of minutes, at least 1');
  }
  const reconcilePassesPerRun = Math.max(
    1,
    Math.floor(
      Math.min(reconcileSchedule.toSeconds(), RECONCILE_MAX_RUN.toSeconds()) /
        RECONCILE_PASS_SPACING.toSeconds(),
    ),
  );
  const allowedDestinations = props.allowedDestinations ?? [];
  for (const prefix of allowedDestinations) {
    if (!/^\+[1-9]\d{0,14}$/.test(prefix))
      fail(`allowedDestinations: "${prefix}" is not an E.164 prefix like +1 or +44`);
  }
  const maxExpiryHours = (props.maxExpiry ?? Duration.hours(SETTINGS.maxExpiry.aws)).toHours({
    integral: false,
  });
  if (!Number.isInteger(maxExpiryHours) || maxExpiryHours < 1)
    fail('maxExpiry must be a whole number of hours');

  const abuseLimitEnvironment = resolveAbuseLimits(props.abuseLimits ?? {}, fail);

  const t = props.timing ?? {};
  const timing: Required<TimingSettings> = {
    // The AWS defaults of the one settings table (shared/settings.ts), which also documents them.
    dispatchMargin: t.dispatchMargin ?? Duration.seconds(SETTINGS.dispatchMargin.aws),
    providerTimeout: t.providerTimeout ?? Duration.millis(SETTINGS.providerTimeout.aws),
    reconcileSettle: t.reconcileSettle ?? Duration.seconds(SETTINGS.reconcileSettle.aws),
    statusHorizon: t.statusHorizon ?? Duration.seconds(SETTINGS.statusHorizon.aws),
    statusPoll: t.statusPoll ?? Duration.seconds(SETTINGS.statusPoll.aws),
    queueSafetyNet: t.queueSafetyNet ?? Duration.seconds(SETTINGS.queueSafetyNet.aws),
  };
  // The provider call and the lease bookkeeping must fit well inside one sender invocation.
  if (timing.providerTimeout.toMilliseconds() > SENDER_TIMEOUT.toMilliseconds() / 2) {
    fail(`timing.providerTimeout must be at most half the sender timeout (${SENDER_TIMEOUT.toSeconds()} s)`);
  }

  const senderBatchSize = props.senderBatchSize ?? SETTINGS.senderBatchSize.aws;
  if (!Number.isInteger(senderBatchSize) || senderBatchSize < 1 || senderBatchSize > 10) {
    fail('senderBatchSize must be an integer from 1 to 10');
  }
  const senderMaxConcurrency = props.senderMaxConcurrency ?? SETTINGS.senderMaxConcurrency.aws;
  if (!Number.isInteger(senderMaxConcurrency) || senderMaxConcurrency < 2 || senderMaxConcurrency > 1000) {
    fail('senderMaxConcurrency must be an integer from 2 to 1000 (the SQS event source minimum is 2)');
  }
  const reserved = props.reconcilerReservedConcurrency;
  if (reserved !== undefined && (!Number.isInteger(reserved) || reserved < 1)) {
    fail('reconcilerReservedConcurrency must be a positive integer (or unset for none)');
  }
  const apiThrottle = props.apiThrottle ?? {
    rateLimit: SETTINGS.apiThrottleRateLimit.aws,
    burstLimit: SETTINGS.apiThrottleBurstLimit.aws,
  };
  if (!(apiThrottle.rateLimit > 0) || !(apiThrottle.burstLimit > 0))
    fail('apiThrottle limits must be positive');

  const fingerprintKey = fingerprintKeySource(props, fail);
  const fingerprintKeyVersion = props.fingerprintKeyVersion ?? SETTINGS.fingerprintKeyVersion.aws;
  if (!Number.isInteger(fingerprintKeyVersion) || fingerprintKeyVersion < 1)
    fail('fingerprintKeyVersion must be a whole number from 1');
  const apiInvokerPrincipals = props.apiInvokerPrincipals ?? [];
  for (const principal of apiInvokerPrincipals) {
    if (!isAccountId(principal) && !isRoleArn(principal)) {
      fail(
        `apiInvokerPrincipals: "${principal}" is neither a 12-digit account id nor an IAM role ARN (arn:aws:iam::<account>:role/<name>)`,
      );
    }
  }

  const smsSpendAlarmUsd = props.smsSpendAlarmUsd ?? SETTINGS.smsSpendAlarmUsd.aws;
  if (!(smsSpendAlarmUsd > 0)) fail('smsSpendAlarmUsd must be a positive amount of USD');
  const sendsPerHourAlarm = props.sendsPerHourAlarm ?? SETTINGS.sendsPerHourAlarm.aws;
  if (!Number.isInteger(sendsPerHourAlarm) || sendsPerHourAlarm < 1)
    fail('sendsPerHourAlarm must be a whole number of sends, at least 1');
  validateExternalResources(props, fail);
  const projectRoot = props.code?.projectRoot ?? PACKAGE_ROOT;
  const unknownOutcomeRateAlarmPercent =
    props.unknownOutcomeRateAlarmPercent ?? SETTINGS.unknownOutcomeRateAlarmPercent.aws;
  if (!(unknownOutcomeRateAlarmPercent > 0 && unknownOutcomeRateAlarmPercent <= 100)) {
    fail('unknownOutcomeRateAlarmPercent must be in (0, 100]');
  }

  return {
    providers,
    provider: providers[0],
    evidenceRetentionDays,
    reconcileSchedule,
    reconcilePassesPerRun,
    allowedDestinations,
    maxExpiryHours,
    abuseLimitEnvironment,
    timing,
    fingerprintKey,
    fingerprintKeyVersion,
    logRetention: props.logRetention ?? (SETTINGS.logRetentionDays.aws as RetentionDays),
    tracing: props.tracing ?? false,
    apiThrottle,
    apiInvokers: props.apiInvokers ?? [],
    apiInvokerPrincipals,
    senderTimeout: SENDER_TIMEOUT,
    senderBatchSize,
    senderMaxConcurrency,
    ...(reserved === undefined ? {} : { reconcilerReservedConcurrency: reserved }),
    ...(props.alarmTopic === undefined ? {} : { alarmTopic: props.alarmTopic }),
    ...(props.alarmEmail === undefined ? {} : { alarmEmail: props.alarmEmail }),
    dispatchUnknownAgeAlarm:
      props.dispatchUnknownAgeAlarm ?? Duration.minutes(SETTINGS.dispatchUnknownAgeAlarmMinutes.aws),
    unknownOutcomeRateAlarmPercent,
    smsSpendAlarmUsd,
    sendsPerHourAlarm,
    metricsNamespace: props.metricsNamespace ?? `ResetNotifier/${Stack.of(scope).stackName}`,
    code: {
      entryDirectory: props.code?.entryDirectory ?? resolve(projectRoot, 'functions'),
      projectRoot,
      depsLockFilePath: props.code?.depsLockFilePath ?? resolve(projectRoot, 'package-lock.json'),
    },
  };
}

/**
 * The providers in order, each with the physical names the stack chooses derived from the stack
 * name, and checked: known kinds, each once, each valid by its own deploy side, and no two that
 * would claim one variable or the one status-callback route (`providers[1] (eum): ...` names which).
 */
function resolveProviders(
  scope: Construct,
  props: ResetNotifierProps,
  fail: (message: string) => never,
): readonly [ProviderSettings, ...ProviderSettings[]] {
  if (props.provider !== undefined && props.providers !== undefined) {
    fail('set provider or providers, not both (provider is the one-element case of providers)');
  }
  const listed = props.providers ?? [props.provider ?? { kind: 'sns' }];
  const [first, ...rest] = listed;
  if (first === undefined) fail('providers must name at least one provider');
  const several = listed.length > 1;
  const seen = new Set<string>();
  const resolved = ([first, ...rest] as ProviderSettings[]).map((given, index) => {
    const { kind } = given;
    const where = several ? `providers[${index}] (${kind}): ` : '';
    if (!Object.hasOwn(PROVIDER_INFRA, kind)) {
      fail(
        `${several ? `providers[${index}]: ` : ''}unknown provider kind "${kind}" (${providerKindList()})`,
      );
    }
    if (seen.has(kind)) {
      fail(`providers: ${kind} is listed twice (each provider at most once, in failover order)`);
    }
    seen.add(kind);
    const provider = namedAfterStack(scope, given);
    providerInfra(provider).validate(provider, (message) => fail(`${where}${message}`));
    return provider;
  });
  if (several) rejectClaimsOfTwo(scope, resolved, fail);
  return resolved as [ProviderSettings, ...ProviderSettings[]];
}

/**
 * Two providers that would claim the same thing cannot both be listed: the one public
 * status-callback route (`/v1/receipts/twilio`), or one environment variable with two values
 * (Twilio and the simulator both speak Twilio's API through the `PROVIDER_*` settings).
 */
function rejectClaimsOfTwo(
  scope: Construct,
  providers: readonly ProviderSettings[],
  fail: (message: string) => never,
): void {
  const callbacks = providers.filter((provider) => providerInfra(provider).statusCallbacks);
  if (callbacks.length > 1) {
    fail(
      `providers: ${callbacks.map((p) => p.kind).join(' and ')} both take status callbacks on the one receipts route; list one of them`,
    );
  }
  const written = new Map<string, { kind: string; value: string }>();
  for (const provider of providers) {
    for (const [variable, value] of Object.entries(providerInfra(provider).environment(scope, provider))) {
      const before = written.get(variable);
      if (before !== undefined && before.value !== value) {
        fail(`providers: ${before.kind} and ${provider.kind} both set ${variable}; list one of them`);
      }
      written.set(variable, { kind: provider.kind, value });
    }
  }
}

/**
 * The provider's props with the physical names the stack chooses derived from the stack name, so
 * two stacks in one account and region never ask for the same name (the provider module says which).
 */
function namedAfterStack(scope: Construct, provider: ProviderSettings): ProviderSettings {
  return providerInfra(provider).namedAfterStack?.(provider, Stack.of(scope).stackName) ?? provider;
}

/**
 * A deployed service serves named reset-URL hosts and named countries, never "any": without both
 * lists synthesis fails, naming the CDK context keys that set them (docs/deploy.md#required-context).
 */
function requireAllowLists(limits: AbuseLimitSettings, fail: (message: string) => never): void {
  const missing = [
    ...(limits.resetUrlHosts?.length
      ? []
      : [['resetUrlHosts', SETTINGS.resetUrlHosts, 'id.example.com'] as const]),
    ...(limits.allowedDestinationCountries?.length
      ? []
      : [['allowedDestinationCountries', SETTINGS.allowedDestinationCountries, 'US,CA'] as const]),
  ];
  if (missing.length === 0) return;
  const keys = missing.map(([, setting]) => `${CONTEXT_PREFIX}${setting.context}`);
  const examples = missing.map(([, setting, example]) => `-c ${CONTEXT_PREFIX}${setting.context}=${example}`);
  const props = missing.map(([prop]) => `abuseLimits.${prop}`);
  fail(
    `a deployment must name the reset-URL hosts and destination countries it serves: CDK context ${keys.join(' and ')} ` +
      `${keys.length === 1 ? 'is' : 'are'} required, e.g. cdk deploy ${examples.join(' ')} with your own values ` +
      `(construct props: ${props.join(', ')}; docs/deploy.md#required-context)`,
  );
}

/** Checks the abuse limits with the functions' own parsers and returns their environment variables. */
function resolveAbuseLimits(
  limits: AbuseLimitSettings,
  fail: (message: string) => never,
): Record<string, string> {
  requireAllowLists(limits, fail);
  // Unset props take the AWS column of the settings table.
  const env = settingsEnv({
    destinationLimits: limits.destinationLimits ?? SETTINGS.destinationLimits.aws,
    countryLimits: limits.countryLimits ?? SETTINGS.countryLimits.aws,
    allowedNumberTypes: limits.allowedNumberTypes ?? SETTINGS.allowedNumberTypes.aws,
    maxSmsSegments: limits.maxSmsSegments ?? SETTINGS.maxSmsSegments.aws,
    allowedDestinationCountries: limits.allowedDestinationCountries?.length
      ? limits.allowedDestinationCountries
      : undefined,
    resetUrlHosts: limits.resetUrlHosts?.length ? limits.resetUrlHosts : undefined,
  });
  const written = (setting: Setting) => env[setting.env] ?? '';
  try {
    parseDestinationLimits(written(SETTINGS.destinationLimits), 'abuseLimits.destinationLimits');
    parseCountryLimits(written(SETTINGS.countryLimits), 'abuseLimits.countryLimits');
    parseNumberTypes(written(SETTINGS.allowedNumberTypes), 'abuseLimits.allowedNumberTypes');
    parseCountries(written(SETTINGS.allowedDestinationCountries), 'abuseLimits.allowedDestinationCountries');
    parseHosts(written(SETTINGS.resetUrlHosts), 'abuseLimits.resetUrlHosts');
  } catch (error) {
    fail((error as Error).message);
  }
  const segments = limits.maxSmsSegments ?? SETTINGS.maxSmsSegments.aws;
  if (!Number.isInteger(segments) || segments < 1)
    fail('abuseLimits.maxSmsSegments must be a whole number >= 1');
  return env;
}

export { eumConfigurationSetName } from '../shared/providers/eum/infra.js';
export { snsDeliveryLogGroups } from '../shared/providers/sns/infra.js';
