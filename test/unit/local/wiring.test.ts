import { beforeAll, describe, expect, it } from 'vitest';
import {
  DISPATCH_MAX_RECEIVE_COUNT,
  FORWARDER_MAX_RECORD_AGE,
  RECONCILE_MAX_RECEIVE_COUNT,
  RECONCILE_WORKER_MAX_CONCURRENCY,
  STATUS_POLL_WORKER_MAX_CONCURRENCY,
} from '../../../infra/constructs/pipeline.js';
import {
  type LocalFunction,
  type LocalTemplate,
  localTemplate,
  TEMPLATE_PROVIDERS,
  type TemplateProvider,
} from '../../../local/iam/template.js';
import { matchesAny } from '../../../local/wiring/filter.js';
import { planLocalRun } from '../../../local/wiring/local-run.js';
import { readWiring } from '../../../local/wiring/wiring.js';
import { SETTINGS } from '../../../shared/settings.js';

type Props = Record<string, unknown>;

/** The functions `local/stack.ts` runs for each provider kind. */
const RUN_LOCALLY: Record<TemplateProvider, readonly LocalFunction[]> = {
  simulator: ['api', 'receipts', 'forwarder', 'sender', 'reconciler', 'reconcileWorker'],
  twilio: ['api', 'receipts', 'forwarder', 'sender', 'reconciler', 'reconcileWorker'],
  sns: ['api', 'forwarder', 'sender', 'reconciler', 'reconcileWorker'],
  eum: ['api', 'eumReceipts', 'forwarder', 'sender', 'reconciler', 'reconcileWorker'],
};

const templates = {} as Record<TemplateProvider, LocalTemplate>;

beforeAll(async () => {
  // The cached synthesis (synthesized once here when the infra code changed).
  for (const provider of TEMPLATE_PROVIDERS) templates[provider] = await localTemplate(provider);
}, 300_000);

const propsOf = (local: LocalTemplate, id: string): Props =>
  (local.template.Resources[id]?.Properties ?? {}) as Props;

const resourcesOf = (local: LocalTemplate, type: string): [string, Props][] =>
  Object.entries(local.template.Resources)
    .filter(([, r]) => r.Type === type)
    .map(([id, r]) => [id, (r.Properties ?? {}) as Props]);

/** The event source mapping of the template that reads `queueId`. */
const mappingOn = (local: LocalTemplate, sourceId: string): Props => {
  const found = resourcesOf(local, 'AWS::Lambda::EventSourceMapping').find(([, p]) =>
    JSON.stringify(p.EventSourceArn).includes(`"${sourceId}"`),
  );
  if (!found) throw new Error(`no mapping on ${sourceId}`);
  return found[1];
};

