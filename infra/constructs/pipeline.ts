import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { RECORD_ATTRIBUTES } from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { DISPATCH_TRIGGER } from '../../shared/domain/dispatch-trigger.js';
import { providerInfra } from '../../shared/providers/infra-registry.js';
import { settingsEnv } from '../../shared/settings.js';
import { FUNCTION_ENTRIES, RECONCILE_PASS_SPACING, type ResolvedSettings } from '../settings.js';
import { allowFieldKey, allowIndexQuery, allowStreamRead, allowTableItems, allowTableKey } from './grants.js';
import { acknowledge } from './nag.js';
import { ServiceFunction, visibilityTimeoutFor } from './service-function.js';
import type { Storage } from './storage.js';

/** Props of {@link Pipeline}. */
export interface PipelineProps {
  readonly settings: ResolvedSettings;
  readonly storage: Storage;
  /** Environment shared by every function, without the queue URL (added here). */
  readonly baseEnvironment: Readonly<Record<string, string>>;
}

/** Receives before a dispatch message moves to the dead-letter queue. */
export const DISPATCH_MAX_RECEIVE_COUNT = 5;
/** Stream records older than this go to the forwarder's failure queue (the stream keeps 24 h). */
export const FORWARDER_MAX_RECORD_AGE = Duration.hours(6);
/**
 * Reconcile workers at once (the SQS event source's `maxConcurrency`, 2-1000): throughput grows
 * with it, and each container's lookup bucket gets an equal share of the provider's limit.
 */
export const RECONCILE_WORKER_MAX_CONCURRENCY = 4;
/**
 * Workers at once on the status-poll queue (2, the event source's minimum): polls of `sent`
 * messages are a fallback for a receipt that did not come, and must not take the urgent lane's share.
 */
export const STATUS_POLL_WORKER_MAX_CONCURRENCY = 2;
/** Receives before a reconcile message moves to its dead-letter queue (only transient faults retry). */
export const RECONCILE_MAX_RECEIVE_COUNT = 5;
const RECONCILE_WORKER_TIMEOUT = Duration.seconds(60);
/** Seconds a scheduled reconciler invocation may run past its last pass's start. */
const RECONCILE_LAST_PASS_ROOM_SECONDS = 60;

/**
 * The dispatch pipeline (docs/design.md#pipeline): stream -> forwarder -> dispatch queue -> sender,
 * and the scheduled reconciler. Each function gets exactly the actions it performs.
 */
