import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { commandImageOf } from '../adapters/dynamodb/stream-image.js';
import { abuseLimitsOf, loadConfig, type ServiceConfig } from '../config.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { InvalidConfigurationError } from '../domain/errors.js';
import type { Fingerprinter } from '../domain/fingerprint.js';
import { createApiHandler, REFUSAL_LOG_MESSAGE } from '../handlers/api-handler.js';
import { createForwarderHandler } from '../handlers/forwarder-handler.js';
import { createTwilioReceiptsHandler } from '../handlers/receipts-handler.js';
import { createReconcileWorkerHandler } from '../handlers/reconcile-worker-handler.js';
import { createReconcilerHandler } from '../handlers/reconciler-handler.js';
import { createSenderHandler } from '../handlers/sender-handler.js';
import { SERVICE_METRICS, SERVICE_NAME } from '../handlers/service-metrics.js';
import type { Cipher } from '../ports/cipher.js';
import type { ProviderHealth } from '../ports/provider-health.js';
import type { DispatchQueue } from '../ports/queue.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import type { NotificationStore } from '../ports/store.js';
import { createEumReceiptsHandler } from '../providers/eum/index.js';
import { DESTINATION_FAULTS } from '../providers/registry.js';
import { SETTINGS } from '../settings.js';
import type { DispatchDeps, DispatchReport } from '../usecases/dispatch-notification.js';
import { ingestReceipt } from '../usecases/ingest-receipt.js';
import { realSleep } from '../usecases/rate-limit.js';
import type { ReconcileSummary } from '../usecases/reconcile-due.js';
import type { ItemErrorReport } from '../usecases/reconcile-key.js';
import { countingFinalOutcomes, providerEventReporter } from './outcome-metrics.js';
import { keepProviderMessageIds } from './outcome-write.js';
import { providerFor, providersFor, receiptsSettleFor } from './provider.js';
import { providerHealthFor } from './provider-health.js';
import { queueFor } from './queue.js';
import { keepReceiptsFor, twilioAuthTokenFor, WELL_KNOWN_TWILIO_AUTH_TOKENS } from './receipts.js';
import { lookupBoundedProvider, pollQueueFor, reconcileQueueFor } from './reconcile.js';
import { cipherFor, fingerprinterFor } from './secrets.js';
import { serverTimeOf, storeFor } from './store.js';

/**
 * Where handlers record their metrics: Powertools `Metrics` in Lambda (EMF on stdout, which
 * CloudWatch turns into the metrics the alarms read), nothing elsewhere.
 */
export interface MetricsSink {
  addMetric(name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number): void;
  hasStoredMetrics(): boolean;
  publishStoredMetrics(): void;
}

/** Outside Lambda (local stack, tests, CLI): no EMF lines to nowhere. */
const NO_METRICS: MetricsSink = {
  addMetric: () => undefined,
  hasStoredMetrics: () => false,
  publishStoredMetrics: () => undefined,
};

/**
 * What handlers are built from. A Lambda entry passes the logger and the metrics; everything else
 * is built from the settings when a handler needs it, so a bundle carries only its own SDK clients.
 * The local stack passes the parts it shares between the handlers of one process (and wraps some for
 * fault injection); the handlers themselves and their log lines are the same either way.
 */
export interface HandlerParts {
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly store?: NotificationStore;
  readonly queue?: DispatchQueue;
  readonly cipher?: Cipher;
  readonly fingerprinter?: Fingerprinter;
  /** The provider as configured; the reconciler's lookups are bounded on top of it here. */
  readonly provider?: SmsProvider;
  /**
   * Every listed provider in order (`PROVIDERS`), the first standing for `provider`; default: one
   * per listed kind, built from the settings, the first being `provider` (docs/providers/failover.md).
   */
  readonly providers?: readonly SmsProvider[];
  /**
   * The providers' circuits (one per provider, shared by every sender); default: with more than one
   * provider, the table's (`providerHealthFor`, as a sender); with one, none (nothing to route).
   */
  readonly health?: ProviderHealth;
  /** Where the metrics of {@link SERVICE_METRICS} go, published once per invocation; default none. */
  readonly metrics?: MetricsSink;
  /** Counts one rejected status callback; default: the `ReceiptSignatureFailures` metric. */
  readonly countSignatureFailure?: () => void;
  /**
   * The local stack only: its built-in simulator signs status callbacks with the well-known token,
   * which the receipts handler refuses everywhere else (docs/receipts.md#who-is-believed).
   */
  readonly allowWellKnownAuthToken?: boolean;
}

