import { z } from 'zod';
import { DEFAULT_DESTINATION_LIMITS, parseCountryLimits, parseDestinationLimits } from './domain/budgets.js';
import { InvalidConfigurationError } from './domain/errors.js';
import { DEFAULT_POLICY } from './domain/policy.js';
import { DEFAULT_MAX_SMS_SEGMENTS, parseHosts } from './domain/sms-body.js';
import { DEFAULT_ALLOWED_NUMBER_TYPES, parseCountries, parseNumberTypes } from './http/destination.js';

/**
 * The service's settings, one entry per environment variable, and the only place their names are
 * spelled: the variable, the zod codec that parses its text, its default where the functions read
 * it without the stack's help (`local`: `npm start`, the tests, the CLI), the value the CDK stack
 * writes in AWS (`aws`), its scope and what it means. `loadConfig` and `loadLocalConfig` read every
 * entry through {@link readSetting}, the stack and the local runtime write environments through
 * {@link settingsEnv}, and `docs/configuration.md` is generated from this table
 * (`npm run docs:config`; a unit test keeps it current). As with Powertools' `getNumberFromEnv`
 * and middy's option schema, a malformed value fails at start with the variable's name, never
 * silently (a unit test keeps every reader on this path).
 */
interface SettingBase<T> {
  /** How the value is written. */
  readonly unit:
    | 'ms'
    | 's'
    | 'h'
    | 'days'
    | 'count'
    | 'fraction'
    | 'per second'
    | 'text'
    | 'list'
    | 'url'
    | 'on/off'
    | 'min'
    | 'percent'
    | 'USD';
  /** Parses the value's text (blank counts as unset); its issues become the error message. */
  readonly codec: z.ZodType<T>;
  /** The CDK context key that sets it at deploy time, without the `reset-notifier:` prefix. */
  readonly context?: string;
  readonly description: string;
}

export interface Setting<T = unknown> extends SettingBase<T> {
  /** The environment variable (one per entry). */
  readonly env: string;
  /** Default when the variable is unset outside AWS, in the variable's own spelling (undefined: none). */
  readonly local?: string | number;
  /** How the docs describe the local default when it is not one plain value. */
  readonly localNote?: string;
  /** What AWS runs with: the stack's value, or a note when the stack derives it. */
  readonly aws?: string | number;
  /** Who reads it: the service's functions, the local stack only, or the operator CLI only. */
  readonly scope: 'service' | 'local' | 'cli';
}

/** A deploy-time choice with no variable of its own: read from CDK context by `infra/`. */
export interface DeploySetting<T = unknown> extends SettingBase<T> {
  readonly context: string;
  /** What the stack does when the key is unset. */
  readonly aws?: string | number;
  readonly scope: 'deploy';
}

/** A number within `min` (and whole when `integer`), with the messages every numeric setting shares. */
const numberCodec = ({
  min,
  max,
  integer = false,
}: {
  readonly min: number;
  readonly max?: number;
  readonly integer?: boolean;
}) => {
  let schema = z.coerce.number({ error: 'must be a number' }).refine(Number.isFinite, 'must be a number');
  schema = schema.refine((v) => v >= min, `must be at least ${min}`);
  if (max !== undefined) schema = schema.refine((v) => v <= max, `must be at most ${max}`);
  return integer ? schema.refine(Number.isInteger, 'must be a whole number') : schema;
};
const text = z.string();
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });
/** Comma-separated items, trimmed, empty ones dropped. */
const list = z.string().transform((raw) =>
  raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
);
/** Every provider kind the service can run with (one folder each under `shared/providers/`). */
const PROVIDER_KINDS = ['simulator', 'twilio', 'sns', 'eum'] as const;
/** A provider kind: `PROVIDER`'s value, an item of `PROVIDERS`. */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];
/** Provider kinds in order, comma-separated: at least one, each known, none twice. */
const providerList = list.pipe(
  z
    .array(oneOf(PROVIDER_KINDS))
    .min(1, 'must name at least one provider')
    .refine((kinds) => new Set(kinds).size === kinds.length, 'must not name a provider twice'),
);
/** A flag that is on unless written `false`, `0`, `off` or `no`. */
const enabled = z.string().transform((raw) => !['false', '0', 'off', 'no'].includes(raw.toLowerCase()));
/** A value the domain parses itself (its own error names the variable). */
const parsedBy = <T>(parse: (raw: string) => T) => z.string().transform((raw) => parse(raw));

const ms = <A extends number>(description: string, local: number, aws: A) =>
  ({
    unit: 'ms',
    local,
    aws,
    description,
    scope: 'service',
    codec: numberCodec({ min: 0, integer: true }),
  }) as const;
const sec = <A extends number>(description: string, local: number, aws: A) =>
  ({ unit: 's', local, aws, description, scope: 'service', codec: numberCodec({ min: 0 }) }) as const;
const url = (description: string, rest: { readonly localNote?: string; readonly aws?: string } = {}) =>
  ({ unit: 'url', codec: text, description, scope: 'service', ...rest }) as const;
const localCount = (env: string, local: number, description: string, aws?: string) =>
  ({
    env,
    unit: 'count',
    local,
    ...(aws === undefined ? {} : { aws }),
    description,
    scope: 'local',
    codec: numberCodec({ min: 1, integer: true }),
  }) as const;

/** The local receipts-only listener's port when the stack talks to real Twilio and `RECEIPTS_PORT` is unset. */
export const LOCAL_RECEIPTS_PORT = 3001;

