import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Stack } from 'aws-cdk-lib';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

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
}

/** The provider simulator reachable at `baseUrl` (test environments only; no secret needed). */
export interface SimulatorProviderSettings {
  readonly kind: 'simulator';
  readonly baseUrl: string;
}

/** Which SMS provider the functions use (`PROVIDER`). */
export type ProviderSettings = SnsProviderSettings | TwilioProviderSettings | SimulatorProviderSettings;

/** Timing settings handed to the functions (DESIGN.md sections 1 and 8). */
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
  readonly timing?: TimingSettings;
  /**
   * Name of the SSM SecureString parameter that holds the fingerprint key (at least 32 bytes,
   * hex or base64). It is not created by the stack (CloudFormation cannot create SecureStrings).
   * @default '/reset-notifier/fingerprint-key'
   */
  readonly fingerprintKeyParameterName?: string;
  /** The KMS key of that parameter, when it is not the AWS managed `aws/ssm` key. @default - aws/ssm */
  readonly fingerprintKeyEncryptionKey?: IKey;
  /** Retention of the functions' and the API's log groups. @default THREE_MONTHS */
  readonly logRetention?: RetentionDays;
  /** Stage throttling of the HTTP API. @default { rateLimit: 50, burstLimit: 100 } */
  readonly apiThrottle?: { readonly rateLimit: number; readonly burstLimit: number };
  /** Principals (e.g. the auth service's role) granted `execute-api:Invoke` on every route. @default - none */
  readonly apiInvokers?: readonly IGrantable[];
  /** Records per sender invocation (handled in parallel). @default 10 */
  readonly senderBatchSize?: number;
  /** At most this many concurrent sender invocations (bounds the provider's request rate). @default 10 */
  readonly senderMaxConcurrency?: number;
  /** Alarms notify this topic when set. @default - alarms without actions */
  readonly alarmTopic?: ITopic;
  /** Age of the oldest `dispatch_unknown` that raises an alarm. @default 15 minutes */
  readonly dispatchUnknownAgeAlarm?: Duration;
  /** Unknown provider outcomes, in percent of sends over 5 minutes, that raise an alarm. @default 10 */
  readonly unknownOutcomeRateAlarmPercent?: number;
  /** CloudWatch namespace of the service's log-derived metrics. @default `ResetNotifier/<stack name>` */
  readonly metricsNamespace?: string;
  readonly code?: FunctionCodeSettings;
}

/** The props with every default applied and checked. */
export interface ResolvedSettings {
  readonly provider: ProviderSettings;
  readonly evidenceRetentionDays: number;
  readonly reconcileSchedule: Duration;
  readonly allowedDestinations: readonly string[];
  readonly maxExpiryHours: number;
  readonly timing: Required<TimingSettings>;
  readonly fingerprintKeyParameterName: string;
  readonly fingerprintKeyEncryptionKey?: IKey;
  readonly logRetention: RetentionDays;
  readonly apiThrottle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly apiInvokers: readonly IGrantable[];
  readonly senderTimeout: Duration;
  readonly senderBatchSize: number;
  readonly senderMaxConcurrency: number;
  readonly alarmTopic?: ITopic;
  readonly dispatchUnknownAgeAlarm: Duration;
  readonly unknownOutcomeRateAlarmPercent: number;
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
  reconcileWorker: 'reconcile-worker.ts',
} as const;

export const DEFAULT_FINGERPRINT_KEY_PARAMETER = '/reset-notifier/fingerprint-key';
/** The sender's Lambda timeout: the provider call, the lease writes and a margin. */
const SENDER_TIMEOUT = Duration.seconds(30);