/** The parts every handler shares, built from the settings where not given. */
function partsOf(config: ServiceConfig, parts: HandlerParts) {
  const clock = parts.clock ?? systemClock;
  const logger = parts.logger ?? new Logger({ serviceName: SERVICE_NAME });
  let fingerprinter: Promise<Fingerprinter> | undefined;
  const fingerprinterOnce = () => {
    fingerprinter ??= parts.fingerprinter
      ? Promise.resolve(parts.fingerprinter)
      : fingerprinterFor(config, clock);
    return fingerprinter;
  };
  const metrics = parts.metrics ?? NO_METRICS;
  let primary: Promise<SmsProvider> | undefined;
  const provider = () => {
    primary ??= (async () =>
      parts.provider ??
      providerFor(config, clock, await fingerprinterOnce(), providerEventReporter(logger, metrics)))();
    return primary;
  };
  return {
    clock,
    logger,
    metrics,
    // Every writer's transitions go through this store: final outcomes are counted where they are written.
    store: (raw: NotificationStore = parts.store ?? storeFor(config)) =>
      countingFinalOutcomes(raw, metrics, logger),
    queue: () => parts.queue ?? queueFor(config),
    cipher: () => parts.cipher ?? cipherFor(config, clock),
    fingerprinter: fingerprinterOnce,
    provider,
    providers: async (): Promise<readonly SmsProvider[]> =>
      parts.providers ??
      // One provider: only it (no secret or key read for others that do not exist).
      (config.providers.length < 2 ? [await provider()] : undefined) ??
      providersFor(
        config,
        clock,
        await fingerprinterOnce(),
        providerEventReporter(logger, metrics),
        await provider(),
      ),
  };
}

/** `POST /v1/notifications`, `GET /v1/notifications/{key}`, the confirmation route. */
export async function composeApi(config: ServiceConfig, parts: HandlerParts = {}) {
  const p = partsOf(config, parts);
  const { logger } = p;
  const provider = await p.provider();
  const handler = createApiHandler({
    store: p.store(),
    cipher: p.cipher(),
    fingerprinter: await p.fingerprinter(),
    clock: p.clock,
    policy: config.policy,
    providerName: provider.name,
    maxExpiryMs: config.maxExpiryHours * 3_600_000,
    allowedDestinationPrefixes: config.allowedDestinationPrefixes,
    ...abuseLimitsOf(config),
    logError: (error) => logger.error('unhandled error', error as Error),
    onDeadline: () => logger.warn('request out of time: answered 503'),
    onRefusal: (refusal) => {
      logger.info(REFUSAL_LOG_MESSAGE, { ...refusal });
      p.metrics.addMetric(SERVICE_METRICS.admissionRefusals, MetricUnit.Count, 1);
    },
    // Confirmations are forwarded to the feedback API of the provider the message went through.
    feedback: provider,
    ...(config.providers.length > 1 ? { feedbackOf: feedbackOf(await p.providers()) } : {}),
    onFeedbackFailure: (detail) => logger.warn('confirmation not forwarded', { ...detail }),
  });
  return publishingMetrics(p.metrics, handler);
}

/** The DynamoDB stream consumer: commands that need a dispatch go on the dispatch queue. */
export function composeForwarder(config: ServiceConfig, parts: HandlerParts = {}) {
  const p = partsOf(config, parts);
  return createForwarderHandler({
    queue: p.queue(),
    clock: p.clock,
    readImage: commandImageOf,
    onReport: (report) => p.logger.info('forwarded', { ...report }),
  });
}

