import type { CfnTemplate } from '../iam/resolve.js';
import type { LocalFunction, LocalTemplate } from '../iam/template.js';

/**
 * The wiring of a synthesized template, as the local runtime reads it (issue 22 item 1): per
 * function its handler, timeout, memory, environment, event sources and asynchronous invoke
 * configuration; the queues with their attributes; the schedules and the SNS subscriptions.
 * Pure: a template in, data out. Values the template leaves unset are AWS's defaults (each cited
 * where it is applied), so the local runtime never states a wiring fact of its own.
 */
export interface LocalWiring {
  /** The functions the local runtime runs, by their local name; a function the variant lacks is absent. */
  readonly functions: Readonly<Partial<Record<LocalFunction, FunctionWiring>>>;
  /** Every queue of the template, by logical id. */
  readonly queues: Readonly<Record<string, QueueWiring>>;
  readonly schedules: readonly ScheduleWiring[];
  readonly subscriptions: readonly SubscriptionWiring[];
}

/** A reference to another resource of the template (`Ref`, or `Fn::GetAtt` with `attribute`). */
export interface TemplateRef {
  readonly ref: string;
  readonly attribute?: string;
}

/**
 * An environment value: a literal, a reference to a resource (the local runtime substitutes its
 * local counterpart), or an expression over resources only a deployment knows (an API endpoint).
 */
export type EnvValue = string | TemplateRef | { readonly expression: unknown };

/** One function of the template. */
export interface FunctionWiring {
  readonly name: LocalFunction;
  readonly logicalId: string;
  readonly handler: string;
  /** Lambda's `Timeout` (AWS default: 3 s). */
  readonly timeoutSeconds: number;
  /** Lambda's `MemorySize` (AWS default: 128 MB). */
  readonly memoryMb: number;
  readonly reservedConcurrency?: number;
  readonly environment: Readonly<Record<string, EnvValue>>;
  /** The event source mappings that invoke this function. */
  readonly eventSources: readonly EventSourceWiring[];
  /** `AWS::Lambda::EventInvokeConfig` of the function, when it has one. */
  readonly asyncInvoke?: AsyncInvokeWiring;
}

/** Where an event source mapping reads from. */
export type EventSourceOrigin =
  | { readonly kind: 'sqs'; readonly queue: string }
  | { readonly kind: 'dynamodb-stream'; readonly table: string };

/** One `AWS::Lambda::EventSourceMapping`, with AWS's defaults filled in. */
export interface EventSourceWiring {
  readonly logicalId: string;
  readonly origin: EventSourceOrigin;
  /** Records per invocation (AWS default: 10 for SQS, 100 for DynamoDB streams). */
  readonly batchSize: number;
  /** `MaximumBatchingWindowInSeconds` (AWS default: 0). */
  readonly batchingWindowSeconds: number;
  /** `ScalingConfig.MaximumConcurrency` (SQS only; unset: no limit of the mapping's own). */
  readonly maxConcurrency?: number;
  /** `FunctionResponseTypes` holds `ReportBatchItemFailures`. */
  readonly reportBatchItemFailures: boolean;
  /** The filter patterns (parsed); a record matching none is discarded. */
  readonly filters: readonly unknown[];
  /** Streams: `BisectBatchOnFunctionError` (AWS default: false). */
  readonly bisectOnError: boolean;
  /** Streams: `MaximumRetryAttempts` (AWS default -1: until the record expires). */
  readonly maxRetries: number;
  /** Streams: `MaximumRecordAgeInSeconds` (AWS default -1: the stream's retention). */
  readonly maxRecordAgeSeconds: number;
  readonly startingPosition?: string;
  /** Streams: the on-failure destination (a queue's or topic's logical id). */
  readonly onFailure?: string;
  /** `Enabled` (AWS default: true). */
  readonly enabled: boolean;
}

/** One `AWS::SQS::Queue`, with AWS's defaults filled in. */
export interface QueueWiring {
  readonly logicalId: string;
  /** AWS default: 30 s. */
  readonly visibilityTimeoutSeconds: number;
  /** AWS default: 4 days (345,600 s). */
  readonly retentionSeconds: number;
  readonly redrive?: { readonly deadLetterQueue: string; readonly maxReceiveCount: number };
  readonly fifo: boolean;
}

