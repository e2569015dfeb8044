import { z } from 'zod';
import { DEFAULT_DESTINATION_LIMITS } from './domain/budgets.js';
import { DEFAULT_POLICY } from './domain/policy.js';
import { DEFAULT_MAX_SMS_SEGMENTS } from './domain/sms-body.js';

/**
 * The service's settings, one entry per environment variable: its unit, its default where the
 * functions read it without the stack's help (`local`: `npm start`, the tests, the CLI), the value
 * the CDK stack writes in AWS (`aws`), and what it means. `loadConfig` reads the numeric ones through
 * {@link readNumber}, the stack takes its defaults from `aws`, and `docs/configuration.md` is
 * generated from this table (`npm run docs:config`; a unit test keeps it current).
 */
export interface Setting {
  readonly env: string;
  /** How the value is written. */
  readonly unit: 'ms' | 's' | 'h' | 'days' | 'count' | 'per second' | 'text' | 'list' | 'url' | 'on/off';
  /** Default when the variable is unset outside AWS, as the reader sees it (undefined: none). */
  readonly local?: string | number;
  /** What AWS runs with: the stack's value, or a note when the stack derives it. */
  readonly aws?: string | number;
  readonly description: string;
  /** Where the reader is: the service (`service`) or the local stack only (`local`). */
  readonly scope: 'service' | 'local';
  /** A numeric setting: the constraints of its value. */
  readonly number?: { readonly integer?: boolean; readonly min?: number };
}

const ms = <A extends number>(description: string, local: number, aws: A) =>
  ({ unit: 'ms', local, aws, description, scope: 'service', number: { integer: true, min: 0 } }) as const;
const sec = <A extends number>(description: string, local: number, aws: A) =>
  ({ unit: 's', local, aws, description, scope: 'service', number: { min: 0 } }) as const;