/** Options of {@link composeSender} beyond the shared parts. */
export interface SenderOptions {
  /** Identifies this sender in leases; default `sender-<uuid>`. */
  readonly owner?: string;
  /**
   * Decorates the store and provider the dispatch use case is handed, outside the sender's own
   * store wrapper, so it sees the use case's calls (the local stack's fault injection); default none.
   */
  readonly wrapPorts?: (ports: SenderPorts) => SenderPorts;
}

/** The sender's ports a {@link SenderOptions.wrapPorts} decorator may wrap. */
export type SenderPorts = Pick<DispatchDeps, 'store' | 'provider' | 'providers'>;

/** The dispatch queue consumer: one dispatch per message; its metrics count sends, unknowns and failures. */
export async function composeSender(
  config: ServiceConfig,
  parts: HandlerParts = {},
  options: SenderOptions = {},
) {
  const p = partsOf(config, parts);
  const { logger, metrics } = p;
  // The sender's store samples the server time of its answers: its clock is checked against it
  // before each provider attempt (docs/design.md#clock-skew).
  const store = parts.store ?? storeFor(config, undefined, p.clock);
  const serverTime = serverTimeOf(store);
  const ports: SenderPorts = {
    // The id a provider returned is the only way to find the message again: its write is retried.
    store: keepProviderMessageIds(p.store(store), {
      clock: p.clock,
      policy: config.policy,
      onRecovered: (key, how) => logger.warn('provider message id recovered', { idempotency_key: key, how }),
    }),
    provider: await p.provider(),
    ...failoverPorts(await p.providers()),
  };
  const health =
    parts.health ??
    (config.providers.length > 1
      ? providerHealthFor(config, { role: 'sender', logger, metrics })
      : undefined);
  const handler = createSenderHandler({
    ...(options.wrapPorts ? options.wrapPorts(ports) : ports),
    ...(health ? { health } : {}),
    destinationFaults: DESTINATION_FAULTS,
    cipher: p.cipher(),
    clock: p.clock,
    policy: config.policy,
    owner: options.owner ?? `sender-${randomUUID()}`,
    receiptGraceMs: config.receiptGraceMs,
    ...(serverTime ? { serverTime } : {}),
    onReport: (key, report) => {
      logger.info('dispatch', { idempotency_key: key, ...report });
      countSend(metrics, report);
    },
    onError: (key, error) => {
      logger.error('dispatch failed', { idempotency_key: key, error: error as Error });
      metrics.addMetric(SERVICE_METRICS.senderRecordFailures, MetricUnit.Count, 1);
    },
  });
  return publishingMetrics(metrics, handler);
}

/** The feedback API of a listed provider by name (none for a provider without one, or not listed). */
function feedbackOf(providers: readonly SmsProvider[]) {
  return (name: string): Pick<SmsProvider, 'confirm'> | undefined => {
    const provider = providers.find((p) => p.name === name);
    return provider?.confirm ? provider : undefined;
  };
}

/** With more than one provider, the sender's list (docs/providers/failover.md); one: nothing, as before. */
function failoverPorts(providers: readonly SmsProvider[]): Pick<DispatchDeps, 'providers'> {
  return providers.length > 1 ? { providers } : {};
}

/** A provider call (and whether its outcome is unknown): the unknown-rate alarm's two series. */
function countSend(metrics: MetricsSink, report: DispatchReport): void {
  if (report.kind === 'refused') metrics.addMetric(SERVICE_METRICS.senderClockSkew, MetricUnit.Count, 1);
  if (report.kind !== 'sent') return;
  metrics.addMetric(SERVICE_METRICS.providerSends, MetricUnit.Count, 1);
  if (report.outcome === 'unknown')
    metrics.addMetric(SERVICE_METRICS.providerUnknownOutcomes, MetricUnit.Count, 1);
}