/** Every setting, by the name the code uses for it. */
export const SETTINGS = {
  // Timing: the decisions depend on these (shared/domain/policy.ts holds the local defaults).
  providerTimeout: {
    env: 'PROVIDER_TIMEOUT_MS',
    context: 'providerTimeoutMs',
    ...ms('upper bound of one provider send', DEFAULT_POLICY.providerTimeoutMs, 5_000),
  },
  providerLookupTimeout: {
    env: 'PROVIDER_LOOKUP_TIMEOUT_MS',
    unit: 'ms',
    localNote: '= `PROVIDER_TIMEOUT_MS`',
    aws: '= `PROVIDER_TIMEOUT_MS`',
    description: 'upper bound of one status lookup (every page, the canary, the window scan)',
    scope: 'service',
    codec: numberCodec({ min: 0, integer: true }),
  },
  dispatchMargin: {
    env: 'DISPATCH_MARGIN_SECONDS',
    context: 'dispatchMarginSeconds',
    ...sec('no call starts at or after `expires_at - margin`', DEFAULT_POLICY.dispatchMarginMs / 1000, 5),
  },
  reconcileSettle: {
    env: 'RECONCILE_SETTLE_SECONDS',
    context: 'reconcileSettleSeconds',
    ...sec(
      'two absent reads must be at least this far apart to prove absence',
      DEFAULT_POLICY.reconcileSettleMs / 1000,
      120,
    ),
  },
  statusPoll: {
    env: 'STATUS_POLL_SECONDS',
    context: 'statusPollSeconds',
    ...sec('interval of status polls of a `sent` message', DEFAULT_POLICY.statusPollMs / 1000, 60),
  },
  statusHorizon: {
    env: 'STATUS_HORIZON_SECONDS',
    context: 'statusHorizonSeconds',
    ...sec('after this, `sent` is final', DEFAULT_POLICY.statusHorizonMs / 1000, 3_600),
  },
  queueSafetyNet: {
    env: 'QUEUE_SAFETY_NET_SECONDS',
    context: 'queueSafetyNetSeconds',
    ...sec(
      'when the reconciler re-drives an `accepted` command the queue lost',
      DEFAULT_POLICY.queueSafetyNetMs / 1000,
      300,
    ),
  },
  backoffBase: {
    env: 'BACKOFF_BASE_MS',
    ...ms(
      'retry and re-check backoff: first step',
      DEFAULT_POLICY.backoffBaseMs,
      DEFAULT_POLICY.backoffBaseMs,
    ),
  },
  backoffMax: {
    env: 'BACKOFF_MAX_MS',
    ...ms('retry and re-check backoff: cap', DEFAULT_POLICY.backoffMaxMs, DEFAULT_POLICY.backoffMaxMs),
  },
  leaseSlack: {
    env: 'LEASE_SLACK_MS',
    ...ms('lease time beyond the provider timeout', DEFAULT_POLICY.leaseSlackMs, DEFAULT_POLICY.leaseSlackMs),
  },
  maxAttempts: {
    env: 'MAX_ATTEMPTS',
    unit: 'count',
    local: DEFAULT_POLICY.maxAttempts,
    aws: DEFAULT_POLICY.maxAttempts,
    description: 'provider attempts per command',
    scope: 'service',
    codec: numberCodec({ min: 1, integer: true }),
  },
  receiptGrace: {
    env: 'RECEIPT_GRACE_SECONDS',
    ...sec(
      'with a provider that pushes receipts, `sent` is status-polled only after this (`npm start`: 10)',
      120,
      120,
    ),
  },
  // The provider circuit (issue 23, docs/providers/failover.md#circuit): one per provider, in the table.
  circuitWindow: {
    env: 'CIRCUIT_WINDOW_SECONDS',
    ...sec("the sliding window of sends a provider's circuit judges (10 buckets)", 30, 30),
  },
  circuitMinSamples: {
    env: 'CIRCUIT_MIN_SAMPLES',
    unit: 'count',
    local: 10,
    aws: 10,
    description: 'sends in the window below which no circuit opens',
    scope: 'service',
    codec: numberCodec({ min: 1, integer: true }),
  },
  circuitErrorRate: {
    env: 'CIRCUIT_ERROR_RATE_PERCENT',
    unit: 'percent',
    local: 50,
    aws: 50,
    description:
      "a provider's circuit opens when more of the window's sends than this were refused for a reason about the provider",
    scope: 'service',
    codec: numberCodec({ min: 0, max: 100 }),
  },
  circuitUnknownRate: {
    env: 'CIRCUIT_UNKNOWN_RATE_PERCENT',
    unit: 'percent',
    local: 20,
    aws: 20,
    description:
      "a provider's circuit opens when more of the window's sends than this ended unknown (timeouts)",
    scope: 'service',
    codec: numberCodec({ min: 0, max: 100 }),
  },
  circuitProbe: {
    env: 'CIRCUIT_PROBE_SECONDS',
    ...sec(
      'an open circuit lets one probe send through after this; a probe that never reports back is replaced after it',
      15,
      15,
    ),
  },
  // Limits and retention.
  maxExpiry: {
    env: 'MAX_EXPIRY_HOURS',
    context: 'maxExpiryHours',
    unit: 'h',
    local: 24,
    aws: 24,
    description: 'how far ahead `expires_at` may be',
    scope: 'service',
    codec: numberCodec({ min: 0 }),
  },
  evidenceRetention: {
    env: 'EVIDENCE_RETENTION_DAYS',
    context: 'evidenceRetentionDays',
    unit: 'days',
    local: 400,
    aws: 400,
    description: 'TTL = `expires_at` + this',
    scope: 'service',
    codec: numberCodec({ min: 0 }),
  },
  reconcileMaxItems: {
    env: 'RECONCILE_MAX_ITEMS_PER_PASS',
    unit: 'count',
    local: 1_000,
    aws: 1_000,
    description:
      'due entries one scheduled pass reads, shared fairly by the shards ([reconciler.md](reconciler.md))',
    scope: 'service',
    codec: numberCodec({ min: 0, integer: true }),
  },
  reconcileMaxRounds: {
    env: 'RECONCILE_MAX_ROUNDS_PER_PASS',
    unit: 'count',
    local: 10,
    aws: 10,
    description:
      'a pass that fills its round of `RECONCILE_MAX_ITEMS_PER_PASS` reads another, up to this many ([reconciler.md](reconciler.md))',
    scope: 'service',
    codec: numberCodec({ min: 1, integer: true }),
  },
  reconcilePassesPerRun: {
    env: 'RECONCILE_PASSES_PER_RUN',
    unit: 'count',
    local: 1,
    aws: "6 (the schedule's minute / `RECONCILE_PASS_SPACING_SECONDS`, at most 10 minutes of passes)",
    description:
      'passes one scheduled invocation runs, `RECONCILE_PASS_SPACING_SECONDS` apart: EventBridge fires once a minute at most ([reconciler.md](reconciler.md))',
    scope: 'service',
    codec: numberCodec({ min: 1, integer: true }),
  },
  reconcilePassSpacing: {
    env: 'RECONCILE_PASS_SPACING_SECONDS',
    ...sec('time between the passes of one scheduled invocation', 10, 10),
  },
  reconcileResweep: {
    env: 'RECONCILE_RESWEEP_SECONDS',
    ...sec(
      'a shard of the due index is read on from where the last pass stopped for this long, then again from its oldest entry ([reconciler.md](reconciler.md))',
      10,
      10,
    ),
  },
  providerLookupRate: {
    env: 'PROVIDER_LOOKUP_RATE_PER_SECOND',
    unit: 'per second',
    aws: "the provider's account rate / the workers' `maxConcurrency`",
    description:
      'lookups per second per container (token bucket; default none); SNS: `FilterLogEvents` calls (default 4)',
    scope: 'service',
    codec: numberCodec({ min: 0 }),
  },
  maxSmsSegments: {
    env: 'MAX_SMS_SEGMENTS',
    context: 'maxSmsSegments',
    unit: 'count',
    local: DEFAULT_MAX_SMS_SEGMENTS,
    aws: DEFAULT_MAX_SMS_SEGMENTS,
    description: 'most segments of the rendered SMS (GSM-7: 160/153 chars, UCS-2: 70/67)',
    scope: 'service',
    codec: numberCodec({ min: 1, integer: true }),
  },
  destinationLimits: {
    env: 'DESTINATION_LIMITS',
    context: 'destinationLimits',
    unit: 'list',
    local: DEFAULT_DESTINATION_LIMITS,
    aws: DEFAULT_DESTINATION_LIMITS,
    description:
      'admitted resets per destination per window (`count/window`, `s m h d`), or `off` ([abuse-limits.md](abuse-limits.md))',
    scope: 'service',
    codec: parsedBy((raw) => parseDestinationLimits(raw, 'DESTINATION_LIMITS')),
  },
  countryLimits: {
    env: 'COUNTRY_LIMITS',
    context: 'countryLimits',
    unit: 'list',
    local: 'off',
    aws: 'off',
    description: 'per-country budgets: `US:500/1h,GB:50/1h`, or `100/1h` for every country',
    scope: 'service',
    codec: parsedBy((raw) => parseCountryLimits(raw, 'COUNTRY_LIMITS')),
  },
  allowedNumberTypes: {
    env: 'ALLOWED_NUMBER_TYPES',
    context: 'allowedNumberTypes',
    unit: 'list',
    local: DEFAULT_ALLOWED_NUMBER_TYPES.join(','),
    aws: DEFAULT_ALLOWED_NUMBER_TYPES.join(','),
    description: 'libphonenumber types sent to (`any` = all); others get `422 destination_not_allowed`',
    scope: 'service',
    codec: parsedBy((raw) => parseNumberTypes(raw, 'ALLOWED_NUMBER_TYPES')),
  },
  allowedDestinationCountries: {
    env: 'ALLOWED_DESTINATION_COUNTRIES',
    context: 'allowedDestinationCountries',
    unit: 'list',
    localNote: 'any region',
    aws: 'required: synth fails without it',
    description: "ISO 3166 region codes (`US,CA`), checked on the number's region",
    scope: 'service',
    codec: parsedBy((raw) => parseCountries(raw, 'ALLOWED_DESTINATION_COUNTRIES')),
  },
  allowedDestinationPrefixes: {
    env: 'ALLOWED_DESTINATION_PREFIXES',
    context: 'allowedDestinations',
    unit: 'list',
    description: 'comma-separated E.164 prefixes (`+1,+44`); other numbers get `422`; default any',
    scope: 'service',
    codec: list,
  },
  resetUrlHosts: {
    env: 'RESET_URL_HOSTS',
    context: 'resetUrlHosts',
    unit: 'list',
    localNote: 'any ASCII host',
    aws: 'required: synth fails without it',
    description:
      'hosts a `reset_url` may point at (`id.example.com`); an internationalized host only when listed exactly',
    scope: 'service',
    codec: parsedBy((raw) => parseHosts(raw, 'RESET_URL_HOSTS')),
  },
  // Where things are.
  tableName: {
    env: 'TABLE_NAME',
    unit: 'text',
    local: 'reset-notifier',
    aws: 'set by the stack',
    description: 'the table',
    scope: 'service',
    codec: text,
  },
  dispatchQueueUrl: { env: 'DISPATCH_QUEUE_URL', ...url('the dispatch queue', { aws: 'set by the stack' }) },
  reconcileQueueUrl: {
    env: 'RECONCILE_QUEUE_URL',
    ...url('the scheduled pass only enqueues due keys here; unset: it handles them itself', {
      aws: 'set by the stack',
    }),
  },
  reconcilePollQueueUrl: {
    env: 'RECONCILE_POLL_QUEUE_URL',
    ...url(
      'the pass enqueues the status polls of `sent` messages here, behind no expiry; unset: they share `RECONCILE_QUEUE_URL`',
      { aws: 'set by the stack' },
    ),
  },
  awsRegion: {
    env: 'AWS_REGION',
    unit: 'text',
    localNote: '`AWS_DEFAULT_REGION`',
    aws: 'set by Lambda',
    description: 'the Region of the SDK clients',
    scope: 'service',
    codec: text,
  },
  awsDefaultRegion: {
    env: 'AWS_DEFAULT_REGION',
    unit: 'text',
    local: 'us-east-1',
    description: 'the Region when `AWS_REGION` is unset',
    scope: 'service',
    codec: text,
  },
  dynamodbEndpoint: { env: 'DYNAMODB_ENDPOINT', ...url('DynamoDB Local (unset in AWS)') },
  sqsEndpoint: { env: 'SQS_ENDPOINT', ...url('fauxqs (unset in AWS)') },
  powertoolsServiceName: {
    env: 'POWERTOOLS_SERVICE_NAME',
    unit: 'text',
    aws: 'set by the stack',
    description: 'the `service` dimension of the metrics and the logs (read by Powertools)',
    scope: 'service',
    codec: text,
  },
  powertoolsMetricsNamespace: {
    env: 'POWERTOOLS_METRICS_NAMESPACE',
    context: 'metricsNamespace',
    unit: 'text',
    aws: 'set by the stack',
    description: 'where Powertools `Metrics` publishes the EMF metrics the alarms read',
    scope: 'service',
    codec: text,
  },
  powertoolsLogLevel: {
    env: 'POWERTOOLS_LOG_LEVEL',
    unit: 'text',
    localNote: 'INFO',
    description: 'the Powertools logger level (`SILENT` quiets a process whose output is measured)',
    scope: 'service',
    codec: text,
  },
  nodeOptions: {
    env: 'NODE_OPTIONS',
    unit: 'text',
    aws: '--enable-source-maps',
    description: "Node.js flags of every function: stack traces point at the bundle's sources",
    scope: 'service',
    codec: text,
  },
  // The provider.
  provider: {
    env: 'PROVIDER',
    context: 'provider',
    unit: 'text',
    local: 'simulator',
    aws: 'sns',
    description:
      '`simulator`, `twilio`, `sns` or `eum` ([providers/aws.md](providers/aws.md), [providers/twilio.md](providers/twilio.md)); with `PROVIDERS`: unset, or its first',
    scope: 'service',
    codec: oneOf(PROVIDER_KINDS),
  },
  providers: {
    env: 'PROVIDERS',
    context: 'providers',
    unit: 'list',
    localNote: '`PROVIDER` alone',
    aws: 'context `providers`, in order ([deploy.md](deploy.md#two-providers-failover)); one provider: unset',
    description:
      'providers in order of preference (`twilio,eum`): the first is the primary, the next is sent through only when the previous one provably did not send ([providers/failover.md](providers/failover.md)); each at most once; a `PROVIDER` that is not its first stops the start',
    scope: 'service',
    codec: providerList,
  },
  twilioBaseUrl: {
    env: 'PROVIDER_BASE_URL',
    context: 'twilioBaseUrl',
    ...url('the Twilio(-compatible) endpoint', { localNote: "the simulator's (`SIM_PORT`)" }),
  },
  twilioAccountSid: {
    env: 'PROVIDER_ACCOUNT_SID',
    context: 'twilioAccountSid',
    unit: 'text',
    local: 'ACsimulator',
    description: 'the Twilio account',
    scope: 'service',
    codec: text,
  },
  twilioAuthToken: {
    env: 'PROVIDER_AUTH_TOKEN',
    unit: 'text',
    local: 'simulator-token',
    description: 'the Twilio auth token (locally; AWS reads `PROVIDER_AUTH_TOKEN_SECRET_ARN`)',
    scope: 'service',
    codec: text,
  },
  twilioFrom: {
    env: 'PROVIDER_FROM',
    context: 'twilioFrom',
    unit: 'text',
    localNote: '`+15005550006` unless a messaging service is set',
    description: 'the Twilio sender',
    scope: 'service',
    codec: text,
  },
  twilioMessagingService: {
    env: 'PROVIDER_MESSAGING_SERVICE_SID',
    context: 'twilioMessagingServiceSid',
    unit: 'text',
    description: 'send through a Twilio messaging service (`MG...`) instead of, or with, `PROVIDER_FROM`',
    scope: 'service',
    codec: text,
  },
  twilioStatusCallbackBase: {
    env: 'PROVIDER_STATUS_CALLBACK_BASE',
    ...url(
      'where Twilio posts status callbacks (`<API>/v1/receipts/twilio`); required for `PROVIDER=twilio`',
      { localNote: 'own receipts route', aws: 'set by the stack' },
    ),
  },
  twilioRedaction: {
    env: 'PROVIDER_REDACTION',
    context: 'twilioRedaction',
    unit: 'on/off',
    local: 'on',
    localNote: 'on (`npm start`: off for its simulator)',
    aws: 'on',
    description: 'what the deployment declares about Twilio Message Redaction; `on` disables absence proofs',
    scope: 'service',
    codec: oneOf(['on', 'off']),
  },
  twilioListLagAllowance: {
    env: 'PROVIDER_LIST_LAG_ALLOWANCE_SECONDS',
    context: 'twilioListLagAllowanceSeconds',
    ...sec('how long a new message may be missing from Twilio list reads', 60, 60),
    localNote: '60 (`npm start`: 0 for its simulator)',
  },
  twilioAbsenceProbeTo: {
    env: 'PROVIDER_ABSENCE_PROBE_TO',
    context: 'twilioAbsenceProbeTo',
    unit: 'text',
    localNote: 'unset (`npm start`: a number of its simulator)',
    aws: 'unset',
    description:
      'a number you own (E.164, best a Twilio number of the account): with `PROVIDER_MESSAGING_SERVICE_SID` and redaction `off`, absence is proven in a quiet account by a scheduled message to it, canceled at once ([providers/twilio.md](providers/twilio.md))',
    scope: 'service',
    codec: text,
  },
  twilioAuthTokenSecret: {
    env: 'PROVIDER_AUTH_TOKEN_SECRET_ARN',
    context: 'twilioAuthTokenSecretArn',
    unit: 'text',
    aws: 'set by the stack (Twilio, simulator)',
    description:
      'Secrets Manager secret with the Twilio (or deployed simulator) auth token; read on first use',
    scope: 'service',
    codec: text,
  },
  snsSenderId: {
    env: 'SNS_SENDER_ID',
    context: 'snsSenderId',
    unit: 'text',
    aws: 'set by the stack (SNS)',
    description: 'SNS sender id',
    scope: 'service',
    codec: text,
  },
  snsDeliveryLogGroups: {
    env: 'SNS_DELIVERY_LOG_GROUPS',
    context: 'snsDeliveryLogGroups',
    unit: 'list',
    aws: 'set by the stack (SNS)',
    description: 'the SNS delivery-status log groups the reconciler reads',
    scope: 'service',
    codec: list,
  },
  eumOriginationIdentity: {
    env: 'EUM_ORIGINATION_IDENTITY',
    context: 'eumOriginationIdentityArn',
    unit: 'text',
    aws: 'set by the stack (End User Messaging)',
    description:
      'End User Messaging phone number, sender id or pool (id or ARN) ([providers/aws.md](providers/aws.md))',
    scope: 'service',
    codec: text,
  },
  eumConfigurationSet: {
    env: 'EUM_CONFIGURATION_SET',
    context: 'eumConfigurationSet',
    unit: 'text',
    aws: 'set by the stack (End User Messaging)',
    description: 'the configuration set whose event destination publishes the receipts',
    scope: 'service',
    codec: text,
  },
  eumMaxPrice: {
    env: 'EUM_MAX_PRICE',
    context: 'eumMaxPrice',
    unit: 'text',
    description: 'End User Messaging `MaxPrice` per message, USD (`0.05`)',
    scope: 'service',
    codec: text,
  },
  eumProtectConfigurationId: {
    env: 'EUM_PROTECT_CONFIGURATION_ID',
    context: 'eumProtectConfigurationId',
    unit: 'text',
    description: 'an End User Messaging protect configuration to send under',
    scope: 'service',
    codec: text,
  },
  eumMessageFeedback: {
    env: 'EUM_MESSAGE_FEEDBACK',
    context: 'eumMessageFeedback',
    unit: 'on/off',
    local: 'off',
    description: '`on`: confirmations reach End User Messaging `PutMessageFeedback`',
    scope: 'service',
    codec: oneOf(['on', 'off']),
  },
  eumEventsTopicArn: {
    env: 'EUM_EVENTS_TOPIC_ARN',
    unit: 'text',
    aws: 'set by the stack (End User Messaging)',
    description: 'the only SNS topic whose End User Messaging events the receipts function believes',
    scope: 'service',
    codec: text,
  },
  keptReceiptsQueueUrl: {
    env: 'KEPT_RECEIPTS_QUEUE_URL',
    ...url(
      'End User Messaging: where the receipts keeper puts copies (without numbers) of events that failed every attempt; set on the keeper function only, and read by `receipts redrive`',
      { aws: 'set by the stack (End User Messaging)' },
    ),
  },
  snsEndpoint: {
    env: 'SNS_ENDPOINT',
    ...url('SNS with `PROVIDER=sns` (unset in AWS)', { localNote: 'the AWS simulator' }),
  },
  eumEndpoint: {
    env: 'EUM_ENDPOINT',
    ...url('End User Messaging with `PROVIDER=eum` (unset in AWS)', { localNote: 'the AWS simulator' }),
  },
  logsEndpoint: {
    env: 'LOGS_ENDPOINT',
    ...url('CloudWatch Logs with `PROVIDER=sns` (unset in AWS)', { localNote: 'the AWS simulator' }),
  },
  // Keys.
  cipher: {
    env: 'CIPHER',
    unit: 'text',
    local: 'local',
    aws: 'kms',
    description: '`local` (AES-256-GCM with `LOCAL_DATA_KEY`) or `kms` (`KMS_KEY_ID`)',
    scope: 'service',
    codec: oneOf(['local', 'kms']),
  },
  kmsKey: {
    env: 'KMS_KEY_ID',
    unit: 'text',
    aws: 'set by the stack',
    description: 'the KMS key of the envelope encryption (`CIPHER=kms`)',
    scope: 'service',
    codec: text,
  },
  localDataKey: {
    env: 'LOCAL_DATA_KEY',
    unit: 'text',
    localNote: 'random per `npm start`',
    description: 'the data key of `CIPHER=local`: 32 bytes, hex or base64',
    scope: 'service',
    codec: text,
  },
  fingerprintKey: {
    env: 'FINGERPRINT_KEY',
    unit: 'text',
    localNote: 'random per `npm start`',
    description: 'the fingerprint key inline: 32 bytes, hex or base64',
    scope: 'service',
    codec: text,
  },
  fingerprintKeySecret: {
    env: 'FINGERPRINT_KEY_SECRET_ARN',
    context: 'fingerprintKeySecretArn',
    unit: 'text',
    aws: 'set by the stack',
    description: 'the fingerprint key in Secrets Manager (generated by the stack unless given)',
    scope: 'service',
    codec: text,
  },
  fingerprintKeyParameter: {
    env: 'FINGERPRINT_KEY_PARAMETER',
    context: 'fingerprintKeyParameter',
    unit: 'text',
    description: 'the fingerprint key in an SSM SecureString, when the deployment gives one',
    scope: 'service',
    codec: text,
  },
  fingerprintKeyVersion: {
    env: 'FINGERPRINT_KEY_VERSION',
    context: 'fingerprintKeyVersion',
    unit: 'count',
    local: 1,
    aws: 1,
    description:
      'the version of the fingerprint key that fingerprints new commands (`fp<version>:`); the key value may hold several, `<version>:<key>,...` ([security.md](security.md#fingerprint-key-rotation))',
    scope: 'service',
    codec: numberCodec({ min: 1, integer: true }),
  },
  // The local stack only.
  apiPort: {
    env: 'PORT',
    unit: 'count',
    local: 3000,
    description: 'local API port',
    scope: 'local',
    codec: numberCodec({ min: 0, integer: true }),
  },
  simPort: {
    env: 'SIM_PORT',
    unit: 'count',
    local: 4010,
    description: 'provider simulator port',
    scope: 'local',
    codec: numberCodec({ min: 0, integer: true }),
  },
  dynamodbPort: {
    env: 'DYNAMODB_PORT',
    unit: 'count',
    local: 8000,
    description: 'DynamoDB Local port',
    scope: 'local',
    codec: numberCodec({ min: 0, integer: true }),
  },
  sqsPort: {
    env: 'SQS_PORT',
    unit: 'count',
    local: 4566,
    description: 'fauxqs (SQS) port',
    scope: 'local',
    codec: numberCodec({ min: 0, integer: true }),
  },
  receiptsPort: {
    env: 'RECEIPTS_PORT',
    unit: 'count',
    localNote: `unset: \`${LOCAL_RECEIPTS_PORT}\` against real Twilio (\`PROVIDER=twilio\` with \`PROVIDER_BASE_URL\`), no listener otherwise`,
    description:
      'a second local listener that serves only `POST /v1/receipts/twilio` (the one port a tunnel may expose); the callback base points at it',
    scope: 'local',
    codec: numberCodec({ min: 0, integer: true }),
  },
  reconcileInterval: {
    env: 'RECONCILE_INTERVAL_SECONDS',
    unit: 's',
    local: 5,
    aws: 'the schedule, 1 minute',
    description: 'local reconciler interval',
    scope: 'local',
    codec: numberCodec({ min: 0 }),
  },
  reconcileWorkers: localCount(
    'RECONCILE_WORKER_CONCURRENCY',
    2,
    'local reconcile-queue consumers',
    "the event source's `maxConcurrency`",
  ),
  reconcilePollWorkers: localCount(
    'RECONCILE_POLL_WORKER_CONCURRENCY',
    2,
    'local status-poll-queue consumers',
    "the poll queue's event source `maxConcurrency`",
  ),
  queueVisibilityTimeout: localCount(
    'QUEUE_VISIBILITY_TIMEOUT_SECONDS',
    30,
    'local queue visibility timeout',
  ),
  maxReceiveCount: localCount(
    'MAX_RECEIVE_COUNT',
    5,
    'local receives before a message goes to its dead-letter queue',
  ),
  localIam: {
    env: 'LOCAL_IAM',
    unit: 'on/off',
    local: 'true',
    description:
      "evaluate every AWS call a function makes in the local stack against that function's role in the synthesized template (docs/testing.md#iam-enforced-locally)",
    scope: 'local',
    codec: enabled,
  },
  console: {
    env: 'CONSOLE_ENABLED',
    unit: 'on/off',
    local: 'true',
    description: 'serve `/console` from the local stack',
    scope: 'local',
    codec: enabled,
  },
  sdkNodeVersionWarningOff: {
    env: 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
    unit: 'text',
    local: 'true',
    description:
      "set by `npm start`, the CLI, the chaos run and the benchmarks: the AWS SDK's Node 20 end-of-support notice is noise there",
    scope: 'local',
    codec: text,
  },
  modelRuns: {
    env: 'MODEL_RUNS',
    unit: 'count',
    localNote: 'at least 1,000',
    description: 'runs per property of the model-based tests (`npm run chaos` asks for more)',
    scope: 'local',
    codec: numberCodec({ min: 0, integer: true }),
  },
  chromiumPath: {
    env: 'CHROMIUM_PATH',
    unit: 'text',
    local: '/usr/bin/chromium',
    description: 'the Chromium `scripts/screenshot-console.ts` drives for `docs/console.png`',
    scope: 'local',
    codec: text,
  },
  searchPath: {
    env: 'PATH',
    unit: 'text',
    localNote: "the system's",
    description:
      'where executables are found; `npm run bench` passes it on to the cold-start processes it measures, whose environment is otherwise only the settings written for them',
    scope: 'local',
    codec: text,
  },
  // The operator CLI only (docs/operations.md); it also reads the service's table, queue and endpoint rows.
  awsProfile: {
    env: 'AWS_PROFILE',
    unit: 'text',
    description: "the SDK's profile; set without an endpoint, the CLI targets AWS",
    scope: 'cli',
    codec: text,
  },
  cliDlqUrl: {
    env: 'DLQ_URL',
    unit: 'url',
    localNote: 'looked up as `<table>-dispatch-dlq`',
    description: "the dispatch queue's dead-letter queue (`--dlq-url`)",
    scope: 'cli',
    codec: text,
  },
  cliQueueName: {
    env: 'QUEUE_NAME',
    unit: 'text',
    localNote: '`<table>-dispatch`',
    description: 'the dispatch queue looked up when no URL is given',
    scope: 'cli',
    codec: text,
  },
  cliDlqName: {
    env: 'DLQ_NAME',
    unit: 'text',
    localNote: '`<queue>-dlq`',
    description: 'the dead-letter queue looked up when no URL is given',
    scope: 'cli',
    codec: text,
  },
  // The simulators run alone (`npx tsx local/simulator/main.ts`, `local/simulator/aws/main.ts`).
  simHost: {
    env: 'SIM_HOST',
    unit: 'text',
    local: '127.0.0.1',
    description: 'a loopback address the simulator listens on',
    scope: 'local',
    codec: text,
  },
  simSentDelay: {
    env: 'SIM_SENT_DELAY_MS',
    unit: 'ms',
    localNote: "the simulator's schedule",
    description: 'when a simulated message reaches `sent`',
    scope: 'local',
    codec: numberCodec({ min: 0, integer: true }),
  },
  simDeliveredDelay: {
    env: 'SIM_DELIVERED_DELAY_MS',
    unit: 'ms',
    localNote: "the simulator's schedule",
    description: 'when a simulated message reaches `delivered`',
    scope: 'local',
    codec: numberCodec({ min: 0, integer: true }),
  },
  simExtensions: {
    env: 'SIM_EXTENSIONS',
    unit: 'on/off',
    local: '0',
    description: '`1`: the Twilio simulator adds the non-Twilio `status_callback` property to messages',
    scope: 'local',
    codec: z.string().transform((raw) => raw === '1'),
  },
  simLogLag: {
    env: 'SIM_LOG_LAG_MS',
    unit: 'ms',
    local: 2_000,
    description: 'AWS simulator: how late delivery-status log lines appear',
    scope: 'local',
    codec: numberCodec({ min: 0 }),
  },
  simLogSamplingRate: {
    env: 'SIM_LOG_SAMPLING_RATE',
    unit: 'fraction',
    local: 1,
    description: 'AWS simulator: share of successful deliveries logged (0..1)',
    scope: 'local',
    codec: numberCodec({ min: 0, max: 1 }),
  },
  simEventsUrl: {
    env: 'SIM_EVENTS_URL',
    unit: 'url',
    description: 'AWS simulator: where End User Messaging events are posted',
    scope: 'local',
    codec: text,
  },
  // Deploy-time only (CDK context, no variable).
  simulatorBaseUrl: {
    context: 'simulatorBaseUrl',
    unit: 'url',
    description:
      'with `provider=simulator`: where the functions reach the provider simulator (test stacks only)',
    scope: 'deploy',
    codec: text,
  },
  reconcileMinutes: {
    context: 'reconcileMinutes',
    unit: 'count',
    aws: 1,
    description: 'minutes between scheduled reconciler runs',
    scope: 'deploy',
    codec: numberCodec({ min: 1, integer: true }),
  },
  alarmTopicArn: {
    context: 'alarmTopicArn',
    unit: 'text',
    aws: 'a topic created by the stack',
    description: 'an existing SNS topic the alarms notify',
    scope: 'deploy',
    codec: text,
  },
  alarmEmail: {
    context: 'alarmEmail',
    unit: 'text',
    description: 'an email address subscribed to the created alarm topic',
    scope: 'deploy',
    codec: text,
  },
  apiInvokerPrincipals: {
    context: 'apiInvokerPrincipals',
    unit: 'list',
    description:
      'account ids or IAM role ARNs trusted by the invoker role (callers in other accounts; output `ApiInvokerRoleArn`)',
    scope: 'deploy',
    codec: list,
  },
  apiInvokerRoleArns: {
    context: 'apiInvokerRoleArns',
    unit: 'list',
    description: 'older name of `apiInvokerPrincipals`, read the same way (deprecated)',
    scope: 'deploy',
    codec: list,
  },
  sendsPerHourAlarm: {
    context: 'sendsPerHourAlarm',
    unit: 'count',
    aws: 500,
    description:
      'provider sends in one hour that page: the spend alarm of a provider with no spend metric in CloudWatch (Twilio, simulator) ([deploy.md](deploy.md#7-alarms))',
    scope: 'deploy',
    codec: numberCodec({ min: 1, integer: true }),
  },
  reconcilerReservedConcurrency: {
    context: 'reconcilerReservedConcurrency',
    unit: 'count',
    aws: 'none reserved',
    description: "reserved concurrency of the reconciler (taken from the account's unreserved pool)",
    scope: 'deploy',
    codec: numberCodec({ min: 1, integer: true }),
  },
  // Deploy-time only: the construct's props, reachable from `cdk deploy -c` (issue 22 item 4).
  stackName: {
    context: 'stackName',
    unit: 'text',
    aws: 'ResetNotifier',
    description:
      'the CloudFormation stack name; every name the stack gives a resource derives from it, so two stacks deploy side by side ([deploy.md](deploy.md#two-stacks-in-one-account))',
    scope: 'deploy',
    codec: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'must be a CloudFormation stack name (letters, digits, -)'),
  },
  tracing: {
    context: 'tracing',
    unit: 'on/off',
    aws: 'off',
    description: 'X-Ray active tracing of every function (traces cost per trace recorded and scanned)',
    scope: 'deploy',
    codec: oneOf(['on', 'off']),
  },
  logRetentionDays: {
    context: 'logRetentionDays',
    unit: 'days',
    aws: 90,
    description: "retention of the functions' and the API's log groups (a value CloudWatch Logs offers)",
    scope: 'deploy',
    codec: numberCodec({ min: 1, integer: true }),
  },
  apiThrottleRateLimit: {
    context: 'apiThrottleRateLimit',
    unit: 'per second',
    aws: 50,
    description: 'steady request rate of the HTTP API stage (receipts route: 4 x this)',
    scope: 'deploy',
    codec: numberCodec({ min: 1 }),
  },
  apiThrottleBurstLimit: {
    context: 'apiThrottleBurstLimit',
    unit: 'count',
    aws: 100,
    description: 'burst of the HTTP API stage (receipts route: 4 x this)',
    scope: 'deploy',
    codec: numberCodec({ min: 1, integer: true }),
  },
  senderBatchSize: {
    context: 'senderBatchSize',
    unit: 'count',
    aws: 10,
    description: 'dispatch messages per sender invocation (1-10)',
    scope: 'deploy',
    codec: numberCodec({ min: 1, max: 10, integer: true }),
  },
  senderMaxConcurrency: {
    context: 'senderMaxConcurrency',
    unit: 'count',
    aws: 10,
    description: "concurrent sender invocations at most (2-1000): bounds the provider's request rate",
    scope: 'deploy',
    codec: numberCodec({ min: 2, max: 1000, integer: true }),
  },
  smsSpendAlarmUsd: {
    context: 'smsSpendAlarmUsd',
    unit: 'USD',
    aws: 0.8,
    description:
      "month-to-date SMS spend that pages (SNS, End User Messaging): set it a little below the account's spend limit ([deploy.md](deploy.md#7-alarms))",
    scope: 'deploy',
    codec: numberCodec({ min: 0.01 }),
  },
  dispatchUnknownAgeAlarmMinutes: {
    context: 'dispatchUnknownAgeAlarmMinutes',
    unit: 'min',
    aws: 15,
    description: 'age of the oldest `dispatch_unknown` that pages',
    scope: 'deploy',
    codec: numberCodec({ min: 1, integer: true }),
  },
  unknownOutcomeRateAlarmPercent: {
    context: 'unknownOutcomeRateAlarmPercent',
    unit: 'percent',
    aws: 10,
    description: 'unknown provider outcomes, in percent of sends over 5 minutes, that page',
    scope: 'deploy',
    codec: numberCodec({ min: 0.1, max: 100 }),
  },
  fingerprintKeyEncryptionKeyArn: {
    context: 'fingerprintKeyEncryptionKeyArn',
    unit: 'text',
    aws: 'aws/ssm',
    description: "with `fingerprintKeyParameter`: the KMS key of that parameter, when it is not SSM's own",
    scope: 'deploy',
    codec: text,
  },
  snsManageDeliveryLogGroups: {
    context: 'snsManageDeliveryLogGroups',
    unit: 'on/off',
    aws: 'on',
    description:
      "with `provider=sns`: create the account's SNS delivery-status log groups and SNS's role; `off` when they exist (another stack in the account and region owns them)",
    scope: 'deploy',
    codec: oneOf(['on', 'off']),
  },
  snsDeliveryLogRetentionDays: {
    context: 'snsDeliveryLogRetentionDays',
    unit: 'days',
    aws: 7,
    description:
      'with `provider=sns`: retention of the delivery-status log groups (they hold destination numbers)',
    scope: 'deploy',
    codec: numberCodec({ min: 1, integer: true }),
  },
} as const satisfies Record<string, Setting | DeploySetting>;

