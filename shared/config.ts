import { DEFAULT_POLICY, type DispatchPolicy } from './domain/policy.js';

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
  /** `simulator` (Twilio-compatible simulator), `twilio` or `sns`. */
  readonly provider: 'simulator' | 'twilio' | 'sns';
  readonly providerBaseUrl: string;
  readonly providerAccountSid: string;
  readonly providerAuthToken: string;
  /** In AWS the Twilio auth token lives in Secrets Manager; read once per container. */
  readonly providerAuthTokenSecretArn?: string;
  readonly snsSenderId?: string;
  readonly snsDeliveryLogGroups: readonly string[];
  /** E.164 prefixes the API accepts (empty = any valid number). */
  readonly allowedDestinationPrefixes: readonly string[];
  readonly providerFrom: string;
  /** Where the provider posts delivery receipts (Twilio StatusCallback base); simulator default when unset. */
  readonly providerStatusCallbackBase?: string;
  /** Upper bound of one status lookup (reads only). */
  readonly providerLookupTimeoutMs: number;
  /** `local` (AES-256-GCM key from LOCAL_DATA_KEY) or `kms` (KMS_KEY_ID). */
  readonly cipher: 'local' | 'kms';
  readonly localDataKey?: string;
  readonly kmsKeyId?: string;
  /** Fingerprint key: inline hex/base64 (local) or an SSM SecureString parameter name (AWS). */
  readonly fingerprintKey?: string;
  readonly fingerprintKeyParameter?: string;
  readonly evidenceRetentionDays: number;
  readonly maxExpiryHours: number;
  /** The reconcile queue (scheduled pass -> reconcile workers); unset: the pass handles keys itself. */
  readonly reconcileQueueUrl?: string;
  /** Due entries one scheduled pass reads, shared between the shards. */
  readonly reconcileMaxItemsPerPass: number;
  /** Lookups per second per container (token bucket); 0 = unbounded. Default: SNS 4, others 0. */
  readonly providerLookupRatePerSecond?: number;
  /** With a provider that pushes receipts, `sent` is status-polled only after this grace time. */
  readonly receiptGraceMs: number;
  readonly policy: DispatchPolicy;
}

type Env = Readonly<Record<string, string | undefined>>;

function num(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

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
  const seconds = (name: string, fallbackMs: number) => num(env, name, fallbackMs / 1000) * 1000;
  return {
    tableName: env.TABLE_NAME ?? 'reset-notifier',
    dispatchQueueUrl: env.DISPATCH_QUEUE_URL ?? '',
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...opt('dynamodbEndpoint', env.DYNAMODB_ENDPOINT),
    ...opt('sqsEndpoint', env.SQS_ENDPOINT),
    provider: oneOf(env, 'PROVIDER', ['simulator', 'twilio', 'sns'] as const, 'simulator'),
    providerBaseUrl: env.PROVIDER_BASE_URL ?? `http://127.0.0.1:${env.SIM_PORT ?? '4010'}`,
    providerAccountSid: env.PROVIDER_ACCOUNT_SID ?? 'ACsimulator',
    providerAuthToken: env.PROVIDER_AUTH_TOKEN ?? 'simulator-token',
    providerFrom: env.PROVIDER_FROM ?? '+15005550006',
    ...opt('providerAuthTokenSecretArn', env.PROVIDER_AUTH_TOKEN_SECRET_ARN),
    ...opt('snsSenderId', env.SNS_SENDER_ID),
    snsDeliveryLogGroups: list(env.SNS_DELIVERY_LOG_GROUPS),
    allowedDestinationPrefixes: list(env.ALLOWED_DESTINATION_PREFIXES),
    ...opt('providerStatusCallbackBase', env.PROVIDER_STATUS_CALLBACK_BASE),
    providerLookupTimeoutMs: num(env, 'PROVIDER_LOOKUP_TIMEOUT_MS', num(env, 'PROVIDER_TIMEOUT_MS', 3000)),
    cipher: oneOf(env, 'CIPHER', ['local', 'kms'] as const, 'local'),
    ...opt('localDataKey', env.LOCAL_DATA_KEY),
    ...opt('kmsKeyId', env.KMS_KEY_ID),
    ...opt('fingerprintKey', env.FINGERPRINT_KEY),
    ...opt('fingerprintKeyParameter', env.FINGERPRINT_KEY_PARAMETER),
    evidenceRetentionDays: num(env, 'EVIDENCE_RETENTION_DAYS', 400),
    maxExpiryHours: num(env, 'MAX_EXPIRY_HOURS', 24),
    ...opt('reconcileQueueUrl', env.RECONCILE_QUEUE_URL),
    reconcileMaxItemsPerPass: num(env, 'RECONCILE_MAX_ITEMS_PER_PASS', 1_000),
    ...(env.PROVIDER_LOOKUP_RATE_PER_SECOND === undefined || env.PROVIDER_LOOKUP_RATE_PER_SECOND === ''
      ? {}
      : { providerLookupRatePerSecond: num(env, 'PROVIDER_LOOKUP_RATE_PER_SECOND', 0) }),
    receiptGraceMs: seconds('RECEIPT_GRACE_SECONDS', 120_000),
    policy: {
      ...DEFAULT_POLICY,
      dispatchMarginMs: seconds('DISPATCH_MARGIN_SECONDS', DEFAULT_POLICY.dispatchMarginMs),
      providerTimeoutMs: num(env, 'PROVIDER_TIMEOUT_MS', DEFAULT_POLICY.providerTimeoutMs),
      reconcileSettleMs: seconds('RECONCILE_SETTLE_SECONDS', DEFAULT_POLICY.reconcileSettleMs),
      statusHorizonMs: seconds('STATUS_HORIZON_SECONDS', DEFAULT_POLICY.statusHorizonMs),
      statusPollMs: seconds('STATUS_POLL_SECONDS', DEFAULT_POLICY.statusPollMs),
      queueSafetyNetMs: seconds('QUEUE_SAFETY_NET_SECONDS', DEFAULT_POLICY.queueSafetyNetMs),
      leaseSlackMs: num(env, 'LEASE_SLACK_MS', DEFAULT_POLICY.leaseSlackMs),
      backoffBaseMs: num(env, 'BACKOFF_BASE_MS', DEFAULT_POLICY.backoffBaseMs),
      backoffMaxMs: num(env, 'BACKOFF_MAX_MS', DEFAULT_POLICY.backoffMaxMs),
      maxAttempts: num(env, 'MAX_ATTEMPTS', DEFAULT_POLICY.maxAttempts),
    },
  };
}
