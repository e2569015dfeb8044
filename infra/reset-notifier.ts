import { Aspects } from 'aws-cdk-lib';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { SERVICE_NAME } from '../shared/handlers/service-metrics.js';
import { providerInfra } from '../shared/providers/infra-registry.js';
import { SETTINGS, settingsEnv } from '../shared/settings.js';
import { Api } from './constructs/api.js';
import { AwsSmsResources } from './constructs/aws-sms.js';
import { ProtectPhoneNumbersInLogs } from './constructs/log-protection.js';
import { Observability } from './constructs/observability.js';
import { Pipeline } from './constructs/pipeline.js';
import { enableActiveTracing, ServiceFunction } from './constructs/service-function.js';
import { Storage } from './constructs/storage.js';
import { type ResetNotifierProps, type ResolvedSettings, resolveSettings } from './settings.js';

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
        fn.addEnvironment(SETTINGS.twilioStatusCallbackBase.env, this.api.receiptsUrl);
      }
    }
    this.observability = new Observability(this, 'Observability', {
      settings: this.settings,
      pipeline: this.pipeline,
      api: this.api,
      ...(this.awsSms.keptReceipts === undefined ? {} : { keptReceipts: this.awsSms.keptReceipts }),
    });
    // Every function, the providers' included: X-Ray only when the deployment asks for it.
    if (this.settings.tracing) {
      for (const fn of this.node.findAll().filter((c) => c instanceof ServiceFunction)) {
        enableActiveTracing(fn);
      }
    }
    // Every log group, the SNS delivery-status ones included: phone numbers are masked.
    Aspects.of(this).add(new ProtectPhoneNumbersInLogs());
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
  const { timing, providers } = settings;
  const env: Record<string, string> = {
    ...settingsEnv({
      powertoolsServiceName: SERVICE_NAME,
      // Where Powertools `Metrics` publishes the service's EMF metrics (the alarms read them there).
      powertoolsMetricsNamespace: settings.metricsNamespace,
      tableName: storage.table.tableName,
      // The primary; with several providers `PROVIDERS` lists them in order, the primary first.
      provider: providers[0].kind,
      providers: providers.length > 1 ? providers.map((provider) => provider.kind) : undefined,
      cipher: 'kms',
      kmsKey: storage.fieldKey.keyArn,
    }),
    ...storage.fingerprintKeyEnvironment,
    ...settingsEnv({
      fingerprintKeyVersion: settings.fingerprintKeyVersion,
      evidenceRetention: settings.evidenceRetentionDays,
      maxExpiry: settings.maxExpiryHours,
      dispatchMargin: timing.dispatchMargin.toSeconds(),
      providerTimeout: timing.providerTimeout.toMilliseconds(),
      reconcileSettle: timing.reconcileSettle.toSeconds(),
      statusHorizon: timing.statusHorizon.toSeconds(),
      statusPoll: timing.statusPoll.toSeconds(),
      queueSafetyNet: timing.queueSafetyNet.toSeconds(),
    }),
    ...settings.abuseLimitEnvironment,
    ...settingsEnv({
      allowedDestinationPrefixes:
        settings.allowedDestinations.length > 0 ? settings.allowedDestinations : undefined,
    }),
  };
  // Every provider's own settings, from its deploy side (shared/providers/<kind>/infra.ts); no two
  // listed providers write one variable (infra/settings.ts refuses that).
  for (const provider of providers) Object.assign(env, providerInfra(provider).environment(scope, provider));
  return env;
}