/** The name the code uses for a setting. */
export type SettingKey = keyof typeof SETTINGS;

/** The settings that are environment variables. */
export type EnvSettingKey = {
  [K in SettingKey]: (typeof SETTINGS)[K] extends { readonly env: string } ? K : never;
}[SettingKey];

/** The prefix of every CDK context key (`cdk deploy -c reset-notifier:provider=twilio`). */
export const CONTEXT_PREFIX = 'reset-notifier:';

/** The short name of every CDK context key (`provider`, `smsSpendAlarmUsd`, ...). */
export type ContextName = {
  [K in SettingKey]: (typeof SETTINGS)[K] extends { readonly context: infer C extends string } ? C : never;
}[SettingKey];

/** Every CDK context key, by its short name (`provider: 'reset-notifier:provider'`), from the table. */
export type ContextKeys = { readonly [C in ContextName]: `${typeof CONTEXT_PREFIX}${C}` };

/** The CDK context keys the deployable app reads, derived from the settings that carry one. */
export function contextKeys(): ContextKeys {
  const keys: Record<string, string> = {};
  for (const setting of Object.values(SETTINGS as Record<string, Setting | DeploySetting>)) {
    if (setting.context !== undefined) keys[setting.context] = `${CONTEXT_PREFIX}${setting.context}`;
  }
  return keys as ContextKeys;
}

