import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  Unit,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { ResolvedSettings } from '../settings.js';
import type { Api } from './api.js';
import type { Pipeline } from './pipeline.js';

/** Props of {@link Observability}. */
export interface ObservabilityProps {
  readonly settings: ResolvedSettings;
  readonly pipeline: Pipeline;
  readonly api: Api;
}

/**
 * Metrics derived from the functions' structured logs (Powertools Logger JSON: `message` plus the
 * fields logged with it). These lines are the contract with the handlers:
 * - sender: `message: "dispatch"` with `kind` (`sent`, ...) and `outcome` (the SendOutcome kind);
 *   `message: "dispatch failed"` when a record's dispatch threw;
 * - reconciler: `message: "reconciled"` with `oldestUnknownAgeMs`, `oldestDueLagMs` and `errors`;
 * - reconcile worker: `message: "reconcile batch"` with `errors`, `poisoned` and `parked`.
 */
export const LOG_METRICS = {
  providerSends: 'ProviderSends',
  providerUnknownOutcomes: 'ProviderUnknownOutcomes',
  senderRecordFailures: 'SenderRecordFailures',
  oldestDispatchUnknownAge: 'OldestDispatchUnknownAgeMs',
  reconcileItemErrors: 'ReconcileItemErrors',
  oldestDueLag: 'OldestDueLagMs',
  reconcileWorkerItemErrors: 'ReconcileWorkerItemErrors',
  reconcilePoisoned: 'ReconcilePoisonItems',
  reconcileParked: 'ReconcileParkedItems',
} as const;

const FIVE_MINUTES = Duration.minutes(5);