/** One scheduled `AWS::Events::Rule` target that is a function of the local runtime. */
export interface ScheduleWiring {
  readonly logicalId: string;
  readonly expression: string;
  /** The rate of a `rate(...)` expression; cron expressions are not run locally (undefined). */
  readonly intervalMs?: number;
  readonly target: LocalFunction;
  readonly enabled: boolean;
  /** The target's `RetryPolicy`, when set. */
  readonly retry?: { readonly maxRetries?: number; readonly maxEventAgeSeconds?: number };
}

/** One `AWS::SNS::Subscription` whose endpoint is a function of the local runtime. */
export interface SubscriptionWiring {
  readonly logicalId: string;
  readonly topic: string;
  readonly protocol: string;
  readonly target: LocalFunction;
  /** The subscription's redrive policy's dead-letter queue (logical id). */
  readonly deadLetterQueue?: string;
  readonly filterPolicy?: unknown;
}

/** `AWS::Lambda::EventInvokeConfig` (AWS defaults: 2 retries, 6 hours). */
export interface AsyncInvokeWiring {
  readonly maxRetries: number;
  readonly maxEventAgeSeconds: number;
  readonly onFailure?: string;
  readonly onSuccess?: string;
}

/** AWS's defaults for what a template may leave unset (Lambda and SQS API references). */
const AWS_DEFAULTS = {
  timeoutSeconds: 3,
  memoryMb: 128,
  sqsBatchSize: 10,
  streamBatchSize: 100,
  streamMaxRetries: -1,
  streamMaxRecordAgeSeconds: -1,
  visibilityTimeoutSeconds: 30,
  retentionSeconds: 345_600,
  asyncMaxRetries: 2,
  asyncMaxEventAgeSeconds: 21_600,
} as const;

type Props = Record<string, unknown>;

/** Reads the wiring of `local` (a template and the logical ids of its functions). */
export function readWiring(local: LocalTemplate): LocalWiring {
  const { template } = local;
  const byLogicalId = new Map<string, LocalFunction>(
    Object.entries(local.functions).map(([name, id]) => [id as string, name as LocalFunction]),
  );
  const functionOf = (value: unknown): LocalFunction | undefined => {
    const target = refOf(value);
    return target ? byLogicalId.get(target.ref) : undefined;
  };
  const mappings = resourcesOf(template, 'AWS::Lambda::EventSourceMapping').map(([id, props]) => ({
    fn: functionOf(props.FunctionName),
    source: eventSourceOf(template, id, props),
  }));
  const invokeConfigs = resourcesOf(template, 'AWS::Lambda::EventInvokeConfig').map(([, props]) => ({
    fn: functionOf(props.FunctionName),
    config: asyncInvokeOf(props),
  }));

  const functions: Partial<Record<LocalFunction, FunctionWiring>> = {};
  for (const [name, logicalId] of Object.entries(local.functions) as [LocalFunction, string][]) {
    const resource = template.Resources[logicalId];
    if (resource?.Type !== 'AWS::Lambda::Function') {
      throw new Error(`template: function ${name} (${logicalId}) is not an AWS::Lambda::Function`);
    }
    const props = (resource.Properties ?? {}) as Props;
    const variables = ((props.Environment as Props | undefined)?.Variables ?? {}) as Props;
    const asyncInvoke = invokeConfigs.find((c) => c.fn === name)?.config;
    functions[name] = {
      name,
      logicalId,
      handler: String(props.Handler ?? ''),
      timeoutSeconds: numberOr(props.Timeout, AWS_DEFAULTS.timeoutSeconds),
      memoryMb: numberOr(props.MemorySize, AWS_DEFAULTS.memoryMb),
      ...(props.ReservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrency: Number(props.ReservedConcurrentExecutions) }),
      environment: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, envValueOf(v)])),
      eventSources: mappings.filter((m) => m.fn === name).map((m) => m.source),
      ...(asyncInvoke ? { asyncInvoke } : {}),
    };
  }

  const queues = Object.fromEntries(
    resourcesOf(template, 'AWS::SQS::Queue').map(([id, props]) => [id, queueOf(id, props)]),
  );
  const schedules = resourcesOf(template, 'AWS::Events::Rule').flatMap(([id, props]) =>
    typeof props.ScheduleExpression !== 'string'
      ? []
      : ((props.Targets ?? []) as Props[]).flatMap((target) => {
          const fn = functionOf(target.Arn);
          return fn ? [scheduleOf(id, props, target, fn)] : [];
        }),
  );
  const subscriptions = resourcesOf(template, 'AWS::SNS::Subscription').flatMap(([id, props]) => {
    const fn = functionOf(props.Endpoint);
    return fn ? [subscriptionOf(id, props, fn)] : [];
  });
  return { functions, queues, schedules, subscriptions };
}