/** Every setting, by the name the code uses for it. */
export const SETTINGS = {
  // Timing: the decisions depend on these (shared/domain/policy.ts holds the local defaults).
  providerTimeout: {
    env: 'PROVIDER_TIMEOUT_MS',
    ...ms('upper bound of one provider send', DEFAULT_POLICY.providerTimeoutMs, 5_000),
  },
  providerLookupTimeout: {
    env: 'PROVIDER_LOOKUP_TIMEOUT_MS',
    unit: 'ms',
    local: '= `PROVIDER_TIMEOUT_MS`',
    aws: '= `PROVIDER_TIMEOUT_MS`',
    description: 'upper bound of one status lookup (every page, the canary, the window scan)',
    scope: 'service',
    number: { integer: true, min: 0 },
  },
  dispatchMargin: {
    env: 'DISPATCH_MARGIN_SECONDS',
    ...sec('no call starts at or after `expires_at - margin`', DEFAULT_POLICY.dispatchMarginMs / 1000, 5),
  },
  reconcileSettle: {
    env: 'RECONCILE_SETTLE_SECONDS',
    ...sec(
      'two absent reads must be at least this far apart to prove absence',
      DEFAULT_POLICY.reconcileSettleMs / 1000,
      120,
    ),
  },
  statusPoll: {
    env: 'STATUS_POLL_SECONDS',
    ...sec('interval of status polls of a `sent` message', DEFAULT_POLICY.statusPollMs / 1000, 60),
  },
  statusHorizon: {
    env: 'STATUS_HORIZON_SECONDS',
    ...sec('after this, `sent` is final', DEFAULT_POLICY.statusHorizonMs / 1000, 3_600),
  },
  queueSafetyNet: {
    env: 'QUEUE_SAFETY_NET_SECONDS',
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
    number: { integer: true, min: 1 },
  },
  receiptGrace: {
    env: 'RECEIPT_GRACE_SECONDS',
    ...sec(
      'with a provider that pushes receipts, `sent` is status-polled only after this (`npm start`: 10)',
      120,
      120,
    ),
  },
  // Limits and retention.
  maxExpiry: {
    env: 'MAX_EXPIRY_HOURS',
    unit: 'h',
    local: 24,
    aws: 24,
    description: 'how far ahead `expires_at` may be',
    scope: 'service',
    number: { min: 0 },
  },
  evidenceRetention: {
    env: 'EVIDENCE_RETENTION_DAYS',
    unit: 'days',
    local: 400,
    aws: 400,
    description: 'TTL = `expires_at` + this',
    scope: 'service',
    number: { min: 0 },
  },
  reconcileMaxItems: {
    env: 'RECONCILE_MAX_ITEMS_PER_PASS',
    unit: 'count',
    local: 1_000,
    aws: 1_000,
    description:
      'due entries one scheduled pass reads, shared fairly by the shards ([reconciler.md](reconciler.md))',
    scope: 'service',
    number: { integer: true, min: 0 },
  },
  reconcileMaxRounds: {
    env: 'RECONCILE_MAX_ROUNDS_PER_PASS',
    unit: 'count',
    local: 10,
    aws: 10,
    description:
      'a pass that fills its round of `RECONCILE_MAX_ITEMS_PER_PASS` reads another, up to this many ([reconciler.md](reconciler.md))',
    scope: 'service',
    number: { integer: true, min: 1 },
  },
  reconcilePassesPerRun: {
    env: 'RECONCILE_PASSES_PER_RUN',
    unit: 'count',
    local: 1,
    aws: "6 (the schedule's minute / `RECONCILE_PASS_SPACING_SECONDS`, at most 10 minutes of passes)",
    description:
      'passes one scheduled invocation runs, `RECONCILE_PASS_SPACING_SECONDS` apart: EventBridge fires once a minute at most ([reconciler.md](reconciler.md))',
    scope: 'service',
    number: { integer: true, min: 1 },
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
    number: { min: 0 },
  },
  maxSmsSegments: {
    env: 'MAX_SMS_SEGMENTS',
    unit: 'count',
    local: DEFAULT_MAX_SMS_SEGMENTS,
    aws: DEFAULT_MAX_SMS_SEGMENTS,
    description: 'most segments of the rendered SMS (GSM-7: 160/153 chars, UCS-2: 70/67)',
    scope: 'service',
    number: { integer: true, min: 1 },
  },
  destinationLimits: {
    env: 'DESTINATION_LIMITS',
    unit: 'list',
    local: DEFAULT_DESTINATION_LIMITS,
    aws: DEFAULT_DESTINATION_LIMITS,
    description:
      'admitted resets per destination per window (`count/window`, `s m h d`), or `off` ([abuse-limits.md](abuse-limits.md))',
    scope: 'service',
  },
  countryLimits: {
    env: 'COUNTRY_LIMITS',
    unit: 'list',
    local: 'off',
    aws: 'off',
    description: 'per-country budgets: `US:500/1h,GB:50/1h`, or `100/1h` for every country',
    scope: 'service',
  },
  allowedNumberTypes: {
    env: 'ALLOWED_NUMBER_TYPES',
    unit: 'list',
    local: 'MOBILE,FIXED_LINE_OR_MOBILE',
    aws: 'MOBILE,FIXED_LINE_OR_MOBILE',
    description: 'libphonenumber types sent to (`any` = all); others get `422 destination_not_allowed`',
    scope: 'service',
  },
  allowedDestinationCountries: {
    env: 'ALLOWED_DESTINATION_COUNTRIES',
    unit: 'list',
    description: "ISO 3166 region codes (`US,CA`), checked on the number's region; default any",
    scope: 'service',
  },
  allowedDestinationPrefixes: {
    env: 'ALLOWED_DESTINATION_PREFIXES',
    unit: 'list',
    description: 'comma-separated E.164 prefixes (`+1,+44`); other numbers get `422`; default any',
    scope: 'service',
  },
  resetUrlHosts: {
    env: 'RESET_URL_HOSTS',
    unit: 'list',
    description: 'hosts a `reset_url` may point at (`id.example.com`); default any',
    scope: 'service',
  },
  // Where things are.
  tableName: {
    env: 'TABLE_NAME',
    unit: 'text',
    local: 'reset-notifier',
    aws: 'set by the stack',
    description: 'the table',
    scope: 'service',
  },
  dispatchQueueUrl: {
    env: 'DISPATCH_QUEUE_URL',
    unit: 'url',
    aws: 'set by the stack',
    description: 'the dispatch queue',
    scope: 'service',
  },
  reconcileQueueUrl: {
    env: 'RECONCILE_QUEUE_URL',
    unit: 'url',
    aws: 'set by the stack',
    description: 'the scheduled pass only enqueues due keys here; unset: it handles them itself',
    scope: 'service',
  },
  reconcilePollQueueUrl: {
    env: 'RECONCILE_POLL_QUEUE_URL',
    unit: 'url',
    aws: 'set by the stack',
    description:
      'the pass enqueues the status polls of `sent` messages here, behind no expiry; unset: they share `RECONCILE_QUEUE_URL`',
    scope: 'service',
  },
  region: {
    env: 'AWS_REGION, AWS_DEFAULT_REGION',
    unit: 'text',
    local: 'us-east-1',
    aws: 'set by Lambda',
    description: 'the Region of the SDK clients',
    scope: 'service',
  },
  dynamodbEndpoint: {
    env: 'DYNAMODB_ENDPOINT',
    unit: 'url',
    description: 'DynamoDB Local (unset in AWS)',
    scope: 'service',
  },
  sqsEndpoint: { env: 'SQS_ENDPOINT', unit: 'url', description: 'fauxqs (unset in AWS)', scope: 'service' },
  // The provider.
  provider: {
    env: 'PROVIDER',
    unit: 'text',
    local: 'simulator',
    aws: 'sns',
    description:
      '`simulator`, `twilio`, `sns` or `eum` ([providers/aws.md](providers/aws.md), [providers/twilio.md](providers/twilio.md))',
    scope: 'service',
  },
  twilio: {
    env: 'PROVIDER_BASE_URL, PROVIDER_ACCOUNT_SID, PROVIDER_AUTH_TOKEN, PROVIDER_FROM',
    unit: 'text',
    local: "the simulator's",
    description: 'Twilio endpoint, account, token (locally) and sender',
    scope: 'service',
  },
  twilioMessagingService: {
    env: 'PROVIDER_MESSAGING_SERVICE_SID',
    unit: 'text',
    description: 'send through a Twilio messaging service (`MG...`) instead of, or with, `PROVIDER_FROM`',
    scope: 'service',
  },
  twilioStatusCallbackBase: {
    env: 'PROVIDER_STATUS_CALLBACK_BASE',
    unit: 'url',
    local: 'own receipts route',
    aws: 'set by the stack',
    description:
      'where Twilio posts status callbacks (`<API>/v1/receipts/twilio`); required for `PROVIDER=twilio`',
    scope: 'service',
  },
  twilioRedaction: {
    env: 'PROVIDER_REDACTION',
    unit: 'on/off',
    local: 'on (`npm start`: off for its simulator)',
    aws: 'on',
    description: 'what the deployment declares about Twilio Message Redaction; `on` disables absence proofs',
    scope: 'service',
  },
  twilioListLagAllowance: {
    env: 'PROVIDER_LIST_LAG_ALLOWANCE_SECONDS',
    ...sec('how long a new message may be missing from Twilio list reads', 60, 60),
    local: '60 (`npm start`: 0 for its simulator)',
  },
  twilioAbsenceProbeTo: {
    env: 'PROVIDER_ABSENCE_PROBE_TO',
    unit: 'text',
    local: 'unset (`npm start`: a number of its simulator)',
    aws: 'unset',
    description:
      'a number you own (E.164, best a Twilio number of the account): with `PROVIDER_MESSAGING_SERVICE_SID` and redaction `off`, absence is proven in a quiet account by a scheduled message to it, canceled at once ([providers/twilio.md](providers/twilio.md))',
    scope: 'service',
  },
  twilioAuthTokenSecret: {
    env: 'PROVIDER_AUTH_TOKEN_SECRET_ARN',
    unit: 'text',
    aws: 'set by the stack (Twilio)',
    description: 'Secrets Manager secret with the Twilio auth token; read on first use',
    scope: 'service',
  },
  sns: {
    env: 'SNS_SENDER_ID, SNS_DELIVERY_LOG_GROUPS',
    unit: 'list',
    aws: 'set by the stack (SNS)',
    description: 'SNS sender id; the delivery-status log groups the reconciler reads',
    scope: 'service',
  },
  eum: {
    env: 'EUM_ORIGINATION_IDENTITY, EUM_CONFIGURATION_SET, EUM_MAX_PRICE, EUM_PROTECT_CONFIGURATION_ID, EUM_MESSAGE_FEEDBACK, EUM_EVENTS_TOPIC_ARN',
    unit: 'text',
    aws: 'set by the stack (End User Messaging)',
    description: 'End User Messaging settings ([providers/aws.md](providers/aws.md))',
    scope: 'service',
  },
  awsEndpoints: {
    env: 'SNS_ENDPOINT, EUM_ENDPOINT, LOGS_ENDPOINT',
    unit: 'url',
    local: 'the AWS simulator',
    description: 'where the SDK clients go with `PROVIDER=sns` / `eum` (unset in AWS)',
    scope: 'service',
  },
  // Keys.
  cipher: {
    env: 'CIPHER',
    unit: 'text',
    local: 'local',
    aws: 'kms',
    description: '`local` (AES-256-GCM with `LOCAL_DATA_KEY`) or `kms` (`KMS_KEY_ID`)',
    scope: 'service',
  },
  kmsKey: {
    env: 'KMS_KEY_ID',
    unit: 'text',
    aws: 'set by the stack',
    description: 'the KMS key of the envelope encryption (`CIPHER=kms`)',
    scope: 'service',
  },
  localKeys: {
    env: 'LOCAL_DATA_KEY, FINGERPRINT_KEY',
    unit: 'text',
    local: 'random per `npm start`',
    description: '32 bytes, hex or base64',
    scope: 'service',
  },
  fingerprintKeySecret: {
    env: 'FINGERPRINT_KEY_SECRET_ARN, FINGERPRINT_KEY_PARAMETER',
    unit: 'text',
    aws: 'set by the stack',
    description:
      'the fingerprint key in Secrets Manager (generated by the stack unless given) or an SSM SecureString',
    scope: 'service',
  },
  // The local stack only.
  ports: {
    env: 'PORT, SIM_PORT, DYNAMODB_PORT, SQS_PORT',
    unit: 'count',
    local: '3000, 4010, 8000, 4566',
    description: 'local API, simulator and emulator ports',
    scope: 'local',
  },
  reconcileInterval: {
    env: 'RECONCILE_INTERVAL_SECONDS',
    unit: 's',
    local: 5,
    aws: 'the schedule, 1 minute',
    description: 'local reconciler interval',
    scope: 'local',
  },
  reconcileWorkers: {
    env: 'RECONCILE_WORKER_CONCURRENCY',
    unit: 'count',
    local: 2,
    aws: "the event source's `maxConcurrency`",
    description: 'local reconcile-queue consumers',
    scope: 'local',
  },
  reconcilePollWorkers: {
    env: 'RECONCILE_POLL_WORKER_CONCURRENCY',
    unit: 'count',
    local: 2,
    aws: "the poll queue's event source `maxConcurrency`",
    description: 'local status-poll-queue consumers',
    scope: 'local',
  },
  localQueues: {
    env: 'QUEUE_VISIBILITY_TIMEOUT_SECONDS, MAX_RECEIVE_COUNT',
    unit: 'count',
    local: '30, 5',
    description: 'local queue settings',
    scope: 'local',
  },
  console: {
    env: 'CONSOLE_ENABLED',
    unit: 'on/off',
    local: 'true',
    description: 'serve `/console` from the local stack',
    scope: 'local',
  },
} as const satisfies Record<string, Setting>;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads a numeric setting: its default when unset or empty, otherwise a number that meets the
 * setting's constraints (zod), or an error naming the variable.
 */
