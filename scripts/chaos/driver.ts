/**
 * The chaos driver: starts the real local stack (DynamoDB Local, fauxqs, provider simulator, local
 * runtime), drives seeded reset events through it under every kind of fault, waits until the run
 * settles, collects what it left behind and judges it with the invariant checks.
 */

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { BatchGetItemCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { scanTable } from '../../local/resources.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import {
  admissionEvidence,
  dueShardOf,
  evidenceFromItem,
  recordFromItem,
} from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { type EvidenceRecord, isFinal, type NotificationRecord } from '../../shared/domain/notification.js';
import { FindBy, type ProviderCapabilities } from '../../shared/domain/provider.js';
import { type AlarmDrill, drillPhase, type ZeroSmsPeriod, zeroSmsByAlarmPeriod } from './alarms.js';
import { captureOutput } from './capture.js';
import {
  type CipherFaultCounts,
  type CrashCounts,
  createCipherFaultInjector,
  createCrashInjector,
  createLostAnswerInjector,
  createThrottleInjector,
  type FaultsByKey,
  type LostAnswerCounts,
  type ThrottleCounts,
} from './injectors.js';
import {
  type AdmissionObservation,
  type ChaosDataset,
  checkAll,
  type InvariantResult,
  keyOfReference,
  type LedgerEntry,
  type PumpingObservation,
  type SendRequestEntry,
  undecidedPastExpiry,
} from './invariants.js';
import { checkLostDeliverable, type PhaseWindow } from './lost-deliverable.js';
import { tapProviderSends } from './provider-tap.js';
import { checkStale, receiptsSeenIn, type UnknownOutcomeReport, unknownOutcomes } from './provider-truth.js';
import {
  CHAOS_LIMITS_ENV,
  type ChaosMix,
  DEFAULT_MIX,
  type EventSpec,
  eventSpec,
  faultPhase,
  MAX_LIST_LAG_FACTOR,
  type PumpingEvent,
  pumpingEvents,
  requestBody,
} from './scenario.js';
import { type SimulatorThread, startSimulatorThread } from './sim-thread.js';

/**
 * Service timings for the run: a fault plays out in seconds, so the run settles in seconds. The
 * settle time stays well above the provider timeout plus the event-loop delay of one overloaded
 * process hosting the whole stack: the design assumes no request reaches the provider after its
 * caller gave up plus the settle time.
 */
export const CHAOS_ENV: Readonly<Record<string, string>> = {
  PROVIDER_TIMEOUT_MS: '1000',
  PROVIDER_LOOKUP_TIMEOUT_MS: '1500',
  RECONCILE_SETTLE_SECONDS: '6',
  STATUS_POLL_SECONDS: '0.2',
  STATUS_HORIZON_SECONDS: '30',
  BACKOFF_BASE_MS: '200',
  BACKOFF_MAX_MS: '2000',
  LEASE_SLACK_MS: '4000',
  QUEUE_SAFETY_NET_SECONDS: '15',
  QUEUE_VISIBILITY_TIMEOUT_SECONDS: '5',
  DISPATCH_MARGIN_SECONDS: '5',
  MAX_RECEIVE_COUNT: '5',
  // Status callbacks go to the stack's own receipts route (the local stack's default): receipts are
  // evidence the run must exercise. The deployment declares redaction off, so absence can be proven
  // where the adapter's conditions hold; the redaction phases must then switch it off by themselves.
  PROVIDER_REDACTION: 'off',
  // The abuse limits the pumping scenario is judged against (scenario.ts explains the choice).
  ...CHAOS_LIMITS_ENV,
  // A backlog larger than one pass: the reconciler's cursor must still reach every due item. 64, not
  // 16: with receipts and the two-read absence proof a 2,000-event run keeps more items due than 16
  // per 2 s pass drain, and expiries waited a minute (the stuck invariant, 8 keys in CI).
  RECONCILE_MAX_ITEMS_PER_PASS: '64',
};

/**
 * SNS has no receipts, and a delivery-status line shows up only seconds after the delivery (the
 * simulator's log lag, 2 s, like CloudWatch's), so a status poll earlier than that reads nothing:
 * polls start at 2 s. Every poll is a `FilterLogEvents` read under the account's 5 calls a second, and
 * the lookups of the workers that run at once share one read, so four workers on each of the two
 * reconcile queues (the stack's `maxConcurrency` is 4 and 2, over containers that each read for
 * themselves; here one process reads for all) rather than the local default of two fill those reads.
 */
export const SNS_CHAOS_ENV: Readonly<Record<string, string>> = {
  STATUS_POLL_SECONDS: '2',
  RECONCILE_WORKER_CONCURRENCY: '4',
  RECONCILE_POLL_WORKER_CONCURRENCY: '4',
};