/** What handling one due key needs, the same for the scheduled pass and the reconcile workers. */
async function reconcileItemDeps(config: ServiceConfig, p: ReturnType<typeof partsOf>) {
  // Each provider's lookups bounded as its own kind's; with one provider, as before.
  const providers = (await p.providers()).map((provider, i) =>
    lookupBoundedProvider({ ...config, provider: config.providers[i] ?? config.provider }, provider, p.clock),
  );
  const primary = providers[0] ?? lookupBoundedProvider(config, await p.provider(), p.clock);
  return {
    store: p.store(),
    cipher: p.cipher(),
    provider: primary,
    ...(providers.length > 1 ? { providers } : {}),
    queue: p.queue(),
    clock: p.clock,
    policy: config.policy,
    receiptGraceMs: config.receiptGraceMs,
    onItemError: (report: ItemErrorReport) => p.logger.warn('reconcile item failed', { ...report }),
  };
}

/** Options of {@link composeReconciler} beyond the shared parts. */
export interface ReconcilerOptions {
  /**
   * Where the pass puts due keys: default the configured reconcile queue (`RECONCILE_QUEUE_URL`;
   * without one the pass handles every key itself). `null`: handle them inline (operator CLI).
   */
  readonly reconcileQueue?: DispatchQueue | null;
  /** Where the pass puts the poll lane's keys: default the configured `RECONCILE_POLL_QUEUE_URL`. */
  readonly pollQueue?: DispatchQueue;
}

/** The scheduled pass over the due index; never sends. */
export async function composeReconciler(
  config: ServiceConfig,
  parts: HandlerParts = {},
  options: ReconcilerOptions = {},
) {
  const p = partsOf(config, parts);
  const reconcileQueue =
    options.reconcileQueue === null ? undefined : (options.reconcileQueue ?? reconcileQueueFor(config));
  const pollQueue = options.pollQueue ?? pollQueueFor(config);
  const handler = createReconcilerHandler({
    ...(await reconcileItemDeps(config, p)),
    ...(reconcileQueue ? { reconcileQueue } : {}),
    ...(reconcileQueue && pollQueue ? { pollQueue } : {}),
    maxItems: config.reconcileMaxItemsPerPass,
    resweepMs: config.reconcileResweepMs,
    maxRounds: config.reconcileMaxRounds,
    // Several passes per scheduled run only when fanning out; an inline pass (the CLI) is one.
    ...(reconcileQueue && config.reconcilePassesPerRun > 1
      ? {
          passes: {
            count: config.reconcilePassesPerRun,
            spacingMs: config.reconcilePassSpacingMs,
            sleep: realSleep,
          },
        }
      : {}),
    onSummary: (summary) => {
      p.logger.info('reconciled', { ...summary });
      passMetrics(p.metrics, summary);
    },
  });
  return publishingMetrics(p.metrics, handler);
}

/** Per pass: the ages the unknown-age and lag alarms read, and the items it failed. */
function passMetrics(metrics: MetricsSink, summary: ReconcileSummary): void {
  metrics.addMetric(
    SERVICE_METRICS.oldestDispatchUnknownAge,
    MetricUnit.Milliseconds,
    summary.oldestUnknownAgeMs,
  );
  metrics.addMetric(SERVICE_METRICS.oldestDueLag, MetricUnit.Milliseconds, summary.oldestDueLagMs);
  metrics.addMetric(SERVICE_METRICS.reconcileItemErrors, MetricUnit.Count, summary.errors);
}

/** The reconcile queue consumer: one due key per message (lookups and expiry; never sends). */
export async function composeReconcileWorker(config: ServiceConfig, parts: HandlerParts = {}) {
  const p = partsOf(config, parts);
  const handler = createReconcileWorkerHandler({
    ...(await reconcileItemDeps(config, p)),
    onSummary: (summary) => {
      p.logger.info('reconcile batch', { ...summary });
      p.metrics.addMetric(SERVICE_METRICS.reconcileWorkerItemErrors, MetricUnit.Count, summary.errors);
      p.metrics.addMetric(SERVICE_METRICS.reconcilePoisoned, MetricUnit.Count, summary.poisoned);
      p.metrics.addMetric(SERVICE_METRICS.reconcileParked, MetricUnit.Count, summary.parked);
    },
  });
  return publishingMetrics(p.metrics, handler);
}