/**
 * Alarms and a dashboard for what an operator must notice: dead letters, unknown outcomes that
 * stay unknown, a forwarder falling behind the stream, sender and reconciler failures, and a
 * provider that starts answering ambiguously.
 */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: Readonly<Record<string, Alarm>>;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { settings, pipeline, api } = props;
    const namespace = settings.metricsNamespace;

    const logMetric = (
      logGroup: ILogGroup,
      metricName: string,
      pattern: ReturnType<typeof FilterPattern.all>,
      metricValue: string,
      unit: Unit,
    ): void => {
      new MetricFilter(this, `${metricName}Filter`, {
        logGroup,
        metricNamespace: namespace,
        metricName,
        filterPattern: pattern,
        metricValue,
        unit,
      });
    };
    const is = (field: string, value: string) => FilterPattern.stringValue(`$.${field}`, '=', value);
    const senderLogs = pipeline.sender.serviceLogGroup;
    const reconcilerLogs = pipeline.reconciler.serviceLogGroup;
    logMetric(
      senderLogs,
      LOG_METRICS.providerSends,
      FilterPattern.all(is('message', 'dispatch'), is('kind', 'sent')),
      '1',
      Unit.COUNT,
    );
    logMetric(
      senderLogs,
      LOG_METRICS.providerUnknownOutcomes,
      FilterPattern.all(is('message', 'dispatch'), is('kind', 'sent'), is('outcome', 'unknown')),
      '1',
      Unit.COUNT,
    );
    logMetric(
      senderLogs,
      LOG_METRICS.senderRecordFailures,
      FilterPattern.all(is('message', 'dispatch failed')),
      '1',
      Unit.COUNT,
    );
    logMetric(
      reconcilerLogs,
      LOG_METRICS.oldestDispatchUnknownAge,
      FilterPattern.all(is('message', 'reconciled')),
      '$.oldestUnknownAgeMs',
      Unit.MILLISECONDS,
    );
    logMetric(
      reconcilerLogs,
      LOG_METRICS.reconcileItemErrors,
      FilterPattern.all(is('message', 'reconciled')),
      '$.errors',
      Unit.COUNT,
    );
    const workerLogs = pipeline.reconcileWorker.serviceLogGroup;
    const batch = FilterPattern.all(is('message', 'reconcile batch'));
    logMetric(
      reconcilerLogs,
      LOG_METRICS.oldestDueLag,
      FilterPattern.all(is('message', 'reconciled')),
      '$.oldestDueLagMs',
      Unit.MILLISECONDS,
    );
    logMetric(workerLogs, LOG_METRICS.reconcileWorkerItemErrors, batch, '$.errors', Unit.COUNT);
    logMetric(workerLogs, LOG_METRICS.reconcilePoisoned, batch, '$.poisoned', Unit.COUNT);
    logMetric(workerLogs, LOG_METRICS.reconcileParked, batch, '$.parked', Unit.COUNT);
    const serviceMetric = (metricName: string, statistic: 'Sum' | 'Maximum') =>
      new Metric({ namespace, metricName, statistic, period: FIVE_MINUTES });

    const sends = serviceMetric(LOG_METRICS.providerSends, 'Sum');
    const unknowns = serviceMetric(LOG_METRICS.providerUnknownOutcomes, 'Sum');
    const unknownRate = new MathExpression({
      label: 'Unknown provider outcomes (% of sends)',
      expression: 'IF(sends > 0, 100 * FILL(unknowns, 0) / sends, 0)',
      usingMetrics: { sends, unknowns },
      period: FIVE_MINUTES,
    });
    const oldestUnknownAge = serviceMetric(LOG_METRICS.oldestDispatchUnknownAge, 'Maximum');
    const senderFailures = new MathExpression({
      label: 'Sender errors (invocations + records)',
      expression: 'FILL(invocationErrors, 0) + FILL(recordFailures, 0)',
      usingMetrics: {
        invocationErrors: pipeline.sender.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        recordFailures: serviceMetric(LOG_METRICS.senderRecordFailures, 'Sum'),
      },
      period: FIVE_MINUTES,
    });
    const reconcilerFailures = new MathExpression({
      label: 'Reconciler failures (invocations + items, pass and workers)',
      expression:
        'FILL(invocationErrors, 0) + FILL(itemErrors, 0) + FILL(workerInvocationErrors, 0) + FILL(workerItemErrors, 0)',
      usingMetrics: {
        invocationErrors: pipeline.reconciler.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        itemErrors: serviceMetric(LOG_METRICS.reconcileItemErrors, 'Sum'),
        workerInvocationErrors: pipeline.reconcileWorker.metricErrors({
          period: FIVE_MINUTES,
          statistic: 'Sum',
        }),
        workerItemErrors: serviceMetric(LOG_METRICS.reconcileWorkerItemErrors, 'Sum'),
      },
      period: FIVE_MINUTES,
    });
    const oldestDueLag = serviceMetric(LOG_METRICS.oldestDueLag, 'Maximum');
    const parked = serviceMetric(LOG_METRICS.reconcileParked, 'Sum');
    const poisoned = serviceMetric(LOG_METRICS.reconcilePoisoned, 'Sum');
    const iteratorAge = pipeline.forwarder.metric('IteratorAge', {
      statistic: 'Maximum',
      period: FIVE_MINUTES,
    });
    const stalledWindow = Duration.minutes(Math.max(5, 3 * settings.reconcileSchedule.toMinutes()));

    const alarm = (
      name: string,
      description: string,
      metric: IMetric,
      threshold: number,
      options: {
        comparison?: ComparisonOperator;
        missing?: TreatMissingData;
        periods?: number;
      } = {},
    ): Alarm => {
      const created = new Alarm(this, name, {
        alarmDescription: `reset-notifier: ${description}`,
        metric,
        threshold,
        evaluationPeriods: options.periods ?? 1,
        datapointsToAlarm: options.periods ?? 1,
        comparisonOperator: options.comparison ?? ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: options.missing ?? TreatMissingData.NOT_BREACHING,
      });
      if (settings.alarmTopic !== undefined) {
        created.addAlarmAction(new SnsAction(settings.alarmTopic));
        created.addOkAction(new SnsAction(settings.alarmTopic));
      }
      return created;
    };

    this.alarms = {
      dispatchDeadLetters: alarm(
        'DispatchDeadLetters',
        'dispatch messages reached the dead-letter queue (the reconciler re-drives their commands; check the sender logs)',
        pipeline.dispatchDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
        0,
      ),
      forwarderFailures: alarm(
        'ForwarderFailures',
        'stream records reached the forwarder failure queue',
        pipeline.forwarderFailureQueue.metricApproximateNumberOfMessagesVisible({
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
        0,
      ),
      oldestDispatchUnknown: alarm(
        'OldestDispatchUnknown',
        'a dispatch_unknown command stays unresolved (provider lookups inconclusive)',
        oldestUnknownAge,
        settings.dispatchUnknownAgeAlarm.toMilliseconds(),
      ),
      forwarderIteratorAge: alarm(
        'ForwarderIteratorAge',
        'the forwarder falls behind the table stream',
        iteratorAge,
        Duration.minutes(2).toMilliseconds(),
      ),
      senderErrors: alarm('SenderErrors', 'the sender failed invocations or records', senderFailures, 0),
      reconcilerFailures: alarm(
        'ReconcilerFailures',
        'the reconciler failed a pass or items',
        reconcilerFailures,
        0,
      ),
      reconcilerStalled: alarm(
        'ReconcilerStalled',
        'the reconciler has not run (schedule disabled or throttled)',
        pipeline.reconciler.metricInvocations({ statistic: 'Sum', period: stalledWindow }),
        1,
        { comparison: ComparisonOperator.LESS_THAN_THRESHOLD, missing: TreatMissingData.BREACHING },
      ),
      reconcilePoisonParked: alarm(
        'ReconcilePoisonParked',
        'an item the reconciler cannot read or handle was parked after its retries (see "reconcile item failed" logs for key and cause)',
        parked,
        0,
      ),
      reconcileDeadLetters: alarm(
        'ReconcileDeadLetters',
        'reconcile messages were moved to the reconcile DLQ (repeated transient faults; the next sweep enqueues the keys again)',
        pipeline.reconcileDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
        0,
      ),
      reconcileLag: alarm(
        'ReconcileLag',
        'due items wait longer than the unknown-age alarm for the reconciler (a backlog larger than the workers drain)',
        oldestDueLag,
        settings.dispatchUnknownAgeAlarm.toMilliseconds(),
        { periods: 2 },
      ),
      providerUnknownRate: alarm(
        'ProviderUnknownRate',
        `more than ${settings.unknownOutcomeRateAlarmPercent}% of provider calls end with an unknown outcome`,
        unknownRate,
        settings.unknownOutcomeRateAlarmPercent,
        { periods: 2 },
      ),
    };

    const fn = {
      forwarder: pipeline.forwarder,
      sender: pipeline.sender,
      reconciler: pipeline.reconciler,
      reconcileWorker: pipeline.reconcileWorker,
      api: api.handler,
    };
    const width = 8;
    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown:
          '# reset-notifier\nStates and evidence per key: `GET /v1/notifications/{key}` and `/evidence` (SigV4).',
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      new AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(this.alarms), width: 24, height: 4 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'API requests and errors',
        left: [api.httpApi.metricCount({ period: FIVE_MINUTES })],
        right: [
          api.httpApi.metricClientError({ period: FIVE_MINUTES }),
          api.httpApi.metricServerError({ period: FIVE_MINUTES }),
        ],
        width,
      }),
      new GraphWidget({
        title: 'API latency (p99)',
        left: [api.httpApi.metricLatency({ statistic: 'p99' })],
        width,
      }),
      new GraphWidget({
        title: 'Provider sends and unknown outcomes',
        left: [sends, unknowns],
        right: [unknownRate],
        width,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Dispatch queue',
        left: [
          pipeline.dispatchQueue.metricApproximateNumberOfMessagesVisible(),
          pipeline.dispatchQueue.metricApproximateNumberOfMessagesNotVisible(),
        ],
        right: [pipeline.dispatchQueue.metricApproximateAgeOfOldestMessage()],
        width,
      }),
      new GraphWidget({
        title: 'Dead letters',
        left: [
          pipeline.dispatchDeadLetterQueue.metricApproximateNumberOfMessagesVisible(),
          pipeline.forwarderFailureQueue.metricApproximateNumberOfMessagesVisible(),
        ],
        width,
      }),
      new GraphWidget({
        title: 'Forwarder iterator age / oldest dispatch_unknown (ms)',
        left: [iteratorAge],
        right: [oldestUnknownAge],
        width,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Reconcile queue',
        left: [
          pipeline.reconcileQueue.metricApproximateNumberOfMessagesVisible(),
          pipeline.reconcileQueue.metricApproximateNumberOfMessagesNotVisible(),
        ],
        right: [pipeline.reconcileQueue.metricApproximateAgeOfOldestMessage()],
        width,
      }),
      new GraphWidget({ title: 'Oldest due lag (ms)', left: [oldestDueLag], width }),
      new GraphWidget({ title: 'Poison items (marked / parked)', left: [poisoned, parked], width }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Function errors',
        left: Object.values(fn).map((f) => f.metricErrors({ period: FIVE_MINUTES })),
        width,
      }),
      new GraphWidget({
        title: 'Function throttles',
        left: Object.values(fn).map((f) => f.metricThrottles({ period: FIVE_MINUTES })),
        width,
      }),
      new GraphWidget({
        title: 'Function duration (p99)',
        left: Object.values(fn).map((f) => f.metricDuration({ period: FIVE_MINUTES, statistic: 'p99' })),
        width,
      }),
    );
  }
}