/** Applies defaults and rejects settings that cannot work, with the prop's name in the message. */
export function resolveSettings(scope: Construct, props: ResetNotifierProps): ResolvedSettings {
  const fail = (message: string): never => {
    throw new Error(`ResetNotifier: ${message}`);
  };
  const provider = props.provider ?? { kind: 'sns' };
  const evidenceRetentionDays = (props.evidenceRetention ?? Duration.days(400)).toDays({ integral: false });
  if (!Number.isInteger(evidenceRetentionDays) || evidenceRetentionDays < 1) {
    fail('evidenceRetention must be a whole number of days, at least 1');
  }
  const reconcileSchedule = props.reconcileSchedule ?? Duration.minutes(1);
  const scheduleMinutes = reconcileSchedule.toMinutes({ integral: false });
  if (!Number.isInteger(scheduleMinutes) || scheduleMinutes < 1) {
    fail('reconcileSchedule must be a whole number of minutes, at least 1');
  }
  const allowedDestinations = props.allowedDestinations ?? [];
  for (const prefix of allowedDestinations) {
    if (!/^\+[1-9]\d{0,14}$/.test(prefix))
      fail(`allowedDestinations: "${prefix}" is not an E.164 prefix like +1 or +44`);
  }
  const maxExpiryHours = (props.maxExpiry ?? Duration.hours(24)).toHours({ integral: false });
  if (!Number.isInteger(maxExpiryHours) || maxExpiryHours < 1)
    fail('maxExpiry must be a whole number of hours');

  const t = props.timing ?? {};
  const timing: Required<TimingSettings> = {
    dispatchMargin: t.dispatchMargin ?? Duration.seconds(5),
    providerTimeout: t.providerTimeout ?? Duration.seconds(5),
    reconcileSettle: t.reconcileSettle ?? Duration.minutes(2),
    statusHorizon: t.statusHorizon ?? Duration.hours(1),
    statusPoll: t.statusPoll ?? Duration.minutes(1),
    queueSafetyNet: t.queueSafetyNet ?? Duration.minutes(5),
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
  const apiThrottle = props.apiThrottle ?? { rateLimit: 50, burstLimit: 100 };
  if (!(apiThrottle.rateLimit > 0) || !(apiThrottle.burstLimit > 0))
    fail('apiThrottle limits must be positive');

  const parameterName = props.fingerprintKeyParameterName ?? DEFAULT_FINGERPRINT_KEY_PARAMETER;
  if (!/^\/?[A-Za-z0-9_.\-/]+$/.test(parameterName))
    fail('fingerprintKeyParameterName is not an SSM parameter name');

  if (provider.kind === 'twilio' && (provider.accountSid === '' || provider.from === '')) {
    fail('provider (twilio) needs accountSid and from');
  }
  if (provider.kind === 'simulator' && !/^https?:\/\//.test(provider.baseUrl)) {
    fail('provider (simulator) needs an http(s) baseUrl');
  }
  const projectRoot = props.code?.projectRoot ?? PACKAGE_ROOT;
  const unknownOutcomeRateAlarmPercent = props.unknownOutcomeRateAlarmPercent ?? 10;
  if (!(unknownOutcomeRateAlarmPercent > 0 && unknownOutcomeRateAlarmPercent <= 100)) {
    fail('unknownOutcomeRateAlarmPercent must be in (0, 100]');
  }

  return {
    provider,
    evidenceRetentionDays,
    reconcileSchedule,
    allowedDestinations,
    maxExpiryHours,
    timing,
    fingerprintKeyParameterName: parameterName,
    ...(props.fingerprintKeyEncryptionKey === undefined
      ? {}
      : { fingerprintKeyEncryptionKey: props.fingerprintKeyEncryptionKey }),
    logRetention: props.logRetention ?? RetentionDays.THREE_MONTHS,
    apiThrottle,
    apiInvokers: props.apiInvokers ?? [],
    senderTimeout: SENDER_TIMEOUT,
    senderBatchSize,
    senderMaxConcurrency,
    ...(props.alarmTopic === undefined ? {} : { alarmTopic: props.alarmTopic }),
    dispatchUnknownAgeAlarm: props.dispatchUnknownAgeAlarm ?? Duration.minutes(15),
    unknownOutcomeRateAlarmPercent,
    metricsNamespace: props.metricsNamespace ?? `ResetNotifier/${Stack.of(scope).stackName}`,
    code: {
      entryDirectory: props.code?.entryDirectory ?? resolve(projectRoot, 'functions'),
      projectRoot,
      depsLockFilePath: props.code?.depsLockFilePath ?? resolve(projectRoot, 'package-lock.json'),
    },
  };
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
