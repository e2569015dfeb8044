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
import type { SmsProvider } from '../domain/provider.js';
import { createApiHandler, REFUSAL_LOG_MESSAGE } from '../handlers/api-handler.js';
import { createForwarderHandler } from '../handlers/forwarder-handler.js';
import { createTwilioReceiptsHandler, RECEIPT_SIGNATURE_FAILURES } from '../handlers/receipts-handler.js';
import { createReconcileWorkerHandler } from '../handlers/reconcile-worker-handler.js';
import { createReconcilerHandler } from '../handlers/reconciler-handler.js';
import { createSenderHandler } from '../handlers/sender-handler.js';
import type { Cipher } from '../ports/cipher.js';
import type { DispatchQueue } from '../ports/queue.js';
import type { NotificationStore } from '../ports/store.js';
import { createEumReceiptsHandler } from '../providers/eum/index.js';
import type { StepHook } from '../usecases/dispatch-notification.js';
import { ingestReceipt } from '../usecases/ingest-receipt.js';
import type { ItemErrorReport } from '../usecases/reconcile-due.js';
import { keepProviderMessageIds } from './outcome-write.js';
import { providerFor } from './provider.js';
import { queueFor } from './queue.js';
import { twilioAuthTokenFor } from './receipts.js';
import { lookupBoundedProvider, reconcileQueueFor } from './reconcile.js';
import { cipherFor, fingerprinterFor } from './secrets.js';
import { storeFor } from './store.js';

/** The service's name in every log line and metric. */
export const SERVICE_NAME = 'reset-notifier';

/**
 * What handlers are built from. A Lambda entry passes none of them: each is built from the settings
 * when a handler needs it, so a bundle carries only its own SDK clients. The local stack passes the
 * parts it shares between the handlers of one process (and wraps some for fault injection); the
 * handlers themselves, their log lines and their metrics are the same either way.
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
  /** Counts one rejected status callback; default: an EMF metric line (the alarm's source). */
  readonly countSignatureFailure?: () => void;
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
  return {
    clock,
    logger,
    store: () => parts.store ?? storeFor(config),
    queue: () => parts.queue ?? queueFor(config),
    cipher: () => parts.cipher ?? cipherFor(config, clock),
    fingerprinter: fingerprinterOnce,
    provider: async () => parts.provider ?? providerFor(config, clock, await fingerprinterOnce()),
  };
}

/** `POST /v1/notifications`, `GET /v1/notifications/{key}`, the confirmation route. */
export async function composeApi(config: ServiceConfig, parts: HandlerParts = {}) {
  const p = partsOf(config, parts);
  const { logger } = p;
  const provider = await p.provider();
  return createApiHandler({
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
    onRefusal: (refusal) => logger.info(REFUSAL_LOG_MESSAGE, { ...refusal }),
    // Confirmations are forwarded to the provider's feedback API.
    feedback: provider,
    onFeedbackFailure: (detail) => logger.warn('confirmation not forwarded', { ...detail }),
  });
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
  /** Test seam of the dispatch use case (crash injection by the chaos driver). */
  readonly onStep?: StepHook;
}

/** The dispatch queue consumer: one dispatch per message. The log lines feed the alarms' metric filters. */
export async function composeSender(
  config: ServiceConfig,
  parts: HandlerParts = {},
  options: SenderOptions = {},
) {
  const p = partsOf(config, parts);
  const { logger } = p;
  return createSenderHandler({
    // The id a provider returned is the only way to find the message again: its write is retried.
    store: keepProviderMessageIds(p.store(), {
      clock: p.clock,
      policy: config.policy,
      onRecovered: (key, how) => logger.warn('provider message id recovered', { idempotency_key: key, how }),
    }),
    cipher: p.cipher(),
    provider: await p.provider(),
    clock: p.clock,
    policy: config.policy,
    owner: options.owner ?? `sender-${randomUUID()}`,
    receiptGraceMs: config.receiptGraceMs,
    ...(options.onStep ? { onStep: options.onStep } : {}),
    onReport: (key, report) => logger.info('dispatch', { idempotency_key: key, ...report }),
    onError: (key, error) => logger.error('dispatch failed', { idempotency_key: key, error: error as Error }),
  });
}