/** The queue an environment variable of a function names (`Ref` of an `AWS::SQS::Queue`), if it does. */
export function queueNamedBy(wiring: LocalWiring, fn: LocalFunction, variable: string): QueueWiring {
  const value = wiring.functions[fn]?.environment[variable];
  const queue = typeof value === 'object' && 'ref' in value ? wiring.queues[value.ref] : undefined;
  if (!queue) throw new Error(`template: ${fn}'s ${variable} names no queue of the template`);
  return queue;
}

/** The event source mapping through which `fn` consumes `queue`. */
export function queueSource(wiring: LocalWiring, fn: LocalFunction, queue: QueueWiring): EventSourceWiring {
  const source = wiring.functions[fn]?.eventSources.find(
    (s) => s.origin.kind === 'sqs' && s.origin.queue === queue.logicalId,
  );
  if (!source) throw new Error(`template: ${fn} has no event source on queue ${queue.logicalId}`);
  return source;
}

/** The stream event source mapping of `fn`. */
export function streamSource(wiring: LocalWiring, fn: LocalFunction): EventSourceWiring {
  const source = wiring.functions[fn]?.eventSources.find((s) => s.origin.kind === 'dynamodb-stream');
  if (!source) throw new Error(`template: ${fn} has no DynamoDB stream event source`);
  return source;
}

/** The enabled schedule that invokes `fn`. */
export function scheduleFor(wiring: LocalWiring, fn: LocalFunction): ScheduleWiring {
  const schedule = wiring.schedules.find((s) => s.target === fn && s.enabled);
  if (!schedule) throw new Error(`template: no enabled schedule invokes ${fn}`);
  return schedule;
}

function scheduleOf(logicalId: string, rule: Props, target: Props, fn: LocalFunction): ScheduleWiring {
  const expression = String(rule.ScheduleExpression);
  const intervalMs = rateMs(expression);
  const retry = target.RetryPolicy as Props | undefined;
  return {
    logicalId,
    expression,
    ...(intervalMs === undefined ? {} : { intervalMs }),
    target: fn,
    enabled: (rule.State ?? 'ENABLED') === 'ENABLED',
    ...(retry
      ? {
          retry: {
            ...(retry.MaximumRetryAttempts === undefined
              ? {}
              : { maxRetries: Number(retry.MaximumRetryAttempts) }),
            ...(retry.MaximumEventAgeInSeconds === undefined
              ? {}
              : { maxEventAgeSeconds: Number(retry.MaximumEventAgeInSeconds) }),
          },
        }
      : {}),
  };
}

const RATE_UNITS_MS: Record<string, number> = {
  minute: 60_000,
  minutes: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** `rate(1 minute)` -> 60000; undefined for anything else (EventBridge's rate syntax). */
export function rateMs(expression: string): number | undefined {
  const match = /^rate\((\d+) (minutes?|hours?|days?)\)$/.exec(expression.trim());
  if (!match) return undefined;
  return Number(match[1]) * (RATE_UNITS_MS[match[2] as string] as number);
}

function resourcesOf(template: CfnTemplate, type: string): [string, Props][] {
  return Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === type)
    .map(([id, resource]) => [id, (resource.Properties ?? {}) as Props]);
}

/** `{ Ref: id }` or `{ 'Fn::GetAtt': [id, attribute] }` as a {@link TemplateRef}. */
function refOf(value: unknown): TemplateRef | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Props;
  if (Object.keys(v).length !== 1) return undefined;
  if (typeof v.Ref === 'string') return { ref: v.Ref };
  const getAtt = v['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') {
    return { ref: getAtt[0], attribute: String(getAtt[1]) };
  }
  return undefined;
}

function envValueOf(value: unknown): EnvValue {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return refOf(value) ?? { expression: value };
}

function numberOr(value: unknown, fallback: number): number {
  return value === undefined ? fallback : Number(value);
}