/** What a setting's codec yields. */
export type SettingValue<S> = S extends { readonly codec: z.ZodType<infer T> } ? T : never;

/** What the codec of the setting behind context key `C` yields (`smsSpendAlarmUsd`: a number). */
export type ContextValue<C extends ContextName> = {
  [K in SettingKey]: (typeof SETTINGS)[K] extends { readonly context: C }
    ? SettingValue<(typeof SETTINGS)[K]>
    : never;
}[SettingKey];

/**
 * Parses the text of CDK context key `name` (short name) with its setting's codec, or throws an
 * error naming the full key, as {@link readSetting} names the variable.
 */
export function decodeContext<C extends ContextName>(name: C, raw: string): ContextValue<C> {
  const setting = Object.values(SETTINGS as Record<string, Setting | DeploySetting>).find(
    (s) => s.context === name,
  );
  if (setting === undefined) throw new InvalidConfigurationError(`no setting has context key ${name}`);
  let parsed: ReturnType<typeof setting.codec.safeParse>;
  try {
    parsed = setting.codec.safeParse(raw);
  } catch (error) {
    // A value the domain parses itself throws naming the variable: name the key instead.
    const message = (error as Error).message;
    const variable = 'env' in setting ? `${String(setting.env)}: ` : '';
    throw new InvalidConfigurationError(
      `context ${CONTEXT_PREFIX}${name}: ${message.startsWith(variable) ? message.slice(variable.length) : message}`,
    );
  }
  if (!parsed.success) {
    throw new InvalidConfigurationError(
      `context ${CONTEXT_PREFIX}${name} ${parsed.error.issues[0]?.message ?? 'is invalid'}, got "${raw}"`,
    );
  }
  return parsed.data as ContextValue<C>;
}

