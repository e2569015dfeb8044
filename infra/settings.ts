import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Stack } from 'aws-cdk-lib';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import {
  DEFAULT_DESTINATION_LIMITS,
  parseCountryLimits,
  parseDestinationLimits,
} from '../shared/domain/budgets.js';
import { DEFAULT_MAX_SMS_SEGMENTS, parseHosts } from '../shared/domain/sms-body.js';
import {
  DEFAULT_ALLOWED_NUMBER_TYPES,
  parseCountries,
  parseNumberTypes,
} from '../shared/http/destination.js';
import { SETTINGS } from '../shared/settings.js';
import {
  fingerprintKeySource,
  isAccountId,
  isRoleArn,
  validateExternalResources,
} from './external-resources.js';

/** Amazon SNS SMS (the default in AWS): `sns:Publish` to phone numbers, lookups in the delivery-status logs. */
export interface SnsProviderSettings {
  readonly kind: 'sns';
  /** `AWS.SNS.SMS.SenderID`, where the destination country supports one. @default - none */
  readonly senderId?: string;
  /**
   * The SNS SMS delivery-status log groups the reconciler reads.
   * @default - `sns/<region>/<account>/DirectPublishToPhoneNumber` and the same with `/Failure`
   */
  readonly deliveryLogGroupNames?: readonly string[];
  /**
   * Create those log groups (retention, KMS key) and the IAM role SNS writes them with. Turn off
   * when they already exist in the account (CloudFormation cannot adopt them). @default true
   */
  readonly manageDeliveryLogGroups?: boolean;
  /** Retention of the delivery-status logs (they hold destination numbers in clear). @default ONE_WEEK */
  readonly deliveryLogRetention?: RetentionDays;
}

/**
 * AWS End User Messaging SMS: `SendTextMessage` through a configuration set whose event destination
 * (an encrypted SNS topic) feeds the receipts function.
 */
export interface EumProviderSettings {
  readonly kind: 'eum';
  /** ARN of the phone number, sender id or pool messages come from; `sms-voice:SendTextMessage` is scoped to it. */
  readonly originationIdentityArn: string;
  /** Name of the configuration set the stack creates. @default 'reset-notifier' */
  readonly configurationSetName?: string;
  /** `MaxPrice` per message in USD, e.g. `'0.05'`. @default - none */
  readonly maxPrice?: string;
  /** A protect configuration to send under (its id); the grant then names it too. @default - none */
  readonly protectConfigurationId?: string;
  /** Enable message feedback (`PutMessageFeedback` on confirmations). @default false */
  readonly messageFeedback?: boolean;
}

/** Twilio (or any Twilio-compatible endpoint). The auth token stays in Secrets Manager. */
export interface TwilioProviderSettings {
  readonly kind: 'twilio';
  readonly accountSid: string;
  /** The sending number or messaging service, as Twilio expects it in `From`. */
  readonly from: string;
  /** A secret whose `SecretString` is the auth token; sender and reconciler may read it. */
  readonly authTokenSecret: ISecret;
  /** @default 'https://api.twilio.com' */
  readonly baseUrl?: string;
  /** A messaging service (`MG...`) sent with every message; the absence probe needs one. @default - none */
  readonly messagingServiceSid?: string;
  /**
   * What the account declares about Message Redaction (`PROVIDER_REDACTION`); `off` lets the
   * reconciler prove absence and resend a send that never reached Twilio. @default 'on'
   */
  readonly redaction?: 'on' | 'off';
  /**
   * A number the account owns (`PROVIDER_ABSENCE_PROBE_TO`): with `messagingServiceSid` and
   * `redaction: 'off'`, absence is provable in a quiet account (docs/providers/twilio.md). @default - none
   */
  readonly absenceProbeTo?: string;
}

/** The provider simulator reachable at `baseUrl` (test environments only; no secret needed). */
export interface SimulatorProviderSettings {
  readonly kind: 'simulator';
  readonly baseUrl: string;
}