/** Options of {@link runChaos}. */
export interface ChaosRunOptions {
  /** How many events (an upper bound when `durationMs` is set). */
  readonly events: number;
  readonly seed: number;
  /** Events in flight at once (each is 1-11 concurrent POSTs). */
  readonly concurrency: number;
  /** Stop starting new events after this long (soak mode). */
  readonly durationMs?: number;
  /** How long to wait for every admitted key to become final; default 240 s (tokens live at most 3 min). */
  readonly settleTimeoutMs?: number;
  /** Reuse running emulators (the test suite's); otherwise the stack starts its own. */
  readonly dynamodbEndpoint?: string;
  readonly sqsEndpoint?: string;
  readonly mix?: Partial<ChaosMix>;
  /** Extra service environment (timings). */
  readonly env?: Readonly<Record<string, string>>;
  readonly reconcileIntervalMs?: number;
  readonly senderConcurrency?: number;
  /**
   * Back-pressure: no new event starts while this many admitted keys are not final yet, so the
   * run measures the pipeline at its capacity instead of a growing backlog; default 500.
   */
  readonly maxPending?: number;
  /** Progress lines (written past the output capture). */
  readonly progress?: (line: string) => void;
  /** Show captured output as well as capturing it. */
  readonly passThroughOutput?: boolean;
  /**
   * Positive control of the privacy check: the service's logger prints one event's phone number
   * mid-run, and the privacy figure must then count it (never set in a real soak).
   */
  readonly leakCanary?: boolean;
  /** Which provider the stack uses, against its simulator: default `twilio`. */
  readonly provider?: ChaosProvider;
  /**
   * A simulator that does not know the message fault modes (redaction, list_lag, receipt_*,
   * fail_not_sent) answers 400: with this set, such phases run with their send fault only and are
   * counted; without it the run stops. Only for simulators that predate those modes.
   */
  readonly tolerateUnknownFaultModes?: boolean;
  /** A provider outage that causes zero-SMS outcomes (scripts/chaos/alarms.ts); default none. */
  readonly alarmDrill?: AlarmDrill;
}

/** `npm run chaos -- --provider ...`: the Twilio simulator, or the AWS simulator for SNS / End User Messaging. */
export type ChaosProvider = 'twilio' | 'sns' | 'eum';

/** What a run did, besides the verdict. */
export interface ChaosStats {
  events: number;
  posts: number;
  clientRetries: number;
  responses: Record<string, number>;
  admittedKeys: number;
  rejectedTooLate: number;
  conflicts: number;
  shortLife: number;
  finalStates: Record<string, number>;
  lastReasons: Record<string, number>;
  providerSends: number;
  providerMessages: number;
  faultsFired: Record<string, number>;
  faultPhases: Record<string, number>;
  crashes: CrashCounts;
  throttles: ThrottleCounts;
  /** DynamoDB writes applied whose answer was lost (fault after commit). */
  lostAnswers: LostAnswerCounts;
  /** Commands that ended without any SMS, by reason (lost-deliverable.ts: excused and not). */
  zeroSms: { count: number; byReason: Record<string, number> };
  decryptions: CipherFaultCounts;
  /** Poison items planted in the due index; how many were still there and marked at the end. */
  poisonPlanted: number;
  poisonPresent: number;
  poisonMarked: number;
  extraSqsMessages: number;
  extraReconcilerPasses: number;
  logLines: number;
  storedItems: number;
  evidenceRecords: number;
  admissionMs: number;
  settleMs: number;
  /** Reading back the ledger, the request log and the table; then judging them. */
  collectMs: number;
  checkMs: number;
  totalMs: number;
  settled: boolean;
  /** Send requests that reached the provider after their caller had given up, and the worst delay. */
  lateArrivals: number;
  lateArrivalMaxMs: number;
  /** Send requests the sender started at or after the dispatch deadline (its own clock). */
  sendsStartedAfterDeadline: number;
  /** Event-loop delay of the one process running the whole stack (99th percentile and max, ms). */
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  /** The pumping scenario: POSTs, and their final answers (admitted, replayed, rate limited). */
  pumping?: { posts: number; admitted: number; replayed: number; refused: number };
  /** Unknown outcomes that ended `unknown_at_expiry` although the provider never handed any SMS on. */
  unknownWithoutSms: number;
  /** Phases by message fault (`+`-joined when two), `none` without. */
  messageFaultPhases: Record<string, number>;
  /** Phases whose message faults the simulator refused (see `tolerateUnknownFaultModes`). */
  unsupportedFaultPhases: number;
  /** Signed receipts the receipts route took in, and callbacks it rejected (bad signature: must be 0). */
  receiptsSeen: number;
  receiptsRejected: number;
  /** Delivered messages the record does not know, excused: every receipt lost and reads redacted. */
  staleExcused: number;
  /** Extra reconciler passes still running {@link BACKGROUND_GRACE_MS} after the settle (a hang). */
  backgroundHung: number;
  /** Commands decided after their expiry, and the worst and 99th-percentile lateness (ms). */
  pastExpiry: { count: number; maxMs: number; p99Ms: number };
  /** How unknown outcomes ended (with an SMS, without one by reason and cause). */
  unknownOutcomes: UnknownOutcomeReport;
  /** `ZeroSmsOutcome` and `FinalOutcomes` per zero-SMS alarm period (scripts/chaos/alarms.ts). */
  zeroSmsPeriods?: ZeroSmsPeriod[];
  /** The alarm drill, when one ran, and when the run started (its outage is relative to that). */
  alarmDrill?: AlarmDrill & { startedAt: number };
}

/** What the run left behind for one key an invariant failed on (no secrets: nothing here has any). */
export interface KeyForensics {
  readonly key: string;
  readonly record?: NotificationRecord;
  readonly trail: readonly EvidenceRecord[];
  readonly messages: readonly LedgerEntry[];
  readonly requests: readonly SendRequestEntry[];
}

/** The outcome of a run. */
export interface ChaosRunResult {
  readonly seed: number;
  readonly stats: ChaosStats;
  readonly invariants: readonly InvariantResult[];
  readonly forensics: readonly KeyForensics[];
  /** A few keys that ended unusually but legitimately (closed unconfirmed, retries exhausted, unknown at expiry). */
  readonly notable: readonly KeyForensics[];
  readonly passed: boolean;
}