/** A setting's value, `undefined` when it has no local default and is unset. */
type ReadValue<S> = S extends { readonly local: string | number }
  ? SettingValue<S>
  : SettingValue<S> | undefined;

/** An environment: `process.env` or a record built for a child, a test or a stack. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Parses `raw` with the setting's codec, or throws an error naming the variable and the value. */
function decode<S extends Setting>(setting: S, raw: string): SettingValue<S> {
  const parsed = setting.codec.safeParse(raw);
  if (!parsed.success) {
    throw new InvalidConfigurationError(
      `${setting.env} ${parsed.error.issues[0]?.message ?? 'is invalid'}, got "${raw}"`,
    );
  }
  return parsed.data as SettingValue<S>;
}

/**
 * Reads one setting from `env`: unset or blank gives `fallback` when given, else the setting's
 * local default (parsed like any value), else `undefined`; any other text must pass the codec.
 */
export function readSetting<S extends Setting>(
  env: Env,
  setting: S,
  fallback: SettingValue<S>,
): SettingValue<S>;
export function readSetting<S extends Setting>(
  env: Env,
  setting: S,
  fallback?: SettingValue<S>,
): ReadValue<S>;
export function readSetting<S extends Setting>(
  env: Env,
  setting: S,
  fallback?: SettingValue<S>,
): ReadValue<S> {
  const raw = env[setting.env];
  if (raw !== undefined && raw.trim() !== '') return decode(setting, raw) as ReadValue<S>;
  if (fallback !== undefined) return fallback as ReadValue<S>;
  return (setting.local === undefined ? undefined : decode(setting, String(setting.local))) as ReadValue<S>;
}