export function readNumber(env: Env, setting: Setting, fallback?: number): number {
  const raw = env[setting.env];
  const defaultValue = fallback ?? (typeof setting.local === 'number' ? setting.local : undefined);
  if (raw === undefined || raw.trim() === '') {
    if (defaultValue === undefined) throw new Error(`${setting.env} has no default`);
    return defaultValue;
  }
  let schema = z.coerce.number({ error: 'must be a number' }).refine(Number.isFinite, 'must be a number');
  const min = setting.number?.min;
  if (min !== undefined) schema = schema.refine((v) => v >= min, `must be at least ${min}`);
  if (setting.number?.integer) schema = schema.refine(Number.isInteger, 'must be a whole number');
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`${setting.env} ${parsed.error.issues[0]?.message ?? 'is invalid'}, got "${raw}"`);
  }
  return parsed.data;
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
  const rows = (scope: Setting['scope']) =>
    Object.values(SETTINGS as Record<string, Setting>)
      .filter((s) => s.scope === scope)
      .map(
        (s) =>
          `| ${s.env
            .split(', ')
            .map((name) => `\`${name}\``)
            .join(', ')} | ${s.unit} | ${cell(s.local)} | ${cell(s.aws)} | ${s.description} |`,
      );
  const header = ['| Variable | Unit | Default (local) | AWS | Meaning |', '| --- | --- | --- | --- | --- |'];
  return [
    '# Configuration',
    '',
    'Back to the [README](../README.md). Generated from `shared/settings.ts` by `npm run docs:config`',
    '(a unit test fails when this file is not current): edit the table there, not here.',
    '',
    'Every setting is an environment variable. The CDK stack writes the AWS column into every',
    "function's environment; `npm start`, the tests and the CLI use the local defaults.",
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
    'The simulator alone: `npx tsx local/simulator/main.ts` (reads `SIM_PORT`, `SIM_HOST` (a loopback',
    'address), `SIM_SENT_DELAY_MS`, `SIM_DELIVERED_DELAY_MS`, `FINGERPRINT_KEY`, `PROVIDER_AUTH_TOKEN`).',
    '',
  ].join('\n');
}
