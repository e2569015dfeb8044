/**
 * The template's alarms on the local stack: what the local runtime can honestly observe, fed to
 * the monitor (`monitor.ts`).
 *
 * - The service's own metrics: the EMF lines the handlers print through Powertools `Metrics`
 *   (tapped, `emf.ts`), in the namespace the template gives the functions.
 * - `AWS/Lambda` `Invocations`, `Errors` and `Duration` of the functions the local runtime invokes:
 *   one sample per invocation (Errors 1 when the handler threw, else 0, as Lambda publishes it).
 * - `AWS/SQS` `ApproximateNumberOfMessagesVisible` of the queues the template wires to a function's
 *   environment (DISPATCH_QUEUE_URL, ...) and of their dead-letter queues, read from fauxqs before
 *   each evaluation (a dead-letter queue the template shares between two queues is the sum of the
 *   local ones).
 *
 * Everything else is listed as not evaluated, with the reason in {@link NOT_OBSERVED}.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { MetricsSink } from '../../shared/composition/handlers.js';
import type { ServiceConfig } from '../../shared/config.js';
import { SETTINGS } from '../../shared/settings.js';
import {
  type LocalFunction,
  type LocalTemplate,
  localTemplate,
  type TemplateProvider,
} from '../iam/template.js';
import { samplesOfEmf, tappedMetrics } from './emf.js';
import type { MetricId } from './evaluate.js';
import { type AlarmMonitor, type AlarmMonitorOptions, createAlarmMonitor } from './monitor.js';
import { referencedId, templateAlarms } from './template.js';

/** Why a metric of the template is not observed locally, by namespace and metric name. */
const NOT_OBSERVED: Readonly<Record<string, string>> = {
  'AWS/Lambda Throttles': 'the local runtime never throttles: its pollers wait for a free slot',
  'AWS/Lambda IteratorAge': 'the local stream poller does not measure iterator age',
  'AWS/Lambda DestinationDeliveryFailures':
    'no asynchronous invocation or on-failure destination runs locally',
  'AWS/SQS ApproximateAgeOfOldestMessage': 'fauxqs does not report the age of the oldest message',
  'AWS/ApiGateway': 'no API Gateway locally: the local HTTP server is not its 5xx count or latency',
  'AWS/SMSVoice': 'End User Messaging spend is not simulated',
  'AWS/SNS': 'SNS SMS spend is not simulated',
};

type Runs = (...args: never[]) => Promise<unknown>;

/** The local stack's alarms: the monitor, the metrics sink for the handlers, the invocation tap. */
export interface LocalAlarms {
  readonly monitor: AlarmMonitor;
  /** Where the handlers record their metrics (EMF lines tapped into the monitor). */
  readonly metrics: MetricsSink;
  /** `handlers` with each invocation counted as Lambda counts it (`Invocations`, `Errors`, `Duration`). */
  observe<H extends Record<string, Runs>>(
    handlers: H,
    functionOf: Readonly<Record<keyof H, LocalFunction>>,
  ): H;
}

export interface LocalAlarmsOptions {
  readonly template: LocalTemplate;
  /** The local URL of each queue setting the template wires into the functions' environment. */
  readonly queueUrls: Readonly<Record<string, string | undefined>>;
  /** The functions whose handlers go through {@link LocalAlarms.observe}. */
  readonly invoked: readonly LocalFunction[];
  readonly sqs: SQSClient;
  readonly clock: AlarmMonitorOptions['clock'];
  readonly timers?: AlarmMonitorOptions['timers'];
}

