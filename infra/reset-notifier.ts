import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { SERVICE_NAME } from '../shared/handlers/service-metrics.js';
import { Api } from './constructs/api.js';
import { AwsSmsResources } from './constructs/aws-sms.js';
import { acknowledge } from './constructs/nag.js';
import { Observability } from './constructs/observability.js';
import { Pipeline } from './constructs/pipeline.js';
import { Storage } from './constructs/storage.js';
import {
  eumConfigurationSetName,
  type ResetNotifierProps,
  type ResolvedSettings,
  resolveSettings,
  snsDeliveryLogGroups,
} from './settings.js';

/** `POWERTOOLS_SERVICE_NAME` of every function (the `service` dimension of its metrics). */
export { SERVICE_NAME };

/**
 * reset-notifier as one construct: storage (table + keys), pipeline (forwarder, dispatch queue,
 * sender, reconciler), HTTP API (IAM auth) and observability (alarms, dashboard). Drop it into
 * any stack; every prop has a default (see {@link ResetNotifierProps}).
 *
 * Nothing has to exist before the first deploy: the fingerprint key is generated unless one is
 * given (see `docs/deploy.md`).
 */
export class ResetNotifier extends Construct {
  readonly settings: ResolvedSettings;
  readonly storage: Storage;
  readonly pipeline: Pipeline;
  readonly api: Api;
  readonly observability: Observability;
  /** End User Messaging events or SNS delivery-status logs, for the AWS providers. */
  readonly awsSms: AwsSmsResources;

  constructor(scope: Construct, id: string, props: ResetNotifierProps = {}) {
    super(scope, id);
    this.settings = resolveSettings(this, props);
    this.storage = new Storage(this, 'Storage', { fingerprintKey: this.settings.fingerprintKey });
    this.pipeline = new Pipeline(this, 'Pipeline', {
      settings: this.settings,
      storage: this.storage,
      baseEnvironment: functionEnvironment(this, this.settings, this.storage),
    });
    this.awsSms = new AwsSmsResources(this, 'AwsSms', {
      settings: this.settings,
      storage: this.storage,
      pipeline: this.pipeline,
    });
    this.api = new Api(this, 'Api', {
      settings: this.settings,
      storage: this.storage,
      environment: this.pipeline.environment,
    });
    // Every function that builds the Twilio provider gives Twilio the stack's own receipts URL.
    if (this.api.receiptsUrl !== undefined) {
      for (const fn of [this.pipeline.sender, this.pipeline.reconciler]) {
        fn.addEnvironment('PROVIDER_STATUS_CALLBACK_BASE', this.api.receiptsUrl);
      }
    }
    if (this.settings.provider.kind === 'eum') {
      // User confirmations are forwarded to End User Messaging's feedback API (PutMessageFeedback).
      this.api.handler.addToRolePolicy(
        new PolicyStatement({
          sid: 'ForwardConfirmations',
          actions: ['sms-voice:PutMessageFeedback'],
          resources: ['*'],
        }),
      );
      acknowledge(
        this.api.handler,
        'AwsSolutions-IAM5',
        'PutMessageFeedback names a message id, not a resource ARN this stack can know; the action only records that a user received a message.',
      );
    }
    this.observability = new Observability(this, 'Observability', {
      settings: this.settings,
      pipeline: this.pipeline,
      api: this.api,
    });
  }

  /** The API's base URL. */
  get apiUrl(): string {
    return this.api.url;
  }

  /** Lets `grantee` call every route with SigV4 (`execute-api:Invoke`). */
  grantInvokeApi(grantee: IGrantable): void {
    this.api.grantInvoke(grantee);
  }
}

/**
 * The environment every function gets (names per `shared/config.ts`; same set for all four, so
 * the shared composition root sees one configuration). `DISPATCH_QUEUE_URL` is added by the pipeline.
 */
export function functionEnvironment(
  scope: Construct,
  settings: ResolvedSettings,
  storage: Storage,
): Record<string, string> {
  const { timing, provider } = settings;
  const seconds = (d: { toSeconds(): number }) => String(d.toSeconds());
  const env: Record<string, string> = {
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    // Where Powertools `Metrics` publishes the service's EMF metrics (the alarms read them there).
    POWERTOOLS_METRICS_NAMESPACE: settings.metricsNamespace,
    TABLE_NAME: storage.table.tableName,
    PROVIDER: provider.kind,
    CIPHER: 'kms',
    KMS_KEY_ID: storage.fieldKey.keyArn,
    ...storage.fingerprintKeyEnvironment,
    EVIDENCE_RETENTION_DAYS: String(settings.evidenceRetentionDays),
    MAX_EXPIRY_HOURS: String(settings.maxExpiryHours),
    DISPATCH_MARGIN_SECONDS: seconds(timing.dispatchMargin),
    PROVIDER_TIMEOUT_MS: String(timing.providerTimeout.toMilliseconds()),
    RECONCILE_SETTLE_SECONDS: seconds(timing.reconcileSettle),
    STATUS_HORIZON_SECONDS: seconds(timing.statusHorizon),
    STATUS_POLL_SECONDS: seconds(timing.statusPoll),
    QUEUE_SAFETY_NET_SECONDS: seconds(timing.queueSafetyNet),
    ...settings.abuseLimitEnvironment,
  };
  if (settings.allowedDestinations.length > 0) {
    env.ALLOWED_DESTINATION_PREFIXES = settings.allowedDestinations.join(',');
  }
  switch (provider.kind) {
    case 'sns':
      env.SNS_DELIVERY_LOG_GROUPS = snsDeliveryLogGroups(scope, provider.deliveryLogGroupNames).names.join(
        ',',
      );
      if (provider.senderId !== undefined) env.SNS_SENDER_ID = provider.senderId;
      break;
    case 'eum':
      env.EUM_ORIGINATION_IDENTITY = provider.originationIdentityArn;
      env.EUM_CONFIGURATION_SET = eumConfigurationSetName(provider);
      if (provider.maxPrice !== undefined) env.EUM_MAX_PRICE = provider.maxPrice;
      if (provider.protectConfigurationId !== undefined)
        env.EUM_PROTECT_CONFIGURATION_ID = provider.protectConfigurationId;
      if (provider.messageFeedback === true) env.EUM_MESSAGE_FEEDBACK = 'on';
      break;
    case 'twilio':
      env.PROVIDER_BASE_URL = provider.baseUrl ?? 'https://api.twilio.com';
      env.PROVIDER_ACCOUNT_SID = provider.accountSid;
      env.PROVIDER_FROM = provider.from;
      env.PROVIDER_AUTH_TOKEN_SECRET_ARN = provider.authTokenSecret.secretArn;
      env.PROVIDER_REDACTION = provider.redaction ?? 'on';
      if (provider.messagingServiceSid !== undefined)
        env.PROVIDER_MESSAGING_SERVICE_SID = provider.messagingServiceSid;
      if (provider.absenceProbeTo !== undefined) env.PROVIDER_ABSENCE_PROBE_TO = provider.absenceProbeTo;
      break;
    case 'simulator':
      env.PROVIDER_BASE_URL = provider.baseUrl;
      break;
  }
  return env;
}
