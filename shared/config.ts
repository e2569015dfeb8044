import type { BudgetPolicy } from './domain/budgets.js';
import { DEFAULT_POLICY, type DispatchPolicy } from './domain/policy.js';
import type { DestinationNumberType } from './http/destination.js';
import {
  type Env,
  type ProviderKind,
  providersOf,
  readNumber,
  SETTINGS,
  type Setting,
  settingsReader,
} from './settings.js';

/** Twilio's magic test sender, the local default `From` when no messaging service is set. */
const TWILIO_TEST_SENDER = '+15005550006';

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
  /**
   * The primary provider (`providers[0]`): `simulator` (Twilio-compatible simulator), `twilio`,
   * `sns` or `eum` (AWS End User Messaging SMS).
   */
  readonly provider: ProviderKind;
  /**
   * `PROVIDERS` (else `PROVIDER` alone): every provider in order of preference, each once; the
   * sender moves to the next only when the previous provably did not send (docs/providers/failover.md).
   */
  readonly providers: readonly [ProviderKind, ...ProviderKind[]];
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
  /** `KEPT_RECEIPTS_QUEUE_URL`: set on the receipts keeper only, which keeps failed events there (without numbers). */
  readonly keptReceiptsQueueUrl?: string;
  /** Local only: the End User Messaging endpoint of the AWS simulator (`EUM_ENDPOINT`). */
  readonly eumEndpoint?: string;
  /** E.164 prefixes the API accepts (empty = any valid number). */
  readonly allowedDestinationPrefixes: readonly string[];
  /** Abuse limits (docs/design.md#abuse-limits): `DESTINATION_LIMITS` and `COUNTRY_LIMITS`. */
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
  /** Which key of the fingerprint key value fingerprints new commands (docs/security.md#fingerprint-key-rotation); 1 when unset. */
  readonly fingerprintKeyVersion?: number;
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

/** `{ [key]: value }`, or nothing when the value is unset. */
function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/**
 * Reads the service configuration: every variable through its entry in the settings table
 * (shared/settings.ts); throws with the variable's name when one is malformed.
 */