/** Which SMS provider the functions use (`PROVIDER`). */
export type ProviderSettings =
  | SnsProviderSettings
  | EumProviderSettings
  | TwilioProviderSettings
  | SimulatorProviderSettings;

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
  /** `ALLOWED_DESTINATION_COUNTRIES`: ISO 3166 alpha-2 region codes. @default - any region */
  readonly allowedDestinationCountries?: readonly string[];
  /** `RESET_URL_HOSTS`: the hosts a `reset_url` may point at. @default - any host */
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
  /** @default { kind: 'sns' } */
  readonly provider?: ProviderSettings;
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
   * races harmlessly. Reserving concurrency takes it from the account's unreserved pool
   * (a new account has 10, and Lambda keeps at least 10 unreserved), so it is off by default.
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
  /** CloudWatch namespace of the service's log-derived metrics. @default `ResetNotifier/<stack name>` */
  readonly metricsNamespace?: string;
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
  readonly metricsNamespace: string;
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
  /** Only deployed with `provider.kind === 'eum'`. */
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
  const provider = props.provider ?? { kind: 'sns' };
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

  const senderBatchSize = props.senderBatchSize ?? 10;
  if (!Number.isInteger(senderBatchSize) || senderBatchSize < 1 || senderBatchSize > 10) {
    fail('senderBatchSize must be an integer from 1 to 10');
  }
  const senderMaxConcurrency = props.senderMaxConcurrency ?? 10;
  if (!Number.isInteger(senderMaxConcurrency) || senderMaxConcurrency < 2 || senderMaxConcurrency > 1000) {
    fail('senderMaxConcurrency must be an integer from 2 to 1000 (the SQS event source minimum is 2)');
  }
  const reserved = props.reconcilerReservedConcurrency;
  if (reserved !== undefined && (!Number.isInteger(reserved) || reserved < 1)) {
    fail('reconcilerReservedConcurrency must be a positive integer (or unset for none)');
  }
  const apiThrottle = props.apiThrottle ?? { rateLimit: 50, burstLimit: 100 };
  if (!(apiThrottle.rateLimit > 0) || !(apiThrottle.burstLimit > 0))
    fail('apiThrottle limits must be positive');

  const fingerprintKey = fingerprintKeySource(props, fail);
  const apiInvokerPrincipals = props.apiInvokerPrincipals ?? [];
  for (const principal of apiInvokerPrincipals) {
    if (!isAccountId(principal) && !isRoleArn(principal)) {
      fail(
        `apiInvokerPrincipals: "${principal}" is neither a 12-digit account id nor an IAM role ARN (arn:aws:iam::<account>:role/<name>)`,
      );
    }
  }

  if (provider.kind === 'eum') {
    if (
      !/^arn:aws[a-z-]*:sms-voice:[a-z0-9-]*:\d{12}:(phone-number|sender-id|pool)\/.+$/.test(
        provider.originationIdentityArn,
      )
    ) {
      fail('provider.originationIdentityArn must be the ARN of an sms-voice phone number, sender id or pool');
    }
    if (provider.maxPrice !== undefined && !/^\d{1,4}(\.\d{1,5})?$/.test(provider.maxPrice)) {
      fail('provider.maxPrice must be a decimal amount in USD, e.g. 0.05');
    }
    if (
      provider.configurationSetName !== undefined &&
      !/^[A-Za-z0-9_-]{1,64}$/.test(provider.configurationSetName)
    ) {
      fail('provider.configurationSetName must be 1-64 letters, digits, _ or -');
    }
  }
  if (provider.kind === 'twilio' && (provider.accountSid === '' || provider.from === '')) {
    fail('provider (twilio) needs accountSid and from');
  }
  if (
    provider.kind === 'twilio' &&
    provider.absenceProbeTo !== undefined &&
    (provider.messagingServiceSid === undefined || provider.redaction !== 'off')
  ) {
    // Without a messaging service Twilio drops the schedule and sends the probe at once; with
    // redaction on no absence is ever proven, so the probe would only cost requests.
    fail('provider (twilio) absenceProbeTo needs messagingServiceSid and redaction off');
  }
  if (provider.kind === 'simulator' && !/^https?:\/\//.test(provider.baseUrl)) {
    fail('provider (simulator) needs an http(s) baseUrl');
  }
  const smsSpendAlarmUsd = props.smsSpendAlarmUsd ?? 0.8;
  if (!(smsSpendAlarmUsd > 0)) fail('smsSpendAlarmUsd must be a positive amount of USD');
  validateExternalResources(props, fail);
  const projectRoot = props.code?.projectRoot ?? PACKAGE_ROOT;
  const unknownOutcomeRateAlarmPercent = props.unknownOutcomeRateAlarmPercent ?? 10;
  if (!(unknownOutcomeRateAlarmPercent > 0 && unknownOutcomeRateAlarmPercent <= 100)) {
    fail('unknownOutcomeRateAlarmPercent must be in (0, 100]');
  }

  return {
    provider,
    evidenceRetentionDays,
    reconcileSchedule,
    reconcilePassesPerRun,
    allowedDestinations,
    maxExpiryHours,
    abuseLimitEnvironment,
    timing,
    fingerprintKey,
    logRetention: props.logRetention ?? RetentionDays.THREE_MONTHS,
    apiThrottle,
    apiInvokers: props.apiInvokers ?? [],
    apiInvokerPrincipals,
    senderTimeout: SENDER_TIMEOUT,
    senderBatchSize,
    senderMaxConcurrency,
    ...(reserved === undefined ? {} : { reconcilerReservedConcurrency: reserved }),
    ...(props.alarmTopic === undefined ? {} : { alarmTopic: props.alarmTopic }),
    ...(props.alarmEmail === undefined ? {} : { alarmEmail: props.alarmEmail }),
    dispatchUnknownAgeAlarm: props.dispatchUnknownAgeAlarm ?? Duration.minutes(15),
    unknownOutcomeRateAlarmPercent,
    smsSpendAlarmUsd,
    metricsNamespace: props.metricsNamespace ?? `ResetNotifier/${Stack.of(scope).stackName}`,
    code: {
      entryDirectory: props.code?.entryDirectory ?? resolve(projectRoot, 'functions'),
      projectRoot,
      depsLockFilePath: props.code?.depsLockFilePath ?? resolve(projectRoot, 'package-lock.json'),
    },
  };
}

