import {
  type BudgetPolicy,
  DEFAULT_DESTINATION_LIMITS,
  parseCountryLimits,
  parseDestinationLimits,
} from './domain/budgets.js';
import { DEFAULT_POLICY, type DispatchPolicy } from './domain/policy.js';
import { parseHosts } from './domain/sms-body.js';
import {
  DEFAULT_ALLOWED_NUMBER_TYPES,
  type DestinationNumberType,
  parseCountries,
  parseNumberTypes,
} from './http/destination.js';
import { readNumber, SETTINGS, type Setting } from './settings.js';

/**
 * Settings read from the environment, in one place. Lambda gets them from the stack; the local
 * stack sets them for its children. Every name is documented in the README.
 */
export interface ServiceConfig {
  readonly tableName: string;
  readonly dispatchQueueUrl: string;
  readonly region: string;
  /** Local emulator endpoints; unset in AWS. */
  readonly dynamodbEndpoint?: string;
  readonly sqsEndpoint?: string;
  /** `simulator` (Twilio-compatible simulator), `twilio`, `sns` or `eum` (AWS End User Messaging SMS). */
  readonly provider: 'simulator' | 'twilio' | 'sns' | 'eum';
  readonly providerBaseUrl: string;
  readonly providerAccountSid: string;
  readonly providerAuthToken: string;
  /** In AWS the Twilio auth token lives in Secrets Manager; read once per container. */
  readonly providerAuthTokenSecretArn?: string;
  readonly snsSenderId?: string;
  readonly snsDeliveryLogGroups: readonly string[];
  /** Local only: the SNS and CloudWatch Logs endpoints of the AWS simulator (`SNS_ENDPOINT`, `LOGS_ENDPOINT`). */
  readonly snsEndpoint?: string;
  readonly logsEndpoint?: string;
  /** End User Messaging SMS: `EUM_ORIGINATION_IDENTITY` (phone number, sender id or pool, id or ARN). */
  readonly eumOriginationIdentity?: string;
  /** `EUM_CONFIGURATION_SET`: its event destination publishes our receipts. */
  readonly eumConfigurationSet?: string;
  /** `EUM_MAX_PRICE`: USD per message, e.g. `0.05`. */
  readonly eumMaxPrice?: string;
  readonly eumProtectConfigurationId?: string;
  /** `EUM_MESSAGE_FEEDBACK=on`: sends MessageFeedbackEnabled so confirmations reach PutMessageFeedback. */
  readonly eumMessageFeedback: boolean;
  /** `EUM_EVENTS_TOPIC_ARN`: the only SNS topic whose events the receipts function believes. */
  readonly eumEventsTopicArn?: string;
  /** Local only: the End User Messaging endpoint of the AWS simulator (`EUM_ENDPOINT`). */
  readonly eumEndpoint?: string;
  /** E.164 prefixes the API accepts (empty = any valid number). */
  readonly allowedDestinationPrefixes: readonly string[];
  /** Abuse limits (DESIGN.md section 9): `DESTINATION_LIMITS` and `COUNTRY_LIMITS`. */
  readonly budgets: BudgetPolicy;
  /** `ALLOWED_NUMBER_TYPES`; empty = any type. */
  readonly allowedNumberTypes: readonly DestinationNumberType[];
  /** `ALLOWED_DESTINATION_COUNTRIES` (region codes); empty = any. */
  readonly allowedDestinationCountries: readonly string[];
  /** `RESET_URL_HOSTS`; empty = any host. */
  readonly resetUrlHosts: readonly string[];
  /** `MAX_SMS_SEGMENTS`: most segments a rendered body may take. */
  readonly maxSmsSegments: number;
  /** Twilio sender (`PROVIDER_FROM`); optional when a messaging service is set. */
  readonly providerFrom?: string;
  /** `PROVIDER_MESSAGING_SERVICE_SID` (`MG...`): sent as `MessagingServiceSid` instead of `From`. */
  readonly providerMessagingServiceSid?: string;
  /**
   * `PROVIDER_STATUS_CALLBACK_BASE`: where Twilio posts status callbacks (our receipts route).
   * A Twilio provider without it refuses to start.
   */
  readonly providerStatusCallbackBase?: string;
  /**
   * `PROVIDER_REDACTION` (`on`|`off`, default `on`): whether Twilio Message Redaction may be on for
   * the account. `on` disables absence proofs (see docs/providers/twilio.md).
   */
  readonly providerRedaction: 'on' | 'off';
  /** `PROVIDER_LIST_LAG_ALLOWANCE_SECONDS` (default 60): how long a new message may be missing from list reads. */
  readonly providerListLagAllowanceMs: number;
  /** `PROVIDER_ABSENCE_PROBE_TO`: the number the Twilio absence probe is scheduled to (one we own); unset: no probe. */
  readonly providerAbsenceProbeTo?: string;
  /** Upper bound of one status lookup (reads only). */
  readonly providerLookupTimeoutMs: number;
  /** `local` (AES-256-GCM key from LOCAL_DATA_KEY) or `kms` (KMS_KEY_ID). */
  readonly cipher: 'local' | 'kms';
  readonly localDataKey?: string;
  readonly kmsKeyId?: string;
  /** Fingerprint key: inline hex/base64 (local), an SSM SecureString parameter name or a Secrets Manager secret ARN (AWS). */
  readonly fingerprintKey?: string;
  readonly fingerprintKeyParameter?: string;
  readonly fingerprintKeySecretArn?: string;
  readonly evidenceRetentionDays: number;
  readonly maxExpiryHours: number;
  /** The reconcile queue (scheduled pass -> reconcile workers); unset: the pass handles keys itself. */
  readonly reconcileQueueUrl?: string;
  /** The status-poll queue (the poll lane's keys); unset: they share the reconcile queue. */
  readonly reconcilePollQueueUrl?: string;
  /** Due entries one scheduled pass reads, shared between the shards. */
  readonly reconcileMaxItemsPerPass: number;
  /** How long a due-index shard's sweep resumes after the previous pass before it starts again at the oldest. */
  readonly reconcileResweepMs: number;
  /** Rounds of `reconcileMaxItemsPerPass` one fan-out pass may read while rounds come back full. */
  readonly reconcileMaxRounds: number;
  /** Passes one scheduled (fan-out) invocation runs, `reconcilePassSpacingMs` apart. */
  readonly reconcilePassesPerRun: number;
  readonly reconcilePassSpacingMs: number;
  /** Lookups per second per container (token bucket); 0 = unbounded. Default: SNS 4, others 0. */
  readonly providerLookupRatePerSecond?: number;
  /** With a provider that pushes receipts, `sent` is status-polled only after this grace time. */
  readonly receiptGraceMs: number;
  readonly policy: DispatchPolicy;
}