export function loadConfig(env: Env = process.env): ServiceConfig {
  const read = settingsReader(env);
  const seconds = (setting: Setting<number>) => readNumber(env, setting) * 1000;
  const providers = providersOf(env);
  const [provider] = providers;
  const messagingServiceSid = read(SETTINGS.twilioMessagingService);
  const providerBaseUrl = read(SETTINGS.twilioBaseUrl, `http://127.0.0.1:${read(SETTINGS.simPort)}`);
  return {
    tableName: read(SETTINGS.tableName),
    dispatchQueueUrl: read(SETTINGS.dispatchQueueUrl, ''),
    region: read(SETTINGS.awsRegion, read(SETTINGS.awsDefaultRegion)),
    ...opt('dynamodbEndpoint', read(SETTINGS.dynamodbEndpoint)),
    ...opt('sqsEndpoint', read(SETTINGS.sqsEndpoint)),
    provider,
    providers,
    providerBaseUrl,
    providerAccountSid: read(SETTINGS.twilioAccountSid),
    providerAuthToken: read(SETTINGS.twilioAuthToken),
    // The Twilio test sender is the default only when no messaging service is configured.
    ...opt('providerFrom', read(SETTINGS.twilioFrom, messagingServiceSid ? undefined : TWILIO_TEST_SENDER)),
    ...opt('providerMessagingServiceSid', messagingServiceSid),
    providerRedaction: read(SETTINGS.twilioRedaction),
    providerListLagAllowanceMs: seconds(SETTINGS.twilioListLagAllowance),
    ...opt('providerAbsenceProbeTo', read(SETTINGS.twilioAbsenceProbeTo)),
    ...opt('providerAuthTokenSecretArn', read(SETTINGS.twilioAuthTokenSecret)),
    ...opt('snsSenderId', read(SETTINGS.snsSenderId)),
    snsDeliveryLogGroups: read(SETTINGS.snsDeliveryLogGroups, []),
    ...opt('snsEndpoint', read(SETTINGS.snsEndpoint)),
    ...opt('logsEndpoint', read(SETTINGS.logsEndpoint)),
    ...opt('eumOriginationIdentity', read(SETTINGS.eumOriginationIdentity)),
    ...opt('eumConfigurationSet', read(SETTINGS.eumConfigurationSet)),
    ...opt('eumMaxPrice', read(SETTINGS.eumMaxPrice)),
    ...opt('eumProtectConfigurationId', read(SETTINGS.eumProtectConfigurationId)),
    eumMessageFeedback: read(SETTINGS.eumMessageFeedback) === 'on',
    ...opt('eumEventsTopicArn', read(SETTINGS.eumEventsTopicArn)),
    ...opt('keptReceiptsQueueUrl', read(SETTINGS.keptReceiptsQueueUrl)),
    ...opt('eumEndpoint', read(SETTINGS.eumEndpoint)),
    allowedDestinationPrefixes: read(SETTINGS.allowedDestinationPrefixes, []),
    budgets: { destination: read(SETTINGS.destinationLimits), country: read(SETTINGS.countryLimits) },
    allowedNumberTypes: read(SETTINGS.allowedNumberTypes),
    allowedDestinationCountries: read(SETTINGS.allowedDestinationCountries, []),
    resetUrlHosts: read(SETTINGS.resetUrlHosts, []),
    maxSmsSegments: read(SETTINGS.maxSmsSegments),
    // The built-in simulator has its own callback sink; a real Twilio endpoint has no default.
    ...opt(
      'providerStatusCallbackBase',
      read(
        SETTINGS.twilioStatusCallbackBase,
        // Listed anywhere (`PROVIDERS=eum,simulator` too), unless real Twilio shares these settings.
        providers.includes('simulator') && !providers.includes('twilio')
          ? `${providerBaseUrl.replace(/\/+$/, '')}/_callbacks/status`
          : undefined,
      ),
    ),
    providerLookupTimeoutMs: readNumber(env, SETTINGS.providerLookupTimeout, read(SETTINGS.providerTimeout)),
    cipher: read(SETTINGS.cipher),
    ...opt('localDataKey', read(SETTINGS.localDataKey)),
    ...opt('kmsKeyId', read(SETTINGS.kmsKey)),
    ...opt('fingerprintKey', read(SETTINGS.fingerprintKey)),
    ...opt('fingerprintKeyParameter', read(SETTINGS.fingerprintKeyParameter)),
    ...opt('fingerprintKeySecretArn', read(SETTINGS.fingerprintKeySecret)),
    fingerprintKeyVersion: read(SETTINGS.fingerprintKeyVersion),
    evidenceRetentionDays: read(SETTINGS.evidenceRetention),
    maxExpiryHours: read(SETTINGS.maxExpiry),
    ...opt('reconcileQueueUrl', read(SETTINGS.reconcileQueueUrl)),
    ...opt('reconcilePollQueueUrl', read(SETTINGS.reconcilePollQueueUrl)),
    reconcileMaxItemsPerPass: read(SETTINGS.reconcileMaxItems),
    reconcileResweepMs: seconds(SETTINGS.reconcileResweep),
    reconcileMaxRounds: read(SETTINGS.reconcileMaxRounds),
    reconcilePassesPerRun: read(SETTINGS.reconcilePassesPerRun),
    reconcilePassSpacingMs: seconds(SETTINGS.reconcilePassSpacing),
    ...opt('providerLookupRatePerSecond', read(SETTINGS.providerLookupRate)),
    receiptGraceMs: seconds(SETTINGS.receiptGrace),
    // Every timing setting from the one table (shared/settings.ts), whose local defaults are the domain's.
    policy: {
      ...DEFAULT_POLICY,
      dispatchMarginMs: seconds(SETTINGS.dispatchMargin),
      providerTimeoutMs: read(SETTINGS.providerTimeout),
      reconcileSettleMs: seconds(SETTINGS.reconcileSettle),
      statusHorizonMs: seconds(SETTINGS.statusHorizon),
      statusPollMs: seconds(SETTINGS.statusPoll),
      queueSafetyNetMs: seconds(SETTINGS.queueSafetyNet),
      leaseSlackMs: read(SETTINGS.leaseSlack),
      backoffBaseMs: read(SETTINGS.backoffBase),
      backoffMaxMs: read(SETTINGS.backoffMax),
      maxAttempts: read(SETTINGS.maxAttempts),
    },
  };
}

/** The local stack's own settings (`npm start`, the tests' stacks, the benchmarks). */
export interface LocalConfig {
  readonly ports: {
    readonly api: number;
    readonly sim: number;
    readonly dynamodb: number;
    readonly sqs: number;
    /** The receipts-only listener's, when `RECEIPTS_PORT` asks for one (the stack decides otherwise). */
    readonly receipts?: number;
  };
  readonly reconcileIntervalMs: number;
  readonly reconcileWorkerConcurrency: number;
  readonly reconcilePollWorkerConcurrency: number;
  readonly queueVisibilityTimeoutSeconds: number;
  readonly maxReceiveCount: number;
  readonly consoleEnabled: boolean;
}

/**
 * Reads the local stack's settings (scope `local` in the settings table) with the same codecs as
 * the service's: `RECONCILE_WORKER_CONCURRENCY=abc` stops the start with the variable's name.
 */
export function loadLocalConfig(env: Env = process.env): LocalConfig {
  const read = settingsReader(env);
  const receipts = read(SETTINGS.receiptsPort);
  return {
    ports: {
      api: read(SETTINGS.apiPort),
      sim: read(SETTINGS.simPort),
      dynamodb: read(SETTINGS.dynamodbPort),
      sqs: read(SETTINGS.sqsPort),
      ...(receipts === undefined ? {} : { receipts }),
    },
    reconcileIntervalMs: read(SETTINGS.reconcileInterval) * 1000,
    reconcileWorkerConcurrency: read(SETTINGS.reconcileWorkers),
    reconcilePollWorkerConcurrency: read(SETTINGS.reconcilePollWorkers),
    queueVisibilityTimeoutSeconds: read(SETTINGS.queueVisibilityTimeout),
    maxReceiveCount: read(SETTINGS.maxReceiveCount),
    consoleEnabled: read(SETTINGS.console),
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