export class Pipeline extends Construct {
  readonly dispatchQueue: Queue;
  readonly dispatchDeadLetterQueue: Queue;
  /** On-failure destination of the stream event source (record metadata, never payloads). */
  readonly forwarderFailureQueue: Queue;
  readonly forwarder: ServiceFunction;
  readonly sender: ServiceFunction;
  readonly reconciler: ServiceFunction;
  readonly reconcileRule: Rule;
  /** Due keys from the scheduled pass to the reconcile workers (key + version, never a payload). */
  readonly reconcileQueue: Queue;
  /** The poll lane's keys (status polls of `sent`), consumed by the same worker behind no expiry. */
  readonly statusPollQueue: Queue;
  /** Dead letters of both the reconcile and the status-poll queue. */
  readonly reconcileDeadLetterQueue: Queue;
  /** Reconcile queue -> one due key per message: lookups, transitions, expiry; never sends. */
  readonly reconcileWorker: ServiceFunction;
  /** The complete function environment (base + queue URL), also used by the API function. */
  readonly environment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: PipelineProps) {
    super(scope, id);
    const { settings, storage } = props;
    const streamArn = storage.table.tableStreamArn;
    if (streamArn === undefined) throw new Error('the table must have a stream');

    const queues = this.createQueues(settings);
    this.dispatchDeadLetterQueue = queues.dispatchDeadLetterQueue;
    this.dispatchQueue = queues.dispatchQueue;
    this.forwarderFailureQueue = queues.forwarderFailureQueue;
    this.reconcileDeadLetterQueue = queues.reconcileDeadLetterQueue;
    this.reconcileQueue = queues.reconcileQueue;
    this.statusPollQueue = queues.statusPollQueue;

    this.environment = {
      ...props.baseEnvironment,
      ...settingsEnv({ dispatchQueueUrl: this.dispatchQueue.queueUrl }),
    };
    const build: FunctionBuild = {
      settings,
      storage,
      providerSides: settings.providers.map((provider) => ({ provider, side: providerInfra(provider) })),
    };
    this.forwarder = this.createForwarder(build, streamArn);
    this.sender = this.createSender(build);
    this.reconciler = this.createReconciler(build);
    this.reconcileRule = this.scheduleReconciler(settings);
    this.grantReconciler(build);
    this.reconcileWorker = this.createReconcileWorker(build);
  }

  /** The pipeline's queues, in the order they have always been created (template order). */
  private createQueues(settings: ResolvedSettings): PipelineQueues {
    // Queues carry idempotency keys only: SQS-managed encryption is enough, TLS is enforced.
    const dispatchDeadLetterQueue = new Queue(this, 'DispatchDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      dispatchDeadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is the dispatch dead-letter queue.',
    );
    const dispatchQueue = new Queue(this, 'DispatchQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Lambda's rule for SQS event sources: at least 6x the function timeout.
      visibilityTimeout: visibilityTimeoutFor(settings.senderTimeout),
      deadLetterQueue: { queue: dispatchDeadLetterQueue, maxReceiveCount: DISPATCH_MAX_RECEIVE_COUNT },
    });
    const forwarderFailureQueue = new Queue(this, 'ForwarderFailureQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      forwarderFailureQueue,
      'AwsSolutions-SQS3',
      'This queue is itself the on-failure destination of the stream event source.',
    );

    const reconcileDeadLetterQueue = new Queue(this, 'ReconcileDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      reconcileDeadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is the reconcile dead-letter queue.',
    );
    const reconcileWorkerQueue = (id: string) =>
      new Queue(this, id, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: visibilityTimeoutFor(RECONCILE_WORKER_TIMEOUT),
        // A due key is due again on the next sweep anyway: old messages are worth little.
        retentionPeriod: Duration.hours(1),
        deadLetterQueue: {
          queue: reconcileDeadLetterQueue,
          maxReceiveCount: RECONCILE_MAX_RECEIVE_COUNT,
        },
      });
    return {
      dispatchDeadLetterQueue,
      dispatchQueue,
      forwarderFailureQueue,
      reconcileDeadLetterQueue,
      reconcileQueue: reconcileWorkerQueue('ReconcileQueue'),
      // Its own queue so that a backlog of status polls never sits ahead of an expiry.
      statusPollQueue: reconcileWorkerQueue('StatusPollQueue'),
    };
  }

  /** Forwarder: table stream -> dispatch queue. */
  private createForwarder({ settings, storage }: FunctionBuild, streamArn: string): ServiceFunction {
    const forwarder = new ServiceFunction(this, 'Forwarder', {
      ...functionDefaults(settings),
      entry: entryOf(settings, 'forwarder'),
      description: 'reset-notifier: table stream -> dispatch queue (keys only)',
      timeout: Duration.seconds(30),
      memorySize: 256,
      environment: this.environment,
      wildcardResourceReason:
        'dynamodb:ListStreams has no resource type (only "*"); Lambda requires it of a stream event source. It lists stream ARNs, nothing else.',
    });
    // The mapping is declared directly (not with DynamoEventSource) so the stream read grant is
    // scoped to this table's stream, except `dynamodb:ListStreams`, which only "*" matches.
    forwarder.addEventSourceMapping('TableStream', {
      eventSourceArn: streamArn,
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      bisectBatchOnError: true,
      reportBatchItemFailures: true,
      retryAttempts: 10,
      maxRecordAge: FORWARDER_MAX_RECORD_AGE,
      onFailure: new SqsDlq(this.forwarderFailureQueue),
      // Coarse pre-filter from the domain's dispatch trigger (the handler decides exactly with
      // `needsDispatch`): command items that are `accepted` after the change. Evidence items and
      // every other state never invoke the forwarder.
      filters: [
        FilterCriteria.filter({
          eventName: FilterRule.or(...DISPATCH_TRIGGER.eventNames),
          dynamodb: {
            Keys: { [TableSchema.sortKey]: { S: FilterRule.isEqual(TableSchema.commandSortKey) } },
            NewImage: { [RECORD_ATTRIBUTES.state]: { S: FilterRule.isEqual(DISPATCH_TRIGGER.state) } },
          },
        }),
      ],
    });
    allowStreamRead(forwarder, streamArn, storage.tableKey);
    this.allowEnqueue(forwarder);
    return forwarder;
  }

  /** Sender: dispatch queue -> provider (any of the listed ones: failover sends through the next). */
  private createSender({ settings, storage, providerSides }: FunctionBuild): ServiceFunction {
    // One acknowledgment of `Resource::*` lists every provider's reason (only SNS has one today).
    const wildcardReasons = providerSides.flatMap(({ side }) =>
      side.wildcardSendReason === undefined ? [] : [side.wildcardSendReason],
    );
    const sender = new ServiceFunction(this, 'Sender', {
      ...functionDefaults(settings),
      entry: entryOf(settings, 'sender'),
      description: 'reset-notifier: claims a command and calls the SMS provider once',
      timeout: settings.senderTimeout,
      environment: this.environment,
      ...(wildcardReasons.length === 0 ? {} : { wildcardResourceReason: wildcardReasons.join(' ') }),
    });
    sender.addEventSource(
      new SqsEventSource(this.dispatchQueue, {
        batchSize: settings.senderBatchSize,
        reportBatchItemFailures: true,
        maxConcurrency: settings.senderMaxConcurrency,
      }),
    );
    allowCommandWork(sender, storage);
    for (const { provider, side } of providerSides) side.grantSend(this, sender, provider);
    return sender;
  }

  /**
   * Reconciler: due index -> reconcile queue (fan-out); with RECONCILE_QUEUE_URL unset it would
   * handle keys itself, which is why it keeps the worker's grants. Never sends.
   */
  private createReconciler({ settings }: FunctionBuild): ServiceFunction {
    const reconciler = new ServiceFunction(this, 'Reconciler', {
      ...functionDefaults(settings),
      entry: entryOf(settings, 'reconciler'),
      description: 'reset-notifier: reconciles unknown outcomes and expiries (never sends)',
      // The run of passes, plus room for the last one (a pass that reads all its rounds).
      timeout: Duration.seconds(
        settings.reconcilePassesPerRun * RECONCILE_PASS_SPACING.toSeconds() +
          RECONCILE_LAST_PASS_ROOM_SECONDS,
      ),
      environment: {
        ...this.environment,
        ...settingsEnv({
          reconcileQueueUrl: this.reconcileQueue.queueUrl,
          reconcilePollQueueUrl: this.statusPollQueue.queueUrl,
          reconcilePassesPerRun: settings.reconcilePassesPerRun,
        }),
      },
      // Opt-in only: overlapping passes are safe because every write is conditional on the
      // item's state and version (a lost race is a returned `stale`, never a second send), and the
      // pass only enqueues keys for the workers, which re-read each key strongly.
      ...(settings.reconcilerReservedConcurrency === undefined
        ? {}
        : { reservedConcurrentExecutions: settings.reconcilerReservedConcurrency }),
    });
    // A tick that cannot run (throttled) is dropped after a minute rather than queued stale.
    reconciler.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    return reconciler;
  }

  /** The schedule that starts a reconciler run. */
  private scheduleReconciler(settings: ResolvedSettings): Rule {
    return new Rule(this, 'ReconcileSchedule', {
      description: 'reset-notifier: one reconciliation pass',
      schedule: Schedule.rate(settings.reconcileSchedule),
      targets: [new LambdaFunction(this.reconciler, { retryAttempts: 0, maxEventAge: Duration.minutes(1) })],
    });
  }

  /** The reconciler's grants: the worker's, plus the due index and the two lanes' queues. */
  private grantReconciler({ storage, providerSides }: FunctionBuild): void {
    const { table, tableKey, fieldKey } = storage;
    allowTableItems(this.reconciler, table, ['GetItem', 'UpdateItem', 'PutItem']);
    allowIndexQuery(this.reconciler, table, [TableSchema.dueIndex.name]);
    allowTableKey(this.reconciler, tableKey, 'write');
    allowFieldKey(this.reconciler, fieldKey, 'kms:Decrypt');
    storage.grantFingerprintKeyRead(this.reconciler);
    this.allowEnqueue(this.reconciler);
    // Lookups go to the provider each attempt went to: any of the listed ones.
    for (const { provider, side } of providerSides) side.grantLookup(this, this.reconciler, provider);
    // GetQueueAttributes: the pass reads a lane's queue backlog before it sweeps the lane afresh.
    this.reconciler.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['sqs:SendMessage', 'sqs:GetQueueAttributes'],
        resources: [this.reconcileQueue.queueArn, this.statusPollQueue.queueArn],
      }),
    );
  }

  /** Reconcile worker: one due key per message, bounded concurrency, partial batch responses. */
  private createReconcileWorker({ settings, storage, providerSides }: FunctionBuild): ServiceFunction {
    // One bucket per container: the strictest listed provider's rate keeps every provider's
    // account limit (a lookup goes to its attempt's provider, whichever it is).
    const lookupRate = Math.min(...providerSides.map(({ side }) => side.lookupsPerSecond));
    const worker = new ServiceFunction(this, 'ReconcileWorker', {
      ...functionDefaults(settings),
      entry: entryOf(settings, 'reconcileWorker'),
      description:
        'reset-notifier: reconcile worker, one due key per message (lookups and expiry; never sends)',
      timeout: RECONCILE_WORKER_TIMEOUT,
      environment: {
        ...this.environment,
        // Per container: the account-wide limit shared by the workers that can run at once (both queues).
        ...settingsEnv({
          providerLookupRate:
            lookupRate / (RECONCILE_WORKER_MAX_CONCURRENCY + STATUS_POLL_WORKER_MAX_CONCURRENCY),
        }),
      },
    });
    worker.addEventSource(
      new SqsEventSource(this.reconcileQueue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: RECONCILE_WORKER_MAX_CONCURRENCY,
      }),
    );
    worker.addEventSource(
      new SqsEventSource(this.statusPollQueue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: STATUS_POLL_WORKER_MAX_CONCURRENCY,
      }),
    );
    allowCommandWork(worker, storage);
    this.allowEnqueue(worker);
    for (const { provider, side } of providerSides) side.grantLookup(this, worker, provider);
    return worker;
  }

  /** Sending to the dispatch queue. */
  private allowEnqueue(fn: ServiceFunction): void {
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.dispatchQueue.queueArn] }),
    );
  }
}