type Env = Readonly<Record<string, string | undefined>>;

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name] ?? fallback;
  if (!(allowed as readonly string[]).includes(raw))
    throw new Error(`${name} must be one of ${allowed.join(', ')}`);
  return raw as T;
}

function opt<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined || value === '' ? {} : { [key]: value }) as { [P in K]?: string };
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** Reads the service configuration; throws with the variable's name when one is malformed. */
export function loadConfig(env: Env = process.env): ServiceConfig {
  const seconds = (setting: Setting) => readNumber(env, setting) * 1000;
  return {
    tableName: env.TABLE_NAME ?? 'reset-notifier',
    dispatchQueueUrl: env.DISPATCH_QUEUE_URL ?? '',
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...opt('dynamodbEndpoint', env.DYNAMODB_ENDPOINT),
    ...opt('sqsEndpoint', env.SQS_ENDPOINT),
    provider: oneOf(env, 'PROVIDER', ['simulator', 'twilio', 'sns', 'eum'] as const, 'simulator'),
    providerBaseUrl: env.PROVIDER_BASE_URL ?? `http://127.0.0.1:${env.SIM_PORT ?? '4010'}`,
    providerAccountSid: env.PROVIDER_ACCOUNT_SID ?? 'ACsimulator',
    providerAuthToken: env.PROVIDER_AUTH_TOKEN ?? 'simulator-token',
    // The Twilio test sender is the default only when no messaging service is configured.
    ...opt(
      'providerFrom',
      env.PROVIDER_FROM ?? (env.PROVIDER_MESSAGING_SERVICE_SID ? undefined : '+15005550006'),
    ),
    ...opt('providerMessagingServiceSid', env.PROVIDER_MESSAGING_SERVICE_SID),
    providerRedaction: oneOf(env, 'PROVIDER_REDACTION', ['on', 'off'] as const, 'on'),
    providerListLagAllowanceMs: readNumber(env, SETTINGS.twilioListLagAllowance, 60) * 1000,
    ...opt('providerAbsenceProbeTo', env[SETTINGS.twilioAbsenceProbeTo.env]),
    ...opt('providerAuthTokenSecretArn', env.PROVIDER_AUTH_TOKEN_SECRET_ARN),
    ...opt('snsSenderId', env.SNS_SENDER_ID),
    snsDeliveryLogGroups: list(env.SNS_DELIVERY_LOG_GROUPS),
    ...opt('snsEndpoint', env.SNS_ENDPOINT),
    ...opt('logsEndpoint', env.LOGS_ENDPOINT),
    ...opt('eumOriginationIdentity', env.EUM_ORIGINATION_IDENTITY),
    ...opt('eumConfigurationSet', env.EUM_CONFIGURATION_SET),
    ...opt('eumMaxPrice', env.EUM_MAX_PRICE),
    ...opt('eumProtectConfigurationId', env.EUM_PROTECT_CONFIGURATION_ID),
    eumMessageFeedback: oneOf(env, 'EUM_MESSAGE_FEEDBACK', ['on', 'off'] as const, 'off') === 'on',
    ...opt('eumEventsTopicArn', env.EUM_EVENTS_TOPIC_ARN),
    ...opt('eumEndpoint', env.EUM_ENDPOINT),
    allowedDestinationPrefixes: list(env.ALLOWED_DESTINATION_PREFIXES),
    budgets: {
      destination: parseDestinationLimits(env.DESTINATION_LIMITS || DEFAULT_DESTINATION_LIMITS),
      country: parseCountryLimits(env.COUNTRY_LIMITS ?? ''),
    },
    allowedNumberTypes: parseNumberTypes(env.ALLOWED_NUMBER_TYPES || DEFAULT_ALLOWED_NUMBER_TYPES.join(',')),
    allowedDestinationCountries: parseCountries(env.ALLOWED_DESTINATION_COUNTRIES ?? ''),
    resetUrlHosts: parseHosts(env.RESET_URL_HOSTS ?? ''),
    maxSmsSegments: readNumber(env, SETTINGS.maxSmsSegments),
    // The built-in simulator has its own callback sink; a real Twilio endpoint has no default.
    ...opt(
      'providerStatusCallbackBase',
      env.PROVIDER_STATUS_CALLBACK_BASE ||
        ((env.PROVIDER ?? 'simulator') === 'simulator'
          ? `${(env.PROVIDER_BASE_URL ?? `http://127.0.0.1:${env.SIM_PORT ?? '4010'}`).replace(/\/+$/, '')}/_callbacks/status`
          : undefined),
    ),
    providerLookupTimeoutMs: readNumber(
      env,
      SETTINGS.providerLookupTimeout,
      readNumber(env, SETTINGS.providerTimeout),
    ),
    cipher: oneOf(env, 'CIPHER', ['local', 'kms'] as const, 'local'),
    ...opt('localDataKey', env.LOCAL_DATA_KEY),
    ...opt('kmsKeyId', env.KMS_KEY_ID),
    ...opt('fingerprintKey', env.FINGERPRINT_KEY),
    ...opt('fingerprintKeyParameter', env.FINGERPRINT_KEY_PARAMETER),
    ...opt('fingerprintKeySecretArn', env.FINGERPRINT_KEY_SECRET_ARN),
    evidenceRetentionDays: readNumber(env, SETTINGS.evidenceRetention),
    maxExpiryHours: readNumber(env, SETTINGS.maxExpiry),
    ...opt('reconcileQueueUrl', env.RECONCILE_QUEUE_URL),
    ...opt('reconcilePollQueueUrl', env.RECONCILE_POLL_QUEUE_URL),
    reconcileMaxItemsPerPass: readNumber(env, SETTINGS.reconcileMaxItems),
    reconcileResweepMs: seconds(SETTINGS.reconcileResweep),
    reconcileMaxRounds: readNumber(env, SETTINGS.reconcileMaxRounds),
    reconcilePassesPerRun: readNumber(env, SETTINGS.reconcilePassesPerRun),
    reconcilePassSpacingMs: seconds(SETTINGS.reconcilePassSpacing),
    ...(env.PROVIDER_LOOKUP_RATE_PER_SECOND === undefined || env.PROVIDER_LOOKUP_RATE_PER_SECOND === ''
      ? {}
      : { providerLookupRatePerSecond: readNumber(env, SETTINGS.providerLookupRate) }),
    receiptGraceMs: seconds(SETTINGS.receiptGrace),
    // Every timing setting from the one table (shared/settings.ts), whose local defaults are the domain's.
    policy: {
      ...DEFAULT_POLICY,
      dispatchMarginMs: seconds(SETTINGS.dispatchMargin),
      providerTimeoutMs: readNumber(env, SETTINGS.providerTimeout),
      reconcileSettleMs: seconds(SETTINGS.reconcileSettle),
      statusHorizonMs: seconds(SETTINGS.statusHorizon),
      statusPollMs: seconds(SETTINGS.statusPoll),
      queueSafetyNetMs: seconds(SETTINGS.queueSafetyNet),
      leaseSlackMs: readNumber(env, SETTINGS.leaseSlack),
      backoffBaseMs: readNumber(env, SETTINGS.backoffBase),
      backoffMaxMs: readNumber(env, SETTINGS.backoffMax),
      maxAttempts: readNumber(env, SETTINGS.maxAttempts),
    },
  };
}

/** The abuse-limit part of the API handler's dependencies, from the configuration. */
export function abuseLimitsOf(config: ServiceConfig) {
  return {
    budgets: config.budgets,
    destinations: {
      allowedNumberTypes: config.allowedNumberTypes,
      allowedCountries: config.allowedDestinationCountries,
    },
    resetUrlHosts: config.resetUrlHosts,
    maxSmsSegments: config.maxSmsSegments,
  };
}