/**
 * The ordered provider list from `PROVIDER` (`single`) and `PROVIDERS` (`list`), each as given
 * (`undefined`: unset): the list when set, else `[single]`, else `[fallback]`. Both set must agree
 * on the primary, or the start stops naming both (`names`: the variables, or the context keys):
 * a contradiction between two settings is a deployment error, never a silent choice.
 */
export function orderedProviders(
  single: ProviderKind | undefined,
  list: readonly ProviderKind[] | undefined,
  fallback: ProviderKind,
  names: { readonly single: string; readonly list: string } = {
    single: SETTINGS.provider.env,
    list: SETTINGS.providers.env,
  },
): readonly [ProviderKind, ...ProviderKind[]] {
  const [primary, ...rest] = list ?? [];
  if (primary === undefined) return [single ?? fallback];
  if (single !== undefined && single !== primary) {
    throw new InvalidConfigurationError(
      `${names.single}=${single} contradicts ${names.list}=${list?.join(',')}: the first of ${names.list} is the primary; unset ${names.single} or make it ${primary}`,
    );
  }
  return [primary, ...rest];
}

/** The ordered providers of an environment ({@link orderedProviders} over `PROVIDER` and `PROVIDERS`). */
export function providersOf(env: Env): readonly [ProviderKind, ...ProviderKind[]] {
  const set = (setting: Setting) => (env[setting.env]?.trim() ?? '') !== '';
  return orderedProviders(
    set(SETTINGS.provider) ? readSetting(env, SETTINGS.provider) : undefined,
    readSetting(env, SETTINGS.providers),
    readSetting(env, SETTINGS.provider),
  );
}