/** Checks the abuse limits with the functions' own parsers and returns their environment variables. */
function resolveAbuseLimits(
  limits: AbuseLimitSettings,
  fail: (message: string) => never,
): Record<string, string> {
  const env: Record<string, string> = {
    DESTINATION_LIMITS: limits.destinationLimits ?? DEFAULT_DESTINATION_LIMITS,
    COUNTRY_LIMITS: limits.countryLimits ?? 'off',
    ALLOWED_NUMBER_TYPES: (limits.allowedNumberTypes ?? DEFAULT_ALLOWED_NUMBER_TYPES).join(','),
    MAX_SMS_SEGMENTS: String(limits.maxSmsSegments ?? DEFAULT_MAX_SMS_SEGMENTS),
  };
  if (limits.allowedDestinationCountries?.length) {
    env.ALLOWED_DESTINATION_COUNTRIES = limits.allowedDestinationCountries.join(',');
  }
  if (limits.resetUrlHosts?.length) env.RESET_URL_HOSTS = limits.resetUrlHosts.join(',');
  try {
    parseDestinationLimits(env.DESTINATION_LIMITS ?? '', 'abuseLimits.destinationLimits');
    parseCountryLimits(env.COUNTRY_LIMITS ?? '', 'abuseLimits.countryLimits');
    parseNumberTypes(env.ALLOWED_NUMBER_TYPES ?? '', 'abuseLimits.allowedNumberTypes');
    parseCountries(env.ALLOWED_DESTINATION_COUNTRIES ?? '', 'abuseLimits.allowedDestinationCountries');
    parseHosts(env.RESET_URL_HOSTS ?? '');
  } catch (error) {
    fail((error as Error).message);
  }
  const segments = limits.maxSmsSegments ?? DEFAULT_MAX_SMS_SEGMENTS;
  if (!Number.isInteger(segments) || segments < 1)
    fail('abuseLimits.maxSmsSegments must be a whole number >= 1');
  return env;
}

/**
 * The SNS SMS delivery-status log groups: `names` for the template, and `nagNames`, the same names
 * as cdk-nag prints them (pseudo parameters as `<AWS::Region>`), to acknowledge its findings.
 * Custom names must be literal strings.
 */
export function snsDeliveryLogGroups(
  scope: Construct,
  custom: readonly string[] | undefined,
): { readonly names: readonly string[]; readonly nagNames: readonly string[] } {
  if (custom !== undefined) return { names: custom, nagNames: custom };
  const { region, account } = Stack.of(scope);
  const base = (r: string, a: string) => `sns/${r}/${a}/DirectPublishToPhoneNumber`;
  const both = (r: string, a: string) => [base(r, a), `${base(r, a)}/Failure`];
  return { names: both(region, account), nagNames: both('<AWS::Region>', '<AWS::AccountId>') };
}

/** The configuration set name of an End User Messaging provider. */
export function eumConfigurationSetName(provider: EumProviderSettings): string {
  return provider.configurationSetName ?? 'reset-notifier';
}
