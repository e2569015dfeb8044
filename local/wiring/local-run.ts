import { SETTINGS } from '../../shared/settings.js';
import type { LocalFunction } from '../iam/template.js';
import { checkPattern } from './filter.js';
import {
  type EventSourceWiring,
  type LocalWiring,
  type QueueWiring,
  queueNamedBy,
  queueSource,
  scheduleFor,
  streamSource,
} from './wiring.js';

/**
 * What the local runtime does differently from the template, on purpose; the one place that
 * says so (docs/local.md#what-the-local-runtime-reads-from-the-template). Each is unset unless a
 * caller sets it, and then wins over the template's value: the time scale of tests and chaos
 * (a 2 s visibility timeout, a 250 ms reconcile tick) and their load (pollers per queue).
 * Endpoints and ports are local too; they come from the local settings (`loadLocalConfig`).
 */
export interface LocalOverrides {
  /** Every queue's visibility timeout (`QUEUE_VISIBILITY_TIMEOUT_SECONDS`). Template: each queue's own. */
  readonly visibilityTimeoutSeconds?: number;
  /** Receives before a message goes to its dead-letter queue (`MAX_RECEIVE_COUNT`). Template: each redrive policy's. */
  readonly maxReceiveCount?: number;
  /** Time between two reconciler passes (`RECONCILE_INTERVAL_SECONDS`). Template: see {@link LocalRun.reconcileIntervalMs}. */
  readonly reconcileIntervalMs?: number;
  /** Pollers of the dispatch queue. Template: the sender's event source `MaximumConcurrency`. */
  readonly senderConcurrency?: number;
  /** Pollers of the reconcile queue (`RECONCILE_WORKER_CONCURRENCY`). Template: that event source's `MaximumConcurrency`. */
  readonly reconcileWorkerConcurrency?: number;
  /** Pollers of the status-poll queue (`RECONCILE_POLL_WORKER_CONCURRENCY`). Template: that event source's `MaximumConcurrency`. */
  readonly reconcilePollWorkerConcurrency?: number;
}

/** A queue as the local runtime creates it. */
export interface LocalQueue {
  /** The template's logical id (names the queue's dead-letter queue when two share one). */
  readonly logicalId: string;
  readonly visibilityTimeoutSeconds: number;
  readonly retentionSeconds: number;
  readonly redrive?: { readonly deadLetterQueue: string; readonly maxReceiveCount: number };
}

/** An SQS event source as the local runtime polls it. */
export interface LocalQueueConsumer {
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  /** Parallel pollers, each invoking one batch at a time: at most this many invocations at once. */
  readonly concurrency: number;
  readonly reportBatchItemFailures: boolean;
  readonly filters: readonly unknown[];
}

/** The stream event source as the local runtime polls it. */
export interface LocalStreamConsumer {
  readonly batchSize: number;
  readonly reportBatchItemFailures: boolean;
  readonly filters: readonly unknown[];
  readonly bisectOnError: boolean;
  /** -1: until the record expires. */
  readonly maxRetries: number;
  /** -1: the stream's retention. */
  readonly maxRecordAgeSeconds: number;
  /** The on-failure destination's logical id (a queue the local runtime creates), if any. */
  readonly onFailure?: string;
}

/** Everything the local stack needs from the template, with the local overrides applied. */
export interface LocalRun {
  readonly queues: {
    readonly dispatch: LocalQueue;
    readonly reconcile: LocalQueue;
    readonly poll: LocalQueue;
  };
  readonly sender: LocalQueueConsumer;
  readonly reconcileWorker: LocalQueueConsumer;
  readonly statusPoll: LocalQueueConsumer;
  readonly forwarder: LocalStreamConsumer;
  /**
   * One reconciler pass every this many ms. Template: the schedule's rate divided by the
   * reconciler's `RECONCILE_PASSES_PER_RUN` (rate(1 minute) and 6 passes: a pass every 10 s, as in
   * AWS, where one invocation runs its passes that far apart); locally each tick runs one pass.
   */
  readonly reconcileIntervalMs: number;
  /** Each function's timeout (ms), enforced on every local invocation. */
  readonly timeoutsMs: Readonly<Partial<Record<LocalFunction, number>>>;
}