/** {@link readSetting} bound to one environment. */
export interface SettingsReader {
  <S extends Setting>(setting: S, fallback: SettingValue<S>): SettingValue<S>;
  <S extends Setting>(setting: S, fallback?: SettingValue<S>): ReadValue<S>;
}

/** A reader of `env`, for code that reads many settings from it. */
export function settingsReader(env: Env): SettingsReader {
  return <S extends Setting>(setting: S, fallback?: SettingValue<S>) => readSetting(env, setting, fallback);
}

/** Reads a numeric setting that has a default (its own or `fallback`); see {@link readSetting}. */
export function readNumber(env: Env, setting: Setting<number>, fallback?: number): number {
  const value = readSetting(env, setting, fallback);
  if (value === undefined) throw new InvalidConfigurationError(`${setting.env} has no default`);
  return value;
}

/** Values to write into an environment, by setting name; `undefined` leaves the variable out. */
export type SettingsValues = {
  readonly [K in EnvSettingKey]?: string | number | readonly string[] | undefined;
};

/**
 * The environment that carries `values` (the stack's function environment, the local stack's,
 * a benchmark's): each under its setting's variable, lists comma-joined, numbers as written.
 */
export function settingsEnv(values: SettingsValues): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(values) as [EnvSettingKey, SettingsValues[EnvSettingKey]][]) {
    if (value === undefined) continue;
    env[SETTINGS[key].env] =
      typeof value === 'string' || typeof value === 'number' ? String(value) : value.join(',');
  }
  return env;
}