/** Fast status progress: `sent` after 20 ms, `delivered` after 100 ms, so one status poll settles a key. */
const SIMULATOR_DELAYS = { sent: 20, delivered: 100 };
/** Token life cap of normal events with the AWS providers (see {@link ChaosMix.maxNormalLifeMs}). */
const AWS_MAX_NORMAL_LIFE_MS = 60_000;
const localCredentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How long the extra reconciler passes may still run once every key is final. */
const BACKGROUND_GRACE_MS = 30_000;

/** Whether a provider can find a message by the id it returned and by nothing else (SNS). */
function findsOnlyById(capabilities: ProviderCapabilities): boolean {
  return !capabilities.receipts && capabilities.findBy.every((how) => how === FindBy.id);
}

/** Whether a provider shows messages only through the events it pushes (no read by content, no status API). */
function eventsOnly(capabilities: ProviderCapabilities): boolean {
  return (
    capabilities.receipts &&
    !capabilities.findBy.includes(FindBy.content) &&
    capabilities.absenceProof === 'never'
  );
}

/** The list-lag allowance a run declares: above the longest `list_lag` fault it injects. */
export function listLagAllowanceSecondsFor(mix: Pick<ChaosMix, 'settleMs'>): number {
  return Math.ceil((mix.settleMs * MAX_LIST_LAG_FACTOR) / 1000) + 2;
}