/** The local run of `wiring`: the template's values, except where `overrides` set one. */
export function planLocalRun(wiring: LocalWiring, overrides: LocalOverrides = {}): LocalRun {
  const dispatch = queueNamedBy(wiring, 'sender', SETTINGS.dispatchQueueUrl.env);
  const reconcile = queueNamedBy(wiring, 'reconciler', SETTINGS.reconcileQueueUrl.env);
  const poll = queueNamedBy(wiring, 'reconciler', SETTINGS.reconcilePollQueueUrl.env);
  const stream = streamSource(wiring, 'forwarder');
  for (const pattern of stream.filters) checkPattern(pattern);
  const schedule = scheduleFor(wiring, 'reconciler');
  if (schedule.intervalMs === undefined) {
    throw new Error(
      `template: the reconciler's schedule ${schedule.expression} is not a rate; the local runtime runs rates only`,
    );
  }
  const passes = Number(
    literal(wiring.functions.reconciler?.environment[SETTINGS.reconcilePassesPerRun.env]) ?? 1,
  );
  const timeoutsMs = Object.fromEntries(
    Object.values(wiring.functions).map((fn) => [fn.name, fn.timeoutSeconds * 1000]),
  );
  return {
    queues: {
      dispatch: localQueue(dispatch, overrides),
      reconcile: localQueue(reconcile, overrides),
      poll: localQueue(poll, overrides),
    },
    sender: consumer(queueSource(wiring, 'sender', dispatch), overrides.senderConcurrency),
    reconcileWorker: consumer(
      queueSource(wiring, 'reconcileWorker', reconcile),
      overrides.reconcileWorkerConcurrency,
    ),
    statusPoll: consumer(
      queueSource(wiring, 'reconcileWorker', poll),
      overrides.reconcilePollWorkerConcurrency,
    ),
    forwarder: {
      batchSize: stream.batchSize,
      reportBatchItemFailures: stream.reportBatchItemFailures,
      filters: stream.filters,
      bisectOnError: stream.bisectOnError,
      maxRetries: stream.maxRetries,
      maxRecordAgeSeconds: stream.maxRecordAgeSeconds,
      ...(stream.onFailure ? { onFailure: stream.onFailure } : {}),
    },
    reconcileIntervalMs: overrides.reconcileIntervalMs ?? schedule.intervalMs / passes,
    timeoutsMs,
  };
}

function localQueue(queue: QueueWiring, overrides: LocalOverrides): LocalQueue {
  return {
    logicalId: queue.logicalId,
    visibilityTimeoutSeconds: overrides.visibilityTimeoutSeconds ?? queue.visibilityTimeoutSeconds,
    retentionSeconds: queue.retentionSeconds,
    ...(queue.redrive
      ? {
          redrive: {
            deadLetterQueue: queue.redrive.deadLetterQueue,
            maxReceiveCount: overrides.maxReceiveCount ?? queue.redrive.maxReceiveCount,
          },
        }
      : {}),
  };
}

function consumer(source: EventSourceWiring, concurrency: number | undefined): LocalQueueConsumer {
  for (const pattern of source.filters) checkPattern(pattern);
  // Without MaximumConcurrency Lambda scales a mapping up to the account's concurrency; locally
  // a bound is needed: 2, the least MaximumConcurrency Lambda accepts.
  return {
    batchSize: source.batchSize,
    batchingWindowSeconds: source.batchingWindowSeconds,
    concurrency: concurrency ?? source.maxConcurrency ?? 2,
    reportBatchItemFailures: source.reportBatchItemFailures,
    filters: source.filters,
  };
}

function literal(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