const cell = (value: string | number | undefined): string =>
  value === undefined
    ? ''
    : typeof value === 'number'
      ? `\`${value}\``
      : /^[\w./:,-]+$/.test(value)
        ? `\`${value}\``
        : value;

/** `docs/configuration.md`, generated from {@link SETTINGS}. */
export function renderConfigurationDoc(): string {
  const all = Object.values(SETTINGS as Record<string, Setting | DeploySetting>);
  const context = (s: Setting | DeploySetting) => (s.context === undefined ? '' : `\`${s.context}\``);
  const rows = (scope: Setting['scope']) =>
    all
      .filter((s): s is Setting => s.scope === scope)
      .map(
        (s) =>
          `| \`${s.env}\` | ${s.unit} | ${cell(s.localNote ?? s.local)} | ${cell(s.aws)} | ${context(s)} | ${s.description} |`,
      );
  const header = [
    '| Variable | Unit | Default (local) | AWS | CDK context | Meaning |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  const deployRows = all
    .filter((s): s is DeploySetting => s.scope === 'deploy')
    .map((s) => `| ${context(s)} | ${s.unit} | ${cell(s.aws)} | ${s.description} |`);
  return [
    '# Configuration',
    '',
    'Back to the [README](../README.md). Generated from `shared/settings.ts` by `npm run docs:config`',
    '(a unit test fails when this file is not current): edit the table there, not here.',
    '',
    'Every setting is an environment variable. The CDK stack writes the AWS column into every',
    "function's environment; `npm start`, the tests and the CLI use the local defaults. An unset or",
    'blank variable takes its default; any other value must parse, or the process stops at start',
    'with the variable named. A setting with a CDK context key is chosen at deploy time with',
    `\`cdk deploy -c ${CONTEXT_PREFIX}<key>=<value>\` ([deploy.md](deploy.md)).`,
    '',
    '## The service',
    '',
    ...header,
    ...rows('service'),
    '',
    '## The local stack only',
    '',
    ...header,
    ...rows('local'),
    '',
    'A simulator run alone (`npx tsx local/simulator/main.ts`, `local/simulator/aws/main.ts`) reads',
    '`SIM_PORT`, the `SIM_*` rows, `FINGERPRINT_KEY`, `FINGERPRINT_KEY_VERSION` and `PROVIDER_AUTH_TOKEN`.',
    '',
    '## The operator CLI only',
    '',
    'Besides `TABLE_NAME`, `DISPATCH_QUEUE_URL`, `AWS_REGION` and the endpoints above:',
    '',
    ...header,
    ...rows('cli'),
    '',
    '## Deploy time only (CDK context)',
    '',
    '| CDK context | Unit | Unset | Meaning |',
    '| --- | --- | --- | --- |',
    ...deployRows,
    '',
  ].join('\n');
}
