import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
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
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import {
  CIRCUIT_LEVELS,
  circuitMetric,
  SERVICE_METRIC_DIMENSIONS,
  SERVICE_METRICS,
  ZERO_SMS_CLASS_METRICS,
} from '../../shared/handlers/service-metrics.js';
import { providerInfra } from '../../shared/providers/infra-registry.js';
import type { ResolvedSettings } from '../settings.js';
import type { Api } from './api.js';
import type { KeptReceipts } from './kept-receipts.js';
import type { Pipeline } from './pipeline.js';
import type { ServiceFunction } from './service-function.js';

/** Props of {@link Observability}. */
export interface ObservabilityProps {
  readonly settings: ResolvedSettings;
  readonly pipeline: Pipeline;
  readonly api: Api;
  /** The kept receipts of an asynchronously invoked receipts function (End User Messaging), if any. */
  readonly keptReceipts?: KeptReceipts;
}

/** The service's EMF metric names, as the handlers' composition root publishes them. */
export { SERVICE_METRICS };

/**
 * @deprecated The metrics are EMF now, not log-derived: use {@link SERVICE_METRICS} (same names).
 */
export const LOG_METRICS = SERVICE_METRICS;

const FIVE_MINUTES = Duration.minutes(5);

/** Published by the receipts handler (one per callback whose signature did not verify). */
export const RECEIPT_SIGNATURE_FAILURES = SERVICE_METRICS.receiptSignatureFailures;
/** API p99 latency that pages (admission is one KMS call and one conditional write). */
export const API_LATENCY_P99_ALARM = Duration.seconds(1);
/** API 5xx responses per 5 minutes that page (503s under throttling are expected in small numbers). */
export const API_SERVER_ERRORS_ALARM = 5;
/** Callbacks per 5 minutes failing their signature that page (a wrong token or URL, or a forger). */
export const RECEIPT_SIGNATURE_FAILURES_ALARM = 5;

/**
 * The zero-SMS alarm (docs/deploy.md, "Alarms"): it pages when more than `ratePercent` of the
 * commands that became final in one `period` ended without any SMS to a valid destination
 * (`ZeroSmsOutcome` / `FinalOutcomes`). Below 100 / `ratePercent` final outcomes a period, one
 * zero-SMS outcome is enough; above, carrier background (handsets off, roaming) stays under it.
 * The chaos alarm drill reads these figures from here.
 */
export const ZERO_SMS_ALARM = {
  period: FIVE_MINUTES,
  ratePercent: 5,
  evaluationPeriods: 1,
  expression: 'IF(finals > 0, 100 * FILL(zeroSms, 0) / finals, 0)',
} as const;

/** CloudWatch's service principal: alarms publish their state changes as it. */
export const CLOUDWATCH_PRINCIPAL = 'cloudwatch.amazonaws.com';

/** How one alarm compares and how it treats silence. */
interface AlarmOptions {
  readonly comparison?: ComparisonOperator;
  readonly missing?: TreatMissingData;
  readonly periods?: number;
}