function eventSourceOf(template: CfnTemplate, logicalId: string, props: Props): EventSourceWiring {
  const source = refOf(props.EventSourceArn);
  const type = source ? template.Resources[source.ref]?.Type : undefined;
  let origin: EventSourceOrigin;
  if (source && type === 'AWS::SQS::Queue') origin = { kind: 'sqs', queue: source.ref };
  else if (source && type === 'AWS::DynamoDB::Table' && source.attribute === 'StreamArn')
    origin = { kind: 'dynamodb-stream', table: source.ref };
  else
    throw new Error(`template: event source ${logicalId} reads from a source the local runtime cannot run`);
  const isQueue = origin.kind === 'sqs';
  const filters = ((props.FilterCriteria as Props | undefined)?.Filters ?? []) as Props[];
  const scaling = props.ScalingConfig as Props | undefined;
  const onFailure = refOf(
    ((props.DestinationConfig as Props | undefined)?.OnFailure as Props | undefined)?.Destination,
  );
  return {
    logicalId,
    origin,
    batchSize: numberOr(props.BatchSize, isQueue ? AWS_DEFAULTS.sqsBatchSize : AWS_DEFAULTS.streamBatchSize),
    batchingWindowSeconds: numberOr(props.MaximumBatchingWindowInSeconds, 0),
    ...(scaling?.MaximumConcurrency === undefined
      ? {}
      : { maxConcurrency: Number(scaling.MaximumConcurrency) }),
    reportBatchItemFailures: ((props.FunctionResponseTypes ?? []) as string[]).includes(
      'ReportBatchItemFailures',
    ),
    filters: filters.map((f) => JSON.parse(String(f.Pattern)) as unknown),
    bisectOnError: props.BisectBatchOnFunctionError === true,
    maxRetries: numberOr(props.MaximumRetryAttempts, AWS_DEFAULTS.streamMaxRetries),
    maxRecordAgeSeconds: numberOr(props.MaximumRecordAgeInSeconds, AWS_DEFAULTS.streamMaxRecordAgeSeconds),
    ...(typeof props.StartingPosition === 'string' ? { startingPosition: props.StartingPosition } : {}),
    ...(onFailure ? { onFailure: onFailure.ref } : {}),
    enabled: props.Enabled !== false,
  };
}

function queueOf(logicalId: string, props: Props): QueueWiring {
  const redrive = props.RedrivePolicy as Props | undefined;
  const deadLetter = refOf(redrive?.deadLetterTargetArn);
  return {
    logicalId,
    visibilityTimeoutSeconds: numberOr(props.VisibilityTimeout, AWS_DEFAULTS.visibilityTimeoutSeconds),
    retentionSeconds: numberOr(props.MessageRetentionPeriod, AWS_DEFAULTS.retentionSeconds),
    ...(redrive && deadLetter
      ? { redrive: { deadLetterQueue: deadLetter.ref, maxReceiveCount: Number(redrive.maxReceiveCount) } }
      : {}),
    fifo: props.FifoQueue === true,
  };
}

function subscriptionOf(logicalId: string, props: Props, target: LocalFunction): SubscriptionWiring {
  const deadLetter = refOf((props.RedrivePolicy as Props | undefined)?.deadLetterTargetArn);
  const topic = refOf(props.TopicArn);
  return {
    logicalId,
    topic: topic?.ref ?? String(props.TopicArn),
    protocol: String(props.Protocol),
    target,
    ...(deadLetter ? { deadLetterQueue: deadLetter.ref } : {}),
    ...(props.FilterPolicy === undefined ? {} : { filterPolicy: props.FilterPolicy }),
  };
}

function asyncInvokeOf(props: Props): AsyncInvokeWiring {
  const destinations = props.DestinationConfig as Props | undefined;
  const onFailure = refOf((destinations?.OnFailure as Props | undefined)?.Destination);
  const onSuccess = refOf((destinations?.OnSuccess as Props | undefined)?.Destination);
  return {
    maxRetries: numberOr(props.MaximumRetryAttempts, AWS_DEFAULTS.asyncMaxRetries),
    maxEventAgeSeconds: numberOr(props.MaximumEventAgeInSeconds, AWS_DEFAULTS.asyncMaxEventAgeSeconds),
    ...(onFailure ? { onFailure: onFailure.ref } : {}),
    ...(onSuccess ? { onSuccess: onSuccess.ref } : {}),
  };
}