/** What handling one due key needs, the same for the scheduled pass and the reconcile workers. */
async function reconcileItemDeps(config: ServiceConfig, p: ReturnType<typeof partsOf>) {
  return {
    store: p.store(),
    cipher: p.cipher(),
    provider: lookupBoundedProvider(config, await p.provider(), p.clock),
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
  return createReconcilerHandler({
    ...(await reconcileItemDeps(config, p)),
    ...(reconcileQueue ? { reconcileQueue } : {}),
    maxItems: config.reconcileMaxItemsPerPass,
    resweepMs: config.reconcileResweepMs,
    onSummary: (summary) => p.logger.info('reconciled', { ...summary }),
  });
}

/** The reconcile queue consumer: one due key per message (lookups and expiry; never sends). */
export async function composeReconcileWorker(config: ServiceConfig, parts: HandlerParts = {}) {
  const p = partsOf(config, parts);
  return createReconcileWorkerHandler({
    ...(await reconcileItemDeps(config, p)),
    onSummary: (summary) => p.logger.info('reconcile batch', { ...summary }),
  });
}

/** `POST /v1/receipts/twilio`: Twilio status callbacks, signature checked before anything is read. */
export function composeReceipts(config: ServiceConfig, parts: HandlerParts = {}) {
  const p = partsOf(config, parts);
  const { logger } = p;
  const countSignatureFailure = parts.countSignatureFailure ?? signatureFailureMetric();
  return createTwilioReceiptsHandler({
    store: p.store(),
    clock: p.clock,
    policy: config.policy,
    authToken: twilioAuthTokenFor(config),
    ...(config.providerStatusCallbackBase ? { publicBase: config.providerStatusCallbackBase } : {}),
    countSignatureFailure,
    log: (message, fields) => logger.info(message, { ...fields }),
    logError: (error) => logger.error('receipt failed', error as Error),
  });
}

/** One EMF line per rejected callback: the alarm counts them; nothing else about the request is kept. */
function signatureFailureMetric(): () => void {
  // Namespace from POWERTOOLS_METRICS_NAMESPACE (the stack sets the service's namespace).
  const metrics = new Metrics({ serviceName: SERVICE_NAME });
  return () => {
    metrics.addMetric(RECEIPT_SIGNATURE_FAILURES, MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
  };
}

/** The SNS subscription of End User Messaging events: events of our configuration set become receipts. */
export function composeEumReceipts(config: ServiceConfig, parts: HandlerParts = {}) {
  const p = partsOf(config, parts);
  if (!config.eumEventsTopicArn) throw new InvalidConfigurationError('EUM_EVENTS_TOPIC_ARN is required');
  return createEumReceiptsHandler({
    ingest: ingestReceipt,
    topicArn: config.eumEventsTopicArn,
    store: p.store(),
    clock: p.clock,
    policy: config.policy,
    // Reports carry the message id, our reference and the event type; never the number.
    onReport: (report) => p.logger.info('eum receipt', { ...report }),
  });
}

/** A handler as Lambda calls it. */
type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;

/**
 * A Lambda entry point from one of the `compose*` builders: the settings from the environment, one
 * logger that every log line of the invocation goes through, with the Lambda context (request id,
 * function name, cold start) added to each line by Powertools' middleware.
 */
export async function lambdaEntry<E, R>(
  build: (config: ServiceConfig, parts: HandlerParts) => LambdaHandler<E, R> | Promise<LambdaHandler<E, R>>,
): Promise<LambdaHandler<E, R>> {
  const logger = new Logger({ serviceName: SERVICE_NAME });
  const handler = await build(loadConfig(), { logger });
  return middy<E, R>((event: E, context: Context) => handler(event, context)).use(
    injectLambdaContext(logger, { resetKeys: true }),
  );
}