/**
 * Alarms and a dashboard for what an operator must notice: dead letters, unknown outcomes that
 * stay unknown, a forwarder falling behind the stream, function errors and throttles, API 5xx and
 * latency, a dispatch queue that stops draining, forged or misconfigured receipts, and SMS spend.
 * Every alarm notifies the alarm topic (created here unless one is given) on alarm and recovery.
 */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: Readonly<Record<string, Alarm>>;
  /** Where every alarm notifies: the given topic, or one created here (encrypted, TLS only). */
  readonly alarmTopic: ITopic;
  private readonly namespace: string;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { settings, pipeline, api } = props;
    this.namespace = settings.metricsNamespace;
    this.alarmTopic = settings.alarmTopic ?? this.createAlarmTopic(settings.alarmEmail);
    const m = this.serviceMetrics(pipeline);
    this.alarms = {
      ...this.queueAlarms(settings, pipeline),
      ...this.functionAlarms(settings, pipeline, api, m),
      ...this.apiAlarms(api),
      ...this.providerAlarms(settings, m),
      ...this.reconcilerAlarms(settings, pipeline, m),
      ...(props.keptReceipts === undefined ? {} : this.keptReceiptsAlarms(props.keptReceipts)),
      ...this.circuitAlarms(settings),
    };
    this.dashboard = this.createDashboard(pipeline, api, m, settings);
  }

  /**
   * An encrypted topic CloudWatch may publish to. `enforceSSL` writes a topic policy, and a topic
   * policy replaces SNS's default one: without an Allow of its own, CloudWatch could not publish and
   * every alarm action would fail. Both the topic policy and the key policy allow CloudWatch only on
   * behalf of this account's alarms in this region (`aws:SourceAccount`, `aws:SourceArn`: the
   * confused-deputy conditions), and the topic keeps its HTTPS-only Deny.
   */
  private createAlarmTopic(email: string | undefined): ITopic {
    const { account, region, partition } = Stack.of(this);
    const fromOurAlarms = {
      StringEquals: { 'aws:SourceAccount': account },
      ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
    };
    const key = new Key(this, 'AlarmTopicKey', {
      description: 'reset-notifier: encrypts the alarm topic',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    // What SNS asks of a publisher to an encrypted topic (SNS developer guide, "Enable
    // compatibility between event sources from AWS services and encrypted topics").
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsEncrypt',
        principals: [new ServicePrincipal(CLOUDWATCH_PRINCIPAL)],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromOurAlarms,
      }),
    );
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: 'reset-notifier alarms',
      masterKey: key,
      enforceSSL: true,
    });
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new ServicePrincipal(CLOUDWATCH_PRINCIPAL)],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: fromOurAlarms,
      }),
    );
    if (email !== undefined) topic.addSubscription(new EmailSubscription(email));
    return topic;
  }

  /**
   * One of the service's metrics, as the functions publish it (EMF through Powertools `Metrics`,
   * see {@link SERVICE_METRICS}): the stack's namespace and the `service` dimension.
   */
  private serviceMetric(metricName: string, statistic: 'Sum' | 'Maximum'): Metric {
    return new Metric({
      namespace: this.namespace,
      metricName,
      dimensionsMap: { ...SERVICE_METRIC_DIMENSIONS },
      statistic,
      period: FIVE_MINUTES,
    });
  }

  /** The derived series the alarms and the dashboard share. */
  private serviceMetrics(pipeline: Pipeline) {
    const sends = this.serviceMetric(SERVICE_METRICS.providerSends, 'Sum');
    const unknowns = this.serviceMetric(SERVICE_METRICS.providerUnknownOutcomes, 'Sum');
    const sumOf = (label: string, invocationErrors: IMetric, other: IMetric) =>
      new MathExpression({
        label,
        expression: 'FILL(invocationErrors, 0) + FILL(other, 0)',
        usingMetrics: { invocationErrors, other },
        period: FIVE_MINUTES,
      });
    const errorsOf = (fn: ServiceFunction) => fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' });
    return {
      sends,
      unknowns,
      unknownRate: new MathExpression({
        label: 'Unknown provider outcomes (% of sends)',
        expression: 'IF(sends > 0, 100 * FILL(unknowns, 0) / sends, 0)',
        usingMetrics: { sends, unknowns },
        period: FIVE_MINUTES,
      }),
      oldestUnknownAge: this.serviceMetric(SERVICE_METRICS.oldestDispatchUnknownAge, 'Maximum'),
      senderFailures: sumOf(
        'Sender errors (invocations + records)',
        errorsOf(pipeline.sender),
        this.serviceMetric(SERVICE_METRICS.senderRecordFailures, 'Sum'),
      ),
      reconcilerFailures: new MathExpression({
        label: 'Reconciler failures (invocations + items, pass and workers)',
        expression:
          'FILL(invocationErrors, 0) + FILL(itemErrors, 0) + FILL(workerInvocationErrors, 0) + FILL(workerItemErrors, 0)',
        usingMetrics: {
          invocationErrors: errorsOf(pipeline.reconciler),
          itemErrors: this.serviceMetric(SERVICE_METRICS.reconcileItemErrors, 'Sum'),
          workerInvocationErrors: errorsOf(pipeline.reconcileWorker),
          workerItemErrors: this.serviceMetric(SERVICE_METRICS.reconcileWorkerItemErrors, 'Sum'),
        },
        period: FIVE_MINUTES,
      }),
      oldestDueLag: this.serviceMetric(SERVICE_METRICS.oldestDueLag, 'Maximum'),
      parked: this.serviceMetric(SERVICE_METRICS.reconcileParked, 'Sum'),
      poisoned: this.serviceMetric(SERVICE_METRICS.reconcilePoisoned, 'Sum'),
      iteratorAge: pipeline.forwarder.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES }),
      ...this.zeroSmsMetrics(),
    };
  }

  /** Final outcomes, zero-SMS outcomes by class, and the rate the zero-SMS alarm reads. */
  private zeroSmsMetrics() {
    const finals = this.serviceMetric(SERVICE_METRICS.finalOutcomes, 'Sum');
    const zeroSms = this.serviceMetric(SERVICE_METRICS.zeroSmsOutcomes, 'Sum');
    return {
      finals,
      zeroSms,
      zeroSmsRate: new MathExpression({
        label: 'Zero-SMS outcomes, valid destination (% of final outcomes)',
        expression: ZERO_SMS_ALARM.expression,
        usingMetrics: { finals, zeroSms },
        period: ZERO_SMS_ALARM.period,
      }),
      zeroSmsByClass: Object.values(ZERO_SMS_CLASS_METRICS).map((name) => this.serviceMetric(name, 'Sum')),
      zeroSmsDestinationFault: this.serviceMetric(SERVICE_METRICS.zeroSmsDestinationFault, 'Sum'),
      twilioAbsenceOff: [
        this.serviceMetric(SERVICE_METRICS.twilioRedactionObserved, 'Sum'),
        this.serviceMetric(SERVICE_METRICS.twilioListLagObserved, 'Sum'),
      ],
    };
  }

  /** One alarm that notifies the alarm topic on alarm and on recovery. */
  private alarm(
    name: string,
    description: string,
    metric: IMetric,
    threshold: number,
    options: AlarmOptions = {},
  ): Alarm {
    const created = new Alarm(this, name, {
      alarmDescription: `reset-notifier: ${description}`,
      metric,
      threshold,
      evaluationPeriods: options.periods ?? 1,
      datapointsToAlarm: options.periods ?? 1,
      comparisonOperator: options.comparison ?? ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: options.missing ?? TreatMissingData.NOT_BREACHING,
    });
    created.addAlarmAction(new SnsAction(this.alarmTopic));
    created.addOkAction(new SnsAction(this.alarmTopic));
    return created;
  }

  /** Dead letters, failed stream records, and a dispatch queue that stops draining. */
  private queueAlarms(settings: ResolvedSettings, pipeline: Pipeline): Record<string, Alarm> {
    const depth = (queue: Pipeline['dispatchQueue']) =>
      queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) });
    return {
      dispatchDeadLetters: this.alarm(
        'DispatchDeadLetters',
        'dispatch messages reached the dead-letter queue (the reconciler re-drives their commands; check the sender logs)',
        depth(pipeline.dispatchDeadLetterQueue),
        0,
      ),
      forwarderFailures: this.alarm(
        'ForwarderFailures',
        'stream records reached the forwarder failure queue',
        depth(pipeline.forwarderFailureQueue),
        0,
      ),
      dispatchQueueAge: this.alarm(
        'DispatchQueueAge',
        'the oldest dispatch message waits longer than the queue safety net (sender throttled, failing or disabled)',
        pipeline.dispatchQueue.metricApproximateAgeOfOldestMessage({
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
        settings.timing.queueSafetyNet.toSeconds(),
        { periods: 3 },
      ),
    };
  }

  /** Errors and throttles of every function; the reconciler also when it stops running. */
  private functionAlarms(
    settings: ResolvedSettings,
    pipeline: Pipeline,
    api: Api,
    m: ReturnType<Observability['serviceMetrics']>,
  ): Record<string, Alarm> {
    const functions = {
      Api: api.handler,
      Forwarder: pipeline.forwarder,
      Sender: pipeline.sender,
      Reconciler: pipeline.reconciler,
      ReconcileWorker: pipeline.reconcileWorker,
    };
    const stalledWindow = Duration.minutes(Math.max(5, 3 * settings.reconcileSchedule.toMinutes()));
    const alarms: Record<string, Alarm> = {
      apiErrors: this.alarm(
        'ApiErrors',
        'the api function failed invocations (callers saw a 500)',
        api.handler.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        0,
      ),
      forwarderErrors: this.alarm(
        'ForwarderErrors',
        'the forwarder failed invocations (stream records are retried, then sent to its failure queue)',
        pipeline.forwarder.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        0,
      ),
      senderErrors: this.alarm(
        'SenderErrors',
        'the sender failed invocations or records',
        m.senderFailures,
        0,
      ),
      senderClockSkew: this.alarm(
        'SenderClockSkew',
        "a sender's clock is off DynamoDB's beyond the bound: it sends nothing (docs/operations.md#clock-skew)",
        this.serviceMetric(SERVICE_METRICS.senderClockSkew, 'Sum'),
        0,
      ),
      reconcilerFailures: this.alarm(
        'ReconcilerFailures',
        'the reconciler failed a pass or items',
        m.reconcilerFailures,
        0,
      ),
      forwarderIteratorAge: this.alarm(
        'ForwarderIteratorAge',
        'the forwarder falls behind the table stream',
        m.iteratorAge,
        Duration.minutes(2).toMilliseconds(),
      ),
      reconcilerStalled: this.alarm(
        'ReconcilerStalled',
        'the reconciler has not run (schedule disabled or throttled)',
        pipeline.reconciler.metricInvocations({ statistic: 'Sum', period: stalledWindow }),
        1,
        { comparison: ComparisonOperator.LESS_THAN_THRESHOLD, missing: TreatMissingData.BREACHING },
      ),
    };
    for (const [name, fn] of Object.entries(functions)) {
      alarms[`${name.charAt(0).toLowerCase()}${name.slice(1)}Throttles`] = this.alarm(
        `${name}Throttles`,
        `the ${name.toLowerCase()} function is throttled (account or reserved concurrency exhausted)`,
        fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
        0,
      );
    }
    return alarms;
  }

  /** Items the reconciler could not handle, its dead letters, and a backlog it does not drain. */
  private reconcilerAlarms(
    settings: ResolvedSettings,
    pipeline: Pipeline,
    m: ReturnType<Observability['serviceMetrics']>,
  ): Record<string, Alarm> {
    return {
      reconcilePoisonParked: this.alarm(
        'ReconcilePoisonParked',
        'an item the reconciler cannot read or handle was parked after its retries (see "reconcile item failed" logs for key and cause)',
        m.parked,
        0,
      ),
      reconcileDeadLetters: this.alarm(
        'ReconcileDeadLetters',
        'reconcile or status-poll messages were moved to the reconcile DLQ (repeated transient faults; the next sweep enqueues the keys again)',
        pipeline.reconcileDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
        0,
      ),
      reconcileLag: this.alarm(
        'ReconcileLag',
        'due items wait longer than the unknown-age alarm for the reconciler (a backlog larger than the workers drain)',
        m.oldestDueLag,
        settings.dispatchUnknownAgeAlarm.toMilliseconds(),
        { periods: 2 },
      ),
    };
  }

  /**
   * Receipts that failed every attempt were kept (they wait for `reset-notifier receipts redrive`),
   * and a keeper that fails (the failed receipts and the subscription's dead letters are not kept).
   */
  private keptReceiptsAlarms(kept: KeptReceipts): Record<string, Alarm> {
    return {
      keptReceipts: this.alarm(
        'KeptReceipts',
        'receipts failed every attempt and were kept without numbers: find the cause in the receipts logs, then run `reset-notifier receipts redrive` (docs/operations.md)',
        kept.queue.metricApproximateNumberOfMessagesVisible({
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
        0,
      ),
      receiptsKeeperErrors: this.alarm(
        'ReceiptsKeeperErrors',
        "the receipts keeper failed invocations, or Lambda could not hand it a failed receipt: failed receipts are not kept, the subscription's dead letters wait (they expire after their retention)",
        new MathExpression({
          label: 'Receipts keeper errors + failed-receipt deliveries to it',
          expression: 'FILL(keeperErrors, 0) + FILL(deliveryFailures, 0)',
          usingMetrics: {
            keeperErrors: kept.keeper.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
            // Lambda's metric when it cannot send a record to a destination (a permission, a size limit).
            deliveryFailures: kept.receipts.metric('DestinationDeliveryFailures', {
              period: FIVE_MINUTES,
              statistic: 'Sum',
            }),
          },
          period: FIVE_MINUTES,
        }),
        0,
      ),
    };
  }

  /**
   * One alarm per listed provider whose circuit a sender saw open in a minute
   * (`ProviderCircuit_<provider>` >= open; docs/providers/failover.md#circuit): that provider is
   * browned out or down and the senders send through the next one. It clears once a minute of
   * views saw the circuit closed again; without sends there are no views and it stays OK. With one
   * provider the senders keep no circuit (nothing to route to): no alarm.
   */
  private circuitAlarms(settings: ResolvedSettings): Record<string, Alarm> {
    const alarms: Record<string, Alarm> = {};
    for (const { kind } of circuitProviders(settings)) {
      alarms[`providerCircuitOpen${capitalized(kind)}`] = this.alarm(
        `ProviderCircuitOpen${capitalized(kind)}`,
        `the ${kind} circuit is open: its recent sends failed or timed out over the circuit's thresholds, and the senders send through the next listed provider (docs/providers/failover.md#circuit)`,
        this.circuitLevel(kind),
        CIRCUIT_LEVELS.open,
        { comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD },
      );
    }
    return alarms;
  }

  /** A provider's circuit as the senders saw it: the worst level of each minute. */
  private circuitLevel(kind: string): Metric {
    return this.serviceMetric(circuitMetric(kind), 'Maximum').with({ period: Duration.minutes(1) });
  }

  /** API 5xx and p99 latency (API Gateway's own metrics: what callers saw). */
  private apiAlarms(api: Api): Record<string, Alarm> {
    return {
      apiServerErrors: this.alarm(
        'ApiServerErrors',
        `the API answered more than ${API_SERVER_ERRORS_ALARM} 5xx in 5 minutes`,
        api.httpApi.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
        API_SERVER_ERRORS_ALARM,
      ),
      apiLatency: this.alarm(
        'ApiLatencyP99',
        `API p99 latency above ${API_LATENCY_P99_ALARM.toMilliseconds()} ms for 15 minutes`,
        api.httpApi.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }),
        API_LATENCY_P99_ALARM.toMilliseconds(),
        { periods: 3 },
      ),
    };
  }

  /** Outcomes the provider left unknown, forged or misconfigured receipts, and SMS spend (or sends per hour). */
  private providerAlarms(
    settings: ResolvedSettings,
    m: ReturnType<Observability['serviceMetrics']>,
  ): Record<string, Alarm> {
    const alarms: Record<string, Alarm> = {
      zeroSmsOutcomes: this.alarm(
        'ZeroSmsOutcomes',
        `more than ${ZERO_SMS_ALARM.ratePercent}% of the commands that became final in 5 minutes ended without any SMS to a valid destination (ZeroSmsOutcome / FinalOutcomes: users who asked for a reset and got nothing)`,
        m.zeroSmsRate,
        ZERO_SMS_ALARM.ratePercent,
        { periods: ZERO_SMS_ALARM.evaluationPeriods },
      ),
      oldestDispatchUnknown: this.alarm(
        'OldestDispatchUnknown',
        'a dispatch_unknown command stays unresolved (provider lookups inconclusive)',
        m.oldestUnknownAge,
        settings.dispatchUnknownAgeAlarm.toMilliseconds(),
      ),
      providerUnknownRate: this.alarm(
        'ProviderUnknownRate',
        `more than ${settings.unknownOutcomeRateAlarmPercent}% of provider calls end with an unknown outcome`,
        m.unknownRate,
        settings.unknownOutcomeRateAlarmPercent,
        { periods: 2 },
      ),
      receiptSignatureFailures: this.alarm(
        'ReceiptSignatureFailures',
        `more than ${RECEIPT_SIGNATURE_FAILURES_ALARM} delivery receipts in 5 minutes failed their signature check (wrong auth token or public URL, or forged callbacks)`,
        this.serviceMetric(SERVICE_METRICS.receiptSignatureFailures, 'Sum'),
        RECEIPT_SIGNATURE_FAILURES_ALARM,
      ),
    };
    return { ...alarms, ...this.spendAlarms(settings) };
  }

  /**
   * One spend alarm per listed provider: its own spend metric, when it publishes one (SNS, End User
   * Messaging: `SmsSpend` for the first such provider, `SmsSpend<Kind>` for a later one); otherwise
   * (Twilio, the simulator) our own sends per hour stand in for spend, one alarm however many such
   * providers are listed, since `ProviderSends` counts every provider's sends (docs/deploy.md#7-alarms).
   */
  private spendAlarms(settings: ResolvedSettings): Record<string, Alarm> {
    const alarms: Record<string, Alarm> = {};
    const unmetered = settings.providers.filter(
      (provider) => providerInfra(provider).spendAlarm === undefined,
    );
    if (unmetered.length > 0) {
      const which =
        settings.providers.length === 1
          ? 'this provider publishes'
          : `${unmetered.map((provider) => provider.kind).join(' and ')} ${unmetered.length === 1 ? 'publishes' : 'publish'}`;
      alarms.sendsPerHour = this.alarm(
        'SendsPerHour',
        `more than ${settings.sendsPerHourAlarm} provider sends in one hour (ProviderSends; ${which} no spend metric in CloudWatch, so sends stand in for spend: pumping or a runaway caller)`,
        this.serviceMetric(SERVICE_METRICS.providerSends, 'Sum').with({ period: Duration.hours(1) }),
        settings.sendsPerHourAlarm,
      );
    }
    for (const provider of settings.providers) {
      const spend = providerInfra(provider).spendAlarm;
      if (spend === undefined) continue;
      const suffix = alarms.smsSpend === undefined ? '' : capitalized(provider.kind);
      alarms[`smsSpend${suffix}`] = this.alarm(
        `SmsSpend${suffix}`,
        spend.description(settings.smsSpendAlarmUsd),
        new Metric({
          namespace: spend.namespace,
          metricName: spend.metricName,
          statistic: 'Maximum',
          period: FIVE_MINUTES,
        }),
        settings.smsSpendAlarmUsd,
      );
    }
    return alarms;
  }

  private createDashboard(
    pipeline: Pipeline,
    api: Api,
    m: ReturnType<Observability['serviceMetrics']>,
    settings: ResolvedSettings,
  ): Dashboard {
    const { sends, unknowns, unknownRate, oldestUnknownAge, iteratorAge } = m;
    const fn = {
      forwarder: pipeline.forwarder,
      sender: pipeline.sender,
      reconciler: pipeline.reconciler,
      reconcileWorker: pipeline.reconcileWorker,
      api: api.handler,
    };
    const width = 8;
    const dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    dashboard.addWidgets(
      new TextWidget({
        markdown:
          '# reset-notifier\nStates and evidence per key: `GET /v1/notifications/{key}` and `/evidence` (SigV4).',
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      new AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(this.alarms), width: 24, height: 4 }),
    );
    dashboard.addWidgets(
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
    const withCircuits = circuitProviders(settings);
    if (withCircuits.length > 0) {
      dashboard.addWidgets(
        new GraphWidget({
          title: 'Provider circuits (0 closed, 1 half-open, 2 open)',
          left: withCircuits.map(({ kind }) => this.circuitLevel(kind).with({ label: kind })),
          leftYAxis: { min: 0, max: 2 },
          width: 24,
        }),
      );
    }
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Zero-SMS outcomes, valid destination, by class',
        left: m.zeroSmsByClass,
        right: [m.zeroSmsRate],
        stacked: true,
        width: 12,
      }),
      new GraphWidget({
        title: 'Final outcomes; zero-SMS with the destination at fault; Twilio absence proofs off',
        left: [m.finals, m.zeroSmsDestinationFault],
        right: m.twilioAbsenceOff,
        width: 12,
      }),
    );
    dashboard.addWidgets(
      queueWidget('Dispatch queue', pipeline.dispatchQueue, width),
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
    dashboard.addWidgets(
      queueWidget('Reconcile queue', pipeline.reconcileQueue, width),
      queueWidget('Status-poll queue', pipeline.statusPollQueue, width),
      new GraphWidget({ title: 'Oldest due lag (ms)', left: [m.oldestDueLag], width }),
      new GraphWidget({ title: 'Poison items (marked / parked)', left: [m.poisoned, m.parked], width }),
    );
    dashboard.addWidgets(
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
    return dashboard;
  }
}

/** A queue's depth (visible, in flight) and the age of its oldest message. */
function queueWidget(title: string, queue: Pipeline['dispatchQueue'], width: number): GraphWidget {
  return new GraphWidget({
    title,
    left: [
      queue.metricApproximateNumberOfMessagesVisible(),
      queue.metricApproximateNumberOfMessagesNotVisible(),
    ],
    right: [queue.metricApproximateAgeOfOldestMessage()],
    width,
  });
}

/** The providers whose circuits the senders keep: every listed one when there are two or more. */
function circuitProviders(settings: ResolvedSettings): ResolvedSettings['providers'] | [] {
  return settings.providers.length > 1 ? settings.providers : [];
}

/** `eum` -> `Eum`: a provider kind in a construct id or an alarm's key. */
function capitalized(kind: string): string {
  return `${kind.charAt(0).toUpperCase()}${kind.slice(1)}`;
}