describe.each(TEMPLATE_PROVIDERS)('the wiring of the %s template', (provider) => {
  it('finds every function the local stack runs, with its handler, timeout, memory and environment', () => {
    // Prepare
    const local = templates[provider];

    // Act
    const wiring = readWiring(local);

    // Assess
    expect(Object.keys(wiring.functions).sort()).toEqual([...RUN_LOCALLY[provider]].sort());
    for (const fn of Object.values(wiring.functions)) {
      const props = propsOf(local, fn.logicalId);
      expect(fn.handler).toBe(props.Handler);
      expect(fn.timeoutSeconds).toBe(props.Timeout);
      expect(fn.memoryMb).toBe(props.MemorySize);
      const variables = (props.Environment as { Variables: Props }).Variables;
      expect(Object.keys(fn.environment).sort()).toEqual(Object.keys(variables).sort());
      for (const [name, value] of Object.entries(variables)) {
        const read = fn.environment[name];
        if (typeof read === 'string' || (typeof read === 'object' && 'expression' in read)) {
          expect(read).toEqual(typeof value === 'string' ? value : { expression: value });
        } else expect(JSON.stringify(value)).toContain(`"${read?.ref}"`);
      }
    }
  });

  it('runs the queues, event sources, schedule and timeouts the template declares', () => {
    // Prepare
    const local = templates[provider];
    const wiring = readWiring(local);

    // Act
    const run = planLocalRun(wiring);

    // Assess: each value as the template holds it, and as infra/ declares it
    const dispatchProps = propsOf(local, run.queues.dispatch.logicalId);
    expect(run.queues.dispatch.visibilityTimeoutSeconds).toBe(dispatchProps.VisibilityTimeout);
    expect(run.queues.dispatch.redrive?.maxReceiveCount).toBe(DISPATCH_MAX_RECEIVE_COUNT);
    for (const queue of [run.queues.reconcile, run.queues.poll]) {
      expect(queue.visibilityTimeoutSeconds).toBe(propsOf(local, queue.logicalId).VisibilityTimeout);
      expect(queue.retentionSeconds).toBe(propsOf(local, queue.logicalId).MessageRetentionPeriod);
      expect(queue.redrive?.maxReceiveCount).toBe(RECONCILE_MAX_RECEIVE_COUNT);
    }
    // The two reconcile lanes share one dead-letter queue, as in the template.
    expect(run.queues.reconcile.redrive?.deadLetterQueue).toBe(run.queues.poll.redrive?.deadLetterQueue);

    const senderMapping = mappingOn(local, run.queues.dispatch.logicalId);
    expect(run.sender.batchSize).toBe(senderMapping.BatchSize);
    expect(run.sender.concurrency).toBe((senderMapping.ScalingConfig as Props).MaximumConcurrency);
    expect(run.sender.reportBatchItemFailures).toBe(true);
    expect(run.reconcileWorker.concurrency).toBe(RECONCILE_WORKER_MAX_CONCURRENCY);
    expect(run.statusPoll.concurrency).toBe(STATUS_POLL_WORKER_MAX_CONCURRENCY);

    const streamOrigin = wiring.functions.forwarder?.eventSources[0]?.origin;
    const streamMapping = mappingOn(
      local,
      streamOrigin?.kind === 'dynamodb-stream' ? streamOrigin.table : '',
    );
    expect(run.forwarder.batchSize).toBe(streamMapping.BatchSize);
    expect(run.forwarder.bisectOnError).toBe(streamMapping.BisectBatchOnFunctionError);
    expect(run.forwarder.maxRetries).toBe(streamMapping.MaximumRetryAttempts);
    expect(run.forwarder.maxRecordAgeSeconds).toBe(FORWARDER_MAX_RECORD_AGE.toSeconds());
    expect(run.forwarder.filters).toEqual(
      (streamMapping.FilterCriteria as { Filters: { Pattern: string }[] }).Filters.map((f) =>
        JSON.parse(f.Pattern),
      ),
    );
    expect(JSON.stringify(streamMapping.DestinationConfig)).toContain(`"${run.forwarder.onFailure}"`);

    for (const fn of Object.values(wiring.functions)) {
      expect(run.timeoutsMs[fn.name]).toBe(Number(propsOf(local, fn.logicalId).Timeout) * 1000);
    }
  });

  it('reads the schedule, its asynchronous invoke configuration and the SNS subscriptions', () => {
    // Prepare
    const local = templates[provider];
    const [ruleId, rule] = resourcesOf(local, 'AWS::Events::Rule')[0] as [string, Props];

    // Act
    const wiring = readWiring(local);

    // Assess
    expect(wiring.schedules).toEqual([
      expect.objectContaining({
        logicalId: ruleId,
        expression: rule.ScheduleExpression,
        target: 'reconciler',
      }),
    ]);
    const passes = Number(
      (propsOf(local, local.functions.reconciler as string).Environment as { Variables: Props }).Variables[
        SETTINGS.reconcilePassesPerRun.env
      ],
    );
    expect(planLocalRun(wiring).reconcileIntervalMs).toBe((wiring.schedules[0]?.intervalMs ?? 0) / passes);
    const invokeConfig = resourcesOf(local, 'AWS::Lambda::EventInvokeConfig').find(([, p]) =>
      JSON.stringify(p.FunctionName).includes(`"${local.functions.reconciler}"`),
    )?.[1];
    expect(wiring.functions.reconciler?.asyncInvoke).toEqual({
      maxRetries: invokeConfig?.MaximumRetryAttempts,
      maxEventAgeSeconds: invokeConfig?.MaximumEventAgeInSeconds,
    });
    const subscriptions = resourcesOf(local, 'AWS::SNS::Subscription').filter(([, p]) =>
      Object.values(local.functions).some((id) => JSON.stringify(p.Endpoint).includes(`"${id}"`)),
    );
    expect(wiring.subscriptions.map((s) => s.logicalId)).toEqual(subscriptions.map(([id]) => id));
    if (provider === 'eum') {
      expect(wiring.subscriptions[0]).toMatchObject({ protocol: 'lambda', target: 'eumReceipts' });
      expect(wiring.subscriptions[0]?.deadLetterQueue).toBeDefined();
      expect(wiring.functions.eumReceipts?.asyncInvoke?.onFailure).toBeDefined();
    }
  });
});