/** Runs one chaos soak and returns its verdict. Never throws for an invariant failure. */
export async function runChaos(options: ChaosRunOptions): Promise<ChaosRunResult> {
  const noAbsenceProof = options.provider === 'sns' || options.provider === 'eum';
  const mix: ChaosMix = {
    ...DEFAULT_MIX,
    // SNS and End User Messaging never prove absence: an unknown without evidence waits for its expiry.
    ...(noAbsenceProof ? { maxNormalLifeMs: AWS_MAX_NORMAL_LIFE_MS } : {}),
    ...(options.mix ?? {}),
  };
  const seed = options.seed;
  const progress = options.progress ?? (() => undefined);
  const started = Date.now();
  const capture = captureOutput({ passThrough: options.passThroughOutput ?? false });
  const say = (line: string) => capture.bypass(() => progress(line));

  // Which injected fault touched which key: the zero-SMS classification (lost_deliverable) reads it.
  const faultsByKey: FaultsByKey = new Map();
  const crash = createCrashInjector(seed, mix.crashProbability, faultsByKey);
  const throttle = createThrottleInjector(
    seed,
    mix.throttleProbability,
    mix.retriedThrottleProbability,
    faultsByKey,
  );
  const lostAnswers = createLostAnswerInjector(
    seed,
    mix.lostAnswerProbability,
    mix.retriedLostAnswerProbability,
    faultsByKey,
  );
  const provider = options.provider ?? 'twilio';
  const aws = provider === 'sns' || provider === 'eum';
  const cipherFaults = createCipherFaultInjector(seed, mix.decryptFailureProbability, faultsByKey);
  let env: Record<string, string> = {
    ...CHAOS_ENV,
    ...(provider === 'sns' ? SNS_CHAOS_ENV : {}),
    // The deployment's list-lag allowance covers the longest lag the run injects (3 x settle): an
    // allowance is what the operator declares Twilio's lag to be bounded by. Lag beyond it is caught
    // only by the canary's tripwire, which cannot prove anything per message (docs/chaos.md).
    PROVIDER_LIST_LAG_ALLOWANCE_SECONDS: String(listLagAllowanceSecondsFor(mix)),
    ...(options.env ?? {}),
  };
  // The provider runs in its own thread, and the provider adapter's requests are sent there: the tap
  // is installed before the stack starts, because the adapter picks up the global fetch when built.
  let simulator: SimulatorThread | undefined;
  let tap: ReturnType<typeof tapProviderSends> | undefined;
  let stopTracker: (() => Promise<void>) | undefined;
  let stack: LocalStack | undefined;
  let dynamodb: DynamoDBClient | undefined;
  let sqs: SQSClient | undefined;
  try {
    simulator = await startSimulatorThread(SIMULATOR_DELAYS, aws ? 'aws' : 'twilio');
    const simUrl = simulator.url;
    // The AWS SDK clients do not use fetch: they are pointed at the simulator thread by endpoint.
    tap = tapProviderSends(aws ? {} : { redirectTo: simUrl });
    if (aws)
      env = { ...env, PROVIDER: provider, SNS_ENDPOINT: simUrl, EUM_ENDPOINT: simUrl, LOGS_ENDPOINT: simUrl };
    const calls = tap.calls;
    stack = await startLocalStack({
      ...(options.dynamodbEndpoint ? { dynamodbEndpoint: options.dynamodbEndpoint } : {}),
      ...(options.sqsEndpoint ? { sqsEndpoint: options.sqsEndpoint } : {}),
      tableName: `chaos-${seed}-${started.toString(36)}`,
      apiPort: 0,
      simPort: 0,
      env,
      reconcileIntervalMs: options.reconcileIntervalMs ?? 300,
      senderConcurrency: options.senderConcurrency ?? 6,
      simulatorStatusDelaysMs: SIMULATOR_DELAYS,
      onDispatchStep: crash.hook,
      wrapDynamoClient: (client) => {
        throttle.wrap(client);
        lostAnswers.wrap(client);
      },
      wrapCipher: cipherFaults.wrap,
      sqsDuplicateProbability: mix.sqsDuplicateProbability,
      streamDuplicateProbability: mix.streamDuplicateProbability,
      // Production's logger at production's level: every line it prints goes through the privacy scan.
      logger: new Logger({ serviceName: 'reset-notifier', logLevel: 'INFO' }),
    });
    const running = stack;
    const serviceLogger = running.runtime.logger;
    if (provider === 'eum') {
      // End User Messaging events go to the stack's loopback receipts path.
      await fetch(`${simUrl}/_sim/config`, {
        method: 'POST',
        body: JSON.stringify({ events_url: `${running.apiUrl}/v1/receipts/eum` }),
      });
    }
    // The driver's own clients: never throttled, so observation does not disturb the verdict.
    dynamodb = new DynamoDBClient({
      endpoint: running.dynamodbEndpoint,
      region: 'us-east-1',
      credentials: localCredentials,
    });
    sqs = new SQSClient({
      endpoint: running.sqsEndpoint,
      region: 'us-east-1',
      credentials: localCredentials,
    });
    const sqsClient = sqs;
    say(`chaos: stack up in ${Date.now() - started} ms (api ${running.apiUrl}, simulator ${simUrl})`);

    const stats: ChaosStats = {
      events: 0,
      posts: 0,
      clientRetries: 0,
      responses: {},
      admittedKeys: 0,
      rejectedTooLate: 0,
      conflicts: 0,
      shortLife: 0,
      finalStates: {},
      lastReasons: {},
      providerSends: 0,
      providerMessages: 0,
      faultsFired: {},
      faultPhases: {},
      crashes: crash.counts,
      throttles: throttle.counts,
      lostAnswers: lostAnswers.counts,
      zeroSms: { count: 0, byReason: {} },
      decryptions: cipherFaults.counts,
      poisonPlanted: 0,
      poisonPresent: 0,
      poisonMarked: 0,
      extraSqsMessages: 0,
      extraReconcilerPasses: 0,
      logLines: 0,
      storedItems: 0,
      evidenceRecords: 0,
      admissionMs: 0,
      settleMs: 0,
      collectMs: 0,
      checkMs: 0,
      totalMs: 0,
      settled: false,
      lateArrivals: 0,
      lateArrivalMaxMs: 0,
      sendsStartedAfterDeadline: 0,
      eventLoopDelayP99Ms: 0,
      eventLoopDelayMaxMs: 0,
      unknownWithoutSms: 0,
      messageFaultPhases: {},
      unsupportedFaultPhases: 0,
      receiptsSeen: 0,
      receiptsRejected: 0,
      staleExcused: 0,
      backgroundHung: 0,
      pastExpiry: { count: 0, maxMs: 0, p99Ms: 0 },
      unknownOutcomes: {
        unknown: 0,
        withSms: 0,
        withoutSms: 0,
        withoutSmsByReason: {},
        withoutSmsByCause: {},
      },
    };
    for (let i = 0; i < mix.poisonItems; i++) {
      await dynamodb.send(
        new PutItemCommand({
          TableName: running.tableName,
          Item: marshall(poisonItem(`${POISON_PREFIX}${i}`)),
        }),
      );
      stats.poisonPlanted++;
    }
    const loopDelay = monitorEventLoopDelay({ resolution: 20 });
    loopDelay.enable();
    const specs: EventSpec[] = [];
    const admissions: AdmissionObservation[] = [];
    const admitted = new Set<string>();
    const tracker = trackFinality(dynamodb, running.tableName);
    stopTracker = tracker.stop;
    const background = new Set<Promise<unknown>>();
    const track = (p: Promise<unknown>) => {
      const tracked = p.catch(() => undefined).finally(() => background.delete(tracked));
      background.add(tracked);
    };

    // Simulator fault phases rotate on a seeded schedule for as long as events are admitted.
    let phasesRunning = true;
    const phaseWindows: PhaseWindow[] = [];
    // A refused fault plan stops the run: admission ends early and the error is thrown after it.
    let phaseError: unknown;
    const phaseLoop = (async () => {
      for (let index = 0; phasesRunning; index++) {
        const phase =
          drillPhase(options.alarmDrill, Date.now() - started, index) ?? faultPhase(seed, index, mix);
        const name = phase.mode ?? 'none';
        stats.faultPhases[name] = (stats.faultPhases[name] ?? 0) + 1;
        const messageName = phase.messageFaults.map((f) => f.mode).join('+') || 'none';
        stats.messageFaultPhases[messageName] = (stats.messageFaultPhases[messageName] ?? 0) + 1;
        const sendPlan =
          phase.mode === null
            ? []
            : [
                {
                  mode: phase.mode,
                  probability: phase.probability,
                  retry_after_seconds: phase.retryAfterSeconds,
                },
              ];
        const applied = await setFaults(simUrl, [...sendPlan, ...phase.messageFaults]);
        if (!applied && options.tolerateUnknownFaultModes && phase.messageFaults.length > 0) {
          stats.unsupportedFaultPhases++;
          if (!(await setFaults(simUrl, sendPlan))) throw new Error('simulator refused a send fault plan');
        } else if (!applied) {
          throw new Error(
            'simulator refused the fault plan (no message fault modes? --tolerate-unknown-faults runs without them)',
          );
        }
        if (phase.extraReconciler) {
          stats.extraReconcilerPasses++;
          track(running.reconcileNow());
        }
        const phaseStart = Date.now();
        const until = phaseStart + mix.faultPhaseMs;
        while (phasesRunning && Date.now() < until) await sleep(Math.min(100, until - Date.now()));
        phaseWindows.push({
          start: phaseStart,
          end: Date.now(),
          sendFault: phase.mode,
          messageFaults: phase.messageFaults.map((f) => f.mode),
        });
      }
    })().catch((error: unknown) => {
      phaseError = error;
    });

    const post = async (spec: EventSpec, variant: 'original' | 'conflict', body: string) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (spec.headerKey !== undefined) headers['idempotency-key'] = spec.headerKey;
      for (let attempt = 1; ; attempt++) {
        stats.posts++;
        let status: number;
        let code: string | undefined;
        try {
          const response = await fetch(`${running.apiUrl}/v1/notifications`, {
            method: 'POST',
            headers,
            body,
            signal: AbortSignal.timeout(20_000),
          });
          status = response.status;
          const parsed = (await response.json().catch(() => ({}))) as { code?: unknown };
          if (typeof parsed.code === 'string') code = parsed.code;
        } catch {
          status = 599;
        }
        const bucket = String(status);
        stats.responses[bucket] = (stats.responses[bucket] ?? 0) + 1;
        // A client retries a 5xx (the API's retry contract); up to 6 tries, then gives up.
        if (status < 500 || attempt >= 6) return { variant, status, ...(code === undefined ? {} : { code }) };
        stats.clientRetries++;
        await sleep(50 * attempt);
      }
    };

    const runEvent = async (spec: EventSpec) => {
      // SNS carries no reference: the simulator's test oracle attributes a body to its key by the secret.
      if (provider === 'sns') await registerSecrets(simUrl, spec);
      const expiresAt = Date.now() + spec.lifeMs;
      const original = JSON.stringify(requestBody(spec, expiresAt));
      const calls = Array.from({ length: spec.duplicates }, () => post(spec, 'original', original));
      if (spec.conflictParams !== undefined) {
        stats.conflicts++;
        calls.splice(
          Math.floor(calls.length / 2),
          0,
          post(spec, 'conflict', JSON.stringify(requestBody(spec, expiresAt, spec.conflictParams))),
        );
      }
      const responses = await Promise.all(calls);
      admissions.push({ idempotencyKey: spec.idempotencyKey, kind: spec.kind, responses });
      if (spec.kind === 'too_late') stats.rejectedTooLate++;
      if (spec.kind === 'short_life') stats.shortLife++;
      if (!responses.some((r) => r.status < 300)) return;
      admitted.add(spec.idempotencyKey);
      tracker.add(spec.idempotencyKey);
      for (const delay of spec.extraSqsDelaysMs) {
        // A duplicate dispatch message, as a forwarder retry or an at-least-once queue would produce.
        track(
          sleep(delay).then(async () => {
            await sqsClient.send(
              new SendMessageCommand({
                QueueUrl: running.queueUrl,
                MessageBody: JSON.stringify({ idempotency_key: spec.idempotencyKey, version: 1 }),
              }),
            );
            stats.extraSqsMessages++;
          }),
        );
      }
    };

    // SMS pumping, alongside the normal events: bursts to a few numbers, then waves over many
    // numbers of a few countries. Each answer is judged against the budgets by `checkBudgets`.
    const pumping: PumpingObservation[] = [];
    const pumpingStats = { posts: 0, admitted: 0, replayed: 0, refused: 0 };
    const pump = async (event: PumpingEvent) => {
      const spec = event.spec;
      specs.push(spec);
      // As for the normal events: the SNS oracle must know this reset's secret to attribute its message.
      if (provider === 'sns') await registerSecrets(simUrl, spec);
      const sentAt = Date.now();
      const body = JSON.stringify(requestBody(spec, sentAt + spec.lifeMs));
      const responses = await Promise.all(
        Array.from({ length: spec.duplicates }, () => post(spec, 'original', body)),
      );
      for (const r of responses) {
        pumpingStats.posts++;
        if (r.status === 202) pumpingStats.admitted++;
        if (r.status === 200) pumpingStats.replayed++;
        if (r.status === 429) pumpingStats.refused++;
        pumping.push({
          idempotencyKey: spec.idempotencyKey,
          target: event.target,
          country: event.country,
          status: r.status,
          ...(r.code === undefined ? {} : { code: r.code }),
          sentAt,
          at: Date.now(),
        });
      }
      if (responses.some((r) => r.status < 300)) {
        admitted.add(spec.idempotencyKey);
        tracker.add(spec.idempotencyKey);
      }
    };
    const pumpingRun = (async () => {
      const events = pumpingEvents(seed, mix);
      for (const group of ['burst', 'wave'] as const) {
        const targets = new Map<string, PumpingEvent[]>();
        for (const e of events.filter((x) => x.group === group)) {
          const by = group === 'burst' ? e.target : e.country;
          targets.set(by, [...(targets.get(by) ?? []), e]);
        }
        // Every reset of one burst (or one country's wave) at once: the race the budgets must win.
        for (const batch of targets.values()) await Promise.all(batch.map(pump));
      }
    })();

    // Admission: `concurrency` workers take events in order until the count or the duration runs out.
    const admissionStart = Date.now();
    const endAt =
      options.durationMs === undefined ? Number.POSITIVE_INFINITY : admissionStart + options.durationMs;
    let next = 0;
    let lastReport = Date.now();
    const worker = async () => {
      const maxPending = options.maxPending ?? 500;
      while (next < options.events && Date.now() < endAt && phaseError === undefined) {
        while (tracker.pending() >= maxPending && Date.now() < endAt) await sleep(100);
        if (next >= options.events || Date.now() >= endAt) break;
        const spec = eventSpec(seed, next++, mix);
        specs.push(spec);
        await runEvent(spec);
        stats.events++;
        if (Date.now() - lastReport >= 10_000) {
          lastReport = Date.now();
          const seconds = (Date.now() - admissionStart) / 1000;
          say(
            `chaos: ${stats.events} events in ${seconds.toFixed(0)} s (${(stats.events / seconds).toFixed(1)}/s), ${admitted.size} admitted, ${tracker.pending()} not final yet (${tracker.pendingStates()})`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
    await pumpingRun;
    stats.pumping = pumpingStats;
    stats.admissionMs = Date.now() - admissionStart;
    if (options.leakCanary && specs[0]) serviceLogger.info('leak canary', { to: specs[0].phone });
    say(
      `chaos: admission done: ${stats.events} events, ${admitted.size} keys admitted in ${(stats.admissionMs / 1000).toFixed(0)} s`,
    );

    // Settle: the outage ends (faults cleared), then every admitted key must become final.
    phasesRunning = false;
    await phaseLoop;
    if (phaseError !== undefined) throw phaseError;
    await setFaults(simUrl, []);
    const settleStart = Date.now();
    const settleTimeout = options.settleTimeoutMs ?? 240_000;
    let lastSay = 0;
    while (tracker.pending() > 0 && Date.now() - settleStart < settleTimeout) {
      if (Date.now() - lastSay >= 5_000) {
        lastSay = Date.now();
        say(`chaos: settling, ${tracker.pending()} keys not final yet (${tracker.pendingStates()})`);
      }
      await sleep(250);
    }
    await tracker.stop();
    // An extra reconciler pass still running long after the settle is a liveness defect (a lookup
    // that never returns): counted and failed, never waited on forever.
    const backgroundDone = await Promise.race([
      Promise.all(background).then(() => true),
      sleep(BACKGROUND_GRACE_MS).then(() => false),
    ]);
    stats.backgroundHung = backgroundDone ? 0 : background.size;
    if (!backgroundDone) say(`chaos: ${background.size} reconciler passes still running after the settle`);
    stats.settled = tracker.pending() === 0;
    // A call that outlived its lease would land now: give stragglers time to show up in the ledger.
    await sleep(running.config.policy.providerTimeoutMs * 2 + 1_000);
    stats.settleMs = Date.now() - settleStart;

    // Collect what the run left behind.
    const collectStart = Date.now();
    const [ledger, requests, items] = await Promise.all([
      simList<LedgerEntry>(simUrl, 'messages'),
      simList<SendRequestEntry>(simUrl, 'requests'),
      scanTable(dynamodb, running.tableName),
    ]);
    const observedAt = Date.now();
    const commands: NotificationRecord[] = [];
    const evidence: EvidenceRecord[] = [];
    for (const item of items) {
      // Budget counters hold a fingerprint or country and a count: no record, no evidence.
      if (item[TableSchema.sortKey] === TableSchema.counterSortKey) continue;
      const pk = String(item[TableSchema.partitionKey]);
      if (pk === TableSchema.reconcileCursorKey.pk) continue;
      if (pk.startsWith(POISON_PREFIX)) {
        // Planted poison: never deleted, and isolated (counted) by the reconciler.
        stats.poisonPresent++;
        if (Number(item[TableSchema.poisonCountAttribute] ?? 0) >= 1) stats.poisonMarked++;
        continue;
      }
      if (item[TableSchema.sortKey] === TableSchema.commandSortKey) {
        const record = recordFromItem(item);
        commands.push(record);
        evidence.push(admissionEvidence(record));
      } else {
        evidence.push(evidenceFromItem(item));
      }
    }
    await running.stop();
    stack = undefined;
    const logLines = capture.stop();

    const phones: string[] = [];
    const codes: string[] = [];
    const urls: string[] = [];
    for (const spec of specs) {
      phones.push(spec.phone);
      for (const params of [spec.params, spec.conflictParams]) {
        if (params === undefined) continue;
        if ('code' in params) codes.push(params.code);
        else urls.push(params.reset_url);
      }
    }
    const deliverable = {
      provider,
      phases: phaseWindows,
      faultsByKey,
      shortLifeKeys: new Set(admissions.filter((a) => a.kind === 'short_life').map((a) => a.idempotencyKey)),
    };
    const dataset: ChaosDataset = {
      ledger,
      requests,
      commands,
      evidence,
      items,
      logLines,
      secrets: { phones, codes, urls },
      admissions,
      // Judged with the settings the service read (shared/config.ts over shared/settings.ts), not re-parsed.
      dispatchMarginMs: running.config.policy.dispatchMarginMs,
      pumping,
      budgets: running.config.budgets,
      receiptsSeen: receiptsSeenIn(logLines),
      observedAt,
      stuckBoundMs: STUCK_BOUND_MS,
      findsOnlyById: findsOnlyById(running.runtime.provider.capabilities),
      eventsOnly: eventsOnly(running.runtime.provider.capabilities),
      deliverable,
    };
    stats.collectMs = Date.now() - collectStart;
    const checkStart = Date.now();
    const invariants = checkAll(dataset);
    const zeroSms = checkLostDeliverable({ ...dataset, ...deliverable });
    stats.zeroSms = { count: zeroSms.zeroSms, byReason: zeroSms.byReason };
    stats.checkMs = Date.now() - checkStart;

    stats.admittedKeys = commands.length;
    for (const c of commands) {
      const state = c.state === 'sent' && c.closed ? 'sent (closed)' : c.state;
      stats.finalStates[state] = (stats.finalStates[state] ?? 0) + 1;
      stats.lastReasons[c.lastReason] = (stats.lastReasons[c.lastReason] ?? 0) + 1;
    }
    for (const r of requests) {
      const fault = r.fault ?? 'none';
      stats.faultsFired[fault] = (stats.faultsFired[fault] ?? 0) + 1;
    }
    const deadlines = new Map(
      commands.map((c) => [c.idempotencyKey, c.expiresAt - dataset.dispatchMarginMs]),
    );
    for (const r of requests) {
      const call = r.client_reference === null ? undefined : calls.get(r.client_reference);
      const late = call?.gaveUp && call.endedAt !== undefined ? Date.parse(r.received_at) - call.endedAt : 0;
      if (late > 0) {
        stats.lateArrivals++;
        stats.lateArrivalMaxMs = Math.max(stats.lateArrivalMaxMs, late);
      }
    }
    for (const [reference, call] of calls) {
      const deadline = deadlines.get(keyOfReference(reference) ?? '');
      if (deadline !== undefined && call.startedAt >= deadline) stats.sendsStartedAfterDeadline++;
    }
    const handedOn = new Set(
      ledger
        .filter((m) => m.status === 'sent' || m.status === 'delivered')
        .map((m) => keyOfReference(m.client_reference)),
    );
    stats.unknownWithoutSms = commands.filter(
      (c) => c.lastReason === 'unknown_at_expiry' && !handedOn.has(c.idempotencyKey),
    ).length;
    const lateness = undecidedPastExpiry(commands, evidence, observedAt)
      .map((p) => p.pastExpiryMs)
      .sort((a, b) => a - b);
    stats.pastExpiry = {
      count: lateness.length,
      maxMs: lateness.at(-1) ?? 0,
      p99Ms: lateness[Math.max(0, Math.ceil(lateness.length * 0.99) - 1)] ?? 0,
    };
    stats.receiptsSeen = [...(dataset.receiptsSeen?.values() ?? [])].reduce((a, b) => a + b, 0);
    stats.receiptsRejected = logLines.filter((line) => line.includes('"message":"receipt rejected"')).length;
    stats.staleExcused = checkStale(commands, ledger, dataset.receiptsSeen, {
      findsOnlyById: dataset.findsOnlyById ?? false,
      eventsOnly: dataset.eventsOnly ?? false,
    }).excused;
    stats.unknownOutcomes = unknownOutcomes(commands, evidence, ledger, requests);
    stats.zeroSmsPeriods = zeroSmsByAlarmPeriod(evidence);
    if (options.alarmDrill) stats.alarmDrill = { ...options.alarmDrill, startedAt: started };
    stats.providerSends = requests.length;
    stats.providerMessages = ledger.length;
    stats.logLines = logLines.length;
    stats.storedItems = items.length;
    stats.evidenceRecords = evidence.length;
    loopDelay.disable();
    stats.eventLoopDelayP99Ms = Math.round(loopDelay.percentile(99) / 1e6);
    stats.eventLoopDelayMaxMs = Math.round(loopDelay.max / 1e6);
    stats.totalMs = Date.now() - started;
    const failedKeys = new Set(invariants.flatMap((i) => i.keys));
    const forensics = [...failedKeys].map((key) => forensicsFor(key, dataset));
    const notable = ['status_horizon', 'retry_exhausted', 'unknown_at_expiry'].flatMap((reason) =>
      commands
        .filter((c) => c.lastReason === reason)
        .slice(0, 3)
        .map((c) => forensicsFor(c.idempotencyKey, dataset)),
    );
    return {
      seed,
      stats,
      invariants,
      forensics,
      notable,
      passed:
        stats.settled &&
        stats.backgroundHung === 0 &&
        invariants.every((i) => i.count === 0) &&
        stats.poisonPresent === stats.poisonPlanted &&
        stats.poisonMarked === stats.poisonPlanted,
    };
  } finally {
    await stopTracker?.();
    capture.stop();
    dynamodb?.destroy();
    sqs?.destroy();
    await stack?.stop();
    tap?.restore();
    await simulator?.stop();
  }
}

/** Keys of the planted poison items (never an idempotency key: those are derived digests or caller keys). */
const POISON_PREFIX = 'chaos-poison-';
/**
 * How long past its expiry a command may stay undecided: a lease (slack) running out, one lookup
 * timeout, a few reconcile intervals and the event-loop delay of one process hosting everything.
 */
const STUCK_BOUND_MS = 30_000;

/**
 * A command item as a newer release might write it: a reason code this release does not know, due
 * now. No phone number, code or payload: only the shape the reconciler must survive.
 */
function poisonItem(key: string): Record<string, unknown> {
  const now = Date.now();
  return {
    [TableSchema.partitionKey]: key,
    [TableSchema.sortKey]: TableSchema.commandSortKey,
    idempotency_key: key,
    event_id: `evt-${key}`,
    channel: 'sms',
    template: 'password_reset',
    locale: 'en',
    state: 'dispatch_unknown',
    version: 3,
    attempts: 1,
    created_at: now,
    updated_at: now,
    expires_at: now + 60_000,
    destination_fingerprint: 'fp1:poison',
    payload_fingerprint: 'pf1:poison',
    provider_name: 'simulator',
    last_reason: 'reconciled_by_a_newer_release',
    unknown_since: now,
    checks: 0,
    closed: false,
    [TableSchema.dueIndex.partitionKey]: dueShardOf(key, 'dispatch_unknown'),
    [TableSchema.dueIndex.sortKey]: now,
  };
}

function forensicsFor(key: string, dataset: ChaosDataset): KeyForensics {
  const record = dataset.commands.find((c) => c.idempotencyKey === key);
  const ours = (reference: string | null) => keyOfReference(reference) === key;
  return {
    key,
    ...(record === undefined ? {} : { record }),
    trail: dataset.evidence.filter((e) => e.idempotencyKey === key).sort((a, b) => a.seq - b.seq),
    messages: dataset.ledger.filter((m) => ours(m.client_reference)),
    requests: dataset.requests.filter((r) => ours(r.client_reference)),
  };
}

async function registerSecrets(simUrl: string, spec: EventSpec): Promise<void> {
  const entries = [spec.params, spec.conflictParams]
    .filter((params) => params !== undefined)
    .map((params) => ({
      secret: 'code' in params ? params.code : params.reset_url,
      key: spec.idempotencyKey,
    }));
  await fetch(`${simUrl}/_sim/oracle`, { method: 'POST', body: JSON.stringify({ entries }) });
}

/**
 * Replaces the simulator's fault plans (one per lane; none = DELETE). False when the simulator
 * refused them with a 400 (an unknown mode); any other failure throws.
 */
async function setFaults(simUrl: string, plans: readonly object[]): Promise<boolean> {
  const response = await fetch(`${simUrl}/_sim/faults`, {
    method: plans.length === 0 ? 'DELETE' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(plans.length === 0 ? {} : { body: JSON.stringify(plans) }),
  });
  await response.arrayBuffer();
  if (response.status === 400) return false;
  if (!response.ok) throw new Error(`simulator refused the fault plan: ${response.status}`);
  return true;
}

async function simList<T>(simUrl: string, what: 'messages' | 'requests'): Promise<T[]> {
  const response = await fetch(`${simUrl}/_sim/${what}`);
  const body = (await response.json()) as Record<string, T[]>;
  return body[what] ?? [];
}

/**
 * Follows admitted keys until their command is final: a background loop re-reads the pending ones
 * (strongly consistent, 100 per request) a second or more after admission.
 */
function trackFinality(client: DynamoDBClient, tableName: string) {
  const pending = new Map<string, number>();
  // The last state read of each pending key: the settle line says what the stragglers wait in.
  const lastState = new Map<string, string>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const ready = [...pending].filter(([, at]) => Date.now() - at >= 1_000).map(([key]) => key);
      try {
        const read = await finalKeys(client, tableName, ready.slice(0, 2_000), lastState);
        for (const key of read) {
          pending.delete(key);
          lastState.delete(key);
        }
      } catch {
        // An emulator hiccup: the next round reads again.
      }
      await sleep(ready.length > 2_000 ? 50 : 500);
    }
  })();
  return {
    add(key: string) {
      pending.set(key, Date.now());
    },
    pending: () => pending.size,
    /** Pending keys by their last state read, e.g. `sent 12, dispatch_unknown 3`. */
    pendingStates(): string {
      const counts = new Map<string, number>();
      for (const key of pending.keys()) {
        const state = lastState.get(key) ?? 'unread';
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      return [...counts]
        .sort((a, b) => b[1] - a[1])
        .map(([state, n]) => `${state} ${n}`)
        .join(', ');
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

/**
 * The keys among `keys` whose command is final (strongly consistent reads, 100 at a time); the
 * state of every other key read goes into `states`.
 */
async function finalKeys(
  client: DynamoDBClient,
  tableName: string,
  keys: readonly string[],
  states: Map<string, string>,
): Promise<string[]> {
  const done: string[] = [];
  const chunks: string[][] = [];
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100));
  const readChunk = async (chunk: string[]) => {
    let request:
      | Record<
          string,
          {
            Keys: Record<string, { S: string }>[];
            ConsistentRead: boolean;
            ProjectionExpression: string;
            ExpressionAttributeNames: Record<string, string>;
          }
        >
      | undefined = {
      [tableName]: {
        Keys: chunk.map((k) => ({
          [TableSchema.partitionKey]: { S: k },
          [TableSchema.sortKey]: { S: TableSchema.commandSortKey },
        })),
        ConsistentRead: true,
        ProjectionExpression: 'idempotency_key, #s, closed',
        ExpressionAttributeNames: { '#s': 'state' },
      },
    };
    while (request && Object.keys(request).length > 0) {
      const out = await client.send(new BatchGetItemCommand({ RequestItems: request }));
      for (const raw of out.Responses?.[tableName] ?? []) {
        const item = unmarshall(raw);
        if (isFinal({ state: item.state, closed: item.closed === true }))
          done.push(String(item.idempotency_key));
        else states.set(String(item.idempotency_key), String(item.state));
      }
      request = out.UnprocessedKeys as typeof request;
    }
  };
  for (let i = 0; i < chunks.length; i += 4) await Promise.all(chunks.slice(i, i + 4).map(readChunk));
  return done;
}