export function createLocalAlarms(options: LocalAlarmsOptions): LocalAlarms {
  const { template, sqs, clock } = options;
  const resources = template.template.Resources;
  const envOf = (id: string) =>
    ((resources[id]?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
      ?.Variables ?? {}) as Record<string, unknown>;
  const functionIds = Object.values(template.functions);
  const namespace = functionIds
    .map((id) => envOf(id)[SETTINGS.powertoolsMetricsNamespace.env])
    .find((v): v is string => typeof v === 'string');
  const queues = localQueues(template, options.queueUrls);
  const observedFunctions = new Set(
    options.invoked.map((fn) => template.functions[fn]).filter((id): id is string => id !== undefined),
  );

  const observability = (metric: MetricId): string | undefined => {
    const name = `${metric.namespace} ${metric.metricName}`;
    if (metric.namespace === namespace) return undefined;
    const referenced = Object.values(metric.dimensions)
      .map(referencedId)
      .find((id) => id !== undefined);
    if (
      metric.namespace === 'AWS/Lambda' &&
      ['Invocations', 'Errors', 'Duration'].includes(metric.metricName)
    )
      return referenced !== undefined && observedFunctions.has(referenced)
        ? undefined
        : 'the function is not run by the local runtime';
    if (metric.namespace === 'AWS/SQS' && metric.metricName === 'ApproximateNumberOfMessagesVisible')
      return referenced !== undefined && queues.has(referenced)
        ? undefined
        : 'the queue is not created locally';
    return NOT_OBSERVED[name] ?? NOT_OBSERVED[metric.namespace] ?? 'not observed by the local runtime';
  };

  const alarms = templateAlarms(template.template);
  const depthMetrics = alarms
    .flatMap((a) =>
      a.query.kind === 'metric' ? [a.query.stat.metric] : Object.values(a.query.metrics).map((m) => m.metric),
    )
    .filter((m) => m.namespace === 'AWS/SQS' && m.metricName === 'ApproximateNumberOfMessagesVisible');

  const monitor = createAlarmMonitor({
    alarms,
    observability,
    clock,
    ...(options.timers ? { timers: options.timers } : {}),
    beforeEvaluation: async () => {
      const at = clock.now();
      for (const metric of depthMetrics) {
        const id = Object.values(metric.dimensions)
          .map(referencedId)
          .find((x) => x !== undefined);
        const urls = id === undefined ? undefined : await queues.get(id)?.(sqs);
        if (!urls) continue;
        let visible = 0;
        for (const url of urls) {
          const out = await sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
          );
          visible += Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
        }
        monitor.record({ metric, at, value: visible });
      }
    },
  });

  const lambdaMetric = (functionId: string, metricName: string): MetricId => ({
    namespace: 'AWS/Lambda',
    metricName,
    dimensions: { FunctionName: `Ref(${functionId})` },
  });

  return {
    monitor,
    metrics: tappedMetrics(namespace ?? 'ResetNotifier', (line) => {
      for (const sample of samplesOfEmf(line)) monitor.record(sample);
    }),
    observe<H extends Record<string, Runs>>(
      handlers: H,
      functionOf: Readonly<Record<keyof H, LocalFunction>>,
    ): H {
      const wrapped: Record<string, Runs> = {};
      for (const [key, handler] of Object.entries(handlers)) {
        const id = template.functions[functionOf[key as keyof typeof functionOf]];
        wrapped[key] =
          id === undefined
            ? handler
            : async (...args) => {
                const started = clock.now();
                let failed = false;
                try {
                  return await handler(...args);
                } catch (error) {
                  failed = true;
                  throw error;
                } finally {
                  const at = clock.now();
                  monitor.record({ metric: lambdaMetric(id, 'Invocations'), at, value: 1 });
                  monitor.record({ metric: lambdaMetric(id, 'Errors'), at, value: failed ? 1 : 0 });
                  monitor.record({ metric: lambdaMetric(id, 'Duration'), at, value: at - started });
                }
              };
      }
      return wrapped as H;
    },
  };
}

/**
 * The local queues behind each queue of the template: a queue a function's environment names
 * (its setting's local URL), and a dead-letter queue of such queues (their local dead-letter
 * queues, found from their redrive policies when first read).
 */