/** `POST /v1/receipts/twilio`: Twilio status callbacks, signature checked before anything is read. */
export function composeReceipts(config: ServiceConfig, parts: HandlerParts = {}) {
  const p = partsOf(config, parts);
  const { logger } = p;
  const countSignatureFailure =
    parts.countSignatureFailure ??
    (() => p.metrics.addMetric(SERVICE_METRICS.receiptSignatureFailures, MetricUnit.Count, 1));
  const settle = receiptsSettleFor(config);
  const handler = createTwilioReceiptsHandler({
    store: p.store(),
    clock: p.clock,
    policy: config.policy,
    ...(settle ? { receiptsSettle: settle } : {}),
    authToken: twilioAuthTokenFor(config),
    wellKnownTokens: WELL_KNOWN_TWILIO_AUTH_TOKENS,
    ...(parts.allowWellKnownAuthToken === true ? { allowWellKnownToken: true } : {}),
    accountSid: config.providerAccountSid,
    ...(config.providerStatusCallbackBase ? { publicBase: config.providerStatusCallbackBase } : {}),
    countSignatureFailure,
    log: (message, fields) => logger.info(message, { ...fields }),
    logError: (error) => logger.error('receipt failed', error as Error),
  });
  return publishingMetrics(p.metrics, handler);
}

/**
 * `handler`, publishing what an invocation recorded once it ends (answered or thrown): one EMF line
 * per invocation that recorded anything, none (and no Powertools warning) otherwise.
 */
function publishingMetrics<A extends unknown[], R>(
  metrics: MetricsSink,
  handler: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await handler(...args);
    } finally {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}

/** The SNS subscription of End User Messaging events: events of our configuration set become receipts. */
export function composeEumReceipts(config: ServiceConfig, parts: HandlerParts = {}) {
  const p = partsOf(config, parts);
  if (!config.eumEventsTopicArn)
    throw new InvalidConfigurationError(`${SETTINGS.eumEventsTopicArn.env} is required`);
  const keep = keepReceiptsFor(config);
  const settle = receiptsSettleFor(config);
  const handler = createEumReceiptsHandler({
    // The handler hands the use case only its store, clock and policy: the provider check goes in here.
    ingest: settle
      ? (deps, input) => ingestReceipt({ ...deps, receiptsSettle: settle }, input)
      : ingestReceipt,
    topicArn: config.eumEventsTopicArn,
    store: p.store(),
    clock: p.clock,
    policy: config.policy,
    // Reports carry the message id, our reference and the event type; never the number.
    onReport: (report) => p.logger.info('eum receipt', { ...report }),
    // Only the keeper function has a kept-receipts queue (docs/providers/aws.md#kept-receipts-and-redrive).
    ...(keep === undefined ? {} : { keep }),
  });
  // A receipt can make a command final (`undelivered`): its outcome metrics are published too.
  return publishingMetrics(p.metrics, handler);
}

/** A handler as Lambda calls it. */
type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;

/**
 * A Lambda entry point from one of the `compose*` builders: the settings from the environment, one
 * logger that every log line of the invocation goes through, with the Lambda context (request id,
 * function name, cold start) added to each line by Powertools' middleware, and Powertools `Metrics`
 * for the service's metrics (namespace from `POWERTOOLS_METRICS_NAMESPACE`, which the stack sets;
 * `POWERTOOLS_METRICS_DISABLED=true` turns the EMF lines off).
 */
export async function lambdaEntry<E, R>(
  build: (config: ServiceConfig, parts: HandlerParts) => LambdaHandler<E, R> | Promise<LambdaHandler<E, R>>,
): Promise<LambdaHandler<E, R>> {
  const logger = new Logger({ serviceName: SERVICE_NAME });
  // Powertools' own warnings (an unset namespace) go through the logger, as JSON lines.
  const metrics = new Metrics({ serviceName: SERVICE_NAME, logger });
  const handler = await build(loadConfig(), { logger, metrics });
  return middy<E, R>((event: E, context: Context) => handler(event, context)).use(
    injectLambdaContext(logger, { resetKeys: true }),
  );
}