describe('the local run', () => {
  it('takes a changed template as it is: no value of its own', () => {
    // Prepare
    const local = structuredClone(templates.simulator);
    const dispatchId = planLocalRun(readWiring(local)).queues.dispatch.logicalId;
    const dispatch = local.template.Resources[dispatchId]?.Properties as Props;
    dispatch.VisibilityTimeout = 77;
    (dispatch.RedrivePolicy as Props).maxReceiveCount = 9;
    const api = local.template.Resources[local.functions.api as string]?.Properties as Props;
    api.Timeout = 4;

    // Act
    const run = planLocalRun(readWiring(local));

    // Assess
    expect(run.queues.dispatch.visibilityTimeoutSeconds).toBe(77);
    expect(run.queues.dispatch.redrive?.maxReceiveCount).toBe(9);
    expect(run.timeoutsMs.api).toBe(4000);
  });

  it('applies the named local overrides over the template, and only those', () => {
    // Prepare
    const wiring = readWiring(templates.simulator);
    const template = planLocalRun(wiring);

    // Act
    const run = planLocalRun(wiring, {
      visibilityTimeoutSeconds: 2,
      maxReceiveCount: 3,
      reconcileIntervalMs: 250,
      senderConcurrency: 4,
      reconcileWorkerConcurrency: 1,
      reconcilePollWorkerConcurrency: 1,
    });

    // Assess
    expect(run.queues.dispatch).toMatchObject({
      visibilityTimeoutSeconds: 2,
      redrive: { maxReceiveCount: 3 },
    });
    expect(run.queues.poll.visibilityTimeoutSeconds).toBe(2);
    expect(run.reconcileIntervalMs).toBe(250);
    expect([run.sender.concurrency, run.reconcileWorker.concurrency, run.statusPoll.concurrency]).toEqual([
      4, 1, 1,
    ]);
    expect(run.sender.batchSize).toBe(template.sender.batchSize);
    expect(run.forwarder).toEqual(template.forwarder);
    expect(run.timeoutsMs).toEqual(template.timeoutsMs);
  });

  it('delivers the forwarder the records its template filter admits, and discards the others', () => {
    // Prepare
    const { filters } = planLocalRun(readWiring(templates.simulator)).forwarder;
    const record = (eventName: string, sk: string, state?: string) => ({
      eventName,
      dynamodb: {
        Keys: { pk: { S: 'k' }, sk: { S: sk } },
        ...(state ? { NewImage: { state: { S: state } } } : {}),
      },
    });

    // Act
    const admitted = [
      record('INSERT', 'CMD', 'accepted'),
      record('MODIFY', 'CMD', 'accepted'),
      record('MODIFY', 'CMD', 'sent'),
      record('INSERT', 'EVIDENCE#1', 'accepted'),
      record('REMOVE', 'CMD'),
    ].map((r) => matchesAny(filters, r));

    // Assess
    expect(admitted).toEqual([true, true, false, false, false]);
  });
});