/** The queues {@link Pipeline} creates. */
interface PipelineQueues {
  readonly dispatchDeadLetterQueue: Queue;
  readonly dispatchQueue: Queue;
  readonly forwarderFailureQueue: Queue;
  readonly reconcileDeadLetterQueue: Queue;
  readonly reconcileQueue: Queue;
  readonly statusPollQueue: Queue;
}

/** What every function of the pipeline is built from. */
interface FunctionBuild {
  readonly settings: ResolvedSettings;
  readonly storage: Storage;
  /** Every listed provider with its deploy side, in order. */
  readonly providerSides: ReadonlyArray<{
    readonly provider: ResolvedSettings['provider'];
    readonly side: ReturnType<typeof providerInfra>;
  }>;
}

/** The entry file of one of the pipeline's functions. */
function entryOf(settings: ResolvedSettings, name: keyof typeof FUNCTION_ENTRIES): string {
  return join(settings.code.entryDirectory, FUNCTION_ENTRIES[name]);
}

/** Log retention and the bundling root, the same for every function. */
function functionDefaults(settings: ResolvedSettings) {
  return {
    logRetention: settings.logRetention,
    projectRoot: settings.code.projectRoot,
    depsLockFilePath: settings.code.depsLockFilePath,
  };
}

/**
 * What the sender and the reconcile worker do to a command: read and write its item under the
 * table key, decrypt its fields, and fingerprint (the shared composition root loads the
 * fingerprint key when a container starts).
 */
function allowCommandWork(fn: ServiceFunction, storage: Storage): void {
  allowTableItems(fn, storage.table, ['GetItem', 'UpdateItem', 'PutItem']);
  allowTableKey(fn, storage.tableKey, 'write');
  allowFieldKey(fn, storage.fieldKey, 'kms:Decrypt');
  storage.grantFingerprintKeyRead(fn);
}