function localQueues(
  template: LocalTemplate,
  queueUrls: Readonly<Record<string, string | undefined>>,
): Map<string, (sqs: SQSClient) => Promise<string[]>> {
  const resources = template.template.Resources;
  const sources = new Map<string, string>();
  for (const id of Object.values(template.functions)) {
    const env = (
      resources[id]?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined
    )?.Variables;
    for (const [name, value] of Object.entries(env ?? {})) {
      const ref = (value as { Ref?: unknown })?.Ref;
      const url = queueUrls[name];
      if (typeof ref === 'string' && url && resources[ref]?.Type === 'AWS::SQS::Queue') sources.set(ref, url);
    }
  }
  const queues = new Map<string, (sqs: SQSClient) => Promise<string[]>>();
  for (const [id, url] of sources) queues.set(id, async () => [url]);
  const deadLetters = new Map<string, string[]>();
  for (const [id, resource] of Object.entries(resources)) {
    const target = (
      resource.Properties?.RedrivePolicy as { deadLetterTargetArn?: { 'Fn::GetAtt'?: string[] } }
    )?.deadLetterTargetArn?.['Fn::GetAtt']?.[0];
    const url = sources.get(id);
    if (target === undefined || url === undefined) continue;
    deadLetters.set(target, [...(deadLetters.get(target) ?? []), url]);
  }
  for (const [dlq, sourceUrls] of deadLetters) {
    let resolved: Promise<string[]> | undefined;
    queues.set(dlq, (sqs) => {
      resolved ??= Promise.all(sourceUrls.map((url) => localDeadLetterUrl(sqs, url))).then((urls) =>
        urls.filter((u): u is string => u !== undefined),
      );
      return resolved;
    });
  }
  return queues;
}

async function localDeadLetterUrl(sqs: SQSClient, queueUrl: string): Promise<string | undefined> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }),
  );
  const policy = out.Attributes?.RedrivePolicy;
  if (!policy) return undefined;
  const arn = (JSON.parse(policy) as { deadLetterTargetArn?: string }).deadLetterTargetArn;
  const name = arn?.split(':').at(-1);
  if (!name) return undefined;
  return (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
}

/** Which function each of the local stack's handlers is (the inline reconciler is the reconciler's work). */
export const LOCAL_HANDLER_FUNCTIONS = {
  api: 'api',
  receipts: 'receipts',
  forwarder: 'forwarder',
  sender: 'sender',
  reconciler: 'reconciler',
  inlineReconciler: 'reconciler',
  reconcileWorker: 'reconcileWorker',
} as const satisfies Record<string, LocalFunction>;

/** How the local stack evaluates alarms (`LocalStackOptions.alarms`). */
export interface LocalAlarmOptions {
  /** How often the alarms are evaluated. @default one minute, as CloudWatch evaluates */
  readonly intervalMs?: number;
  readonly timers?: AlarmMonitorOptions['timers'];
}

/**
 * The alarms of the template synthesized for `config`'s provider, over the stack's queues (the
 * settings the template wires into the functions' environment, with their local URLs).
 */
export async function localAlarmsFor(
  config: ServiceConfig,
  parts: { readonly sqs: SQSClient; readonly clock: AlarmMonitorOptions['clock'] } & LocalAlarmOptions,
): Promise<LocalAlarms> {
  return createLocalAlarms({
    template: await localTemplate(config.provider as TemplateProvider),
    queueUrls: {
      [SETTINGS.dispatchQueueUrl.env]: config.dispatchQueueUrl,
      [SETTINGS.reconcileQueueUrl.env]: config.reconcileQueueUrl,
      [SETTINGS.reconcilePollQueueUrl.env]: config.reconcilePollQueueUrl,
    },
    invoked: [...new Set(Object.values(LOCAL_HANDLER_FUNCTIONS))],
    sqs: parts.sqs,
    clock: parts.clock,
    ...(parts.timers ? { timers: parts.timers } : {}),
  });
}
