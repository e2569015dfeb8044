/**
 * Chaos step 1, rig: the real local stack (DynamoDB Local, fauxqs, the provider simulator in its
 * own thread, the local runtime) with the run's injectors wired in, the driver's own clients, the
 * planted poison items and the finality tracker. What it started is recorded in {@link RigParts}
 * as it goes, so {@link dismantle} stops exactly that, also after a failure half way.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { dueShardOf } from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { settingsEnv } from '../../shared/settings.js';
import type { captureOutput } from './capture.js';
import {
  createCipherFaultInjector,
  createCrashInjector,
  createLostAnswerInjector,
  createThrottleInjector,
  type FaultsByKey,
} from './injectors.js';
import { tapProviderSends } from './provider-tap.js';
import {
  CHAOS_ENV,
  type ChaosProvider,
  type ChaosRunOptions,
  listLagAllowanceSecondsFor,
  SNS_CHAOS_ENV,
} from './run-options.js';
import { type ChaosMix, DEFAULT_MIX } from './scenario.js';
import { type SimulatorThread, startSimulatorThread } from './sim-thread.js';
import { type FinalityTracker, trackFinality } from './tracker.js';

/** Fast status progress: `sent` after 20 ms, `delivered` after 100 ms, so one status poll settles a key. */
const SIMULATOR_DELAYS = { sent: 20, delivered: 100 };
/** Token life cap of normal events with the AWS providers (see {@link ChaosMix.maxNormalLifeMs}). */
const AWS_MAX_NORMAL_LIFE_MS = 60_000;
const localCredentials = { accessKeyId: 'local', secretAccessKey: 'local' };

/** Keys of the planted poison items (never an idempotency key: those are derived digests or caller keys). */
export const POISON_PREFIX = 'chaos-poison-';

/** What the rig started so far: {@link dismantle} stops these. */
export interface RigParts {
  simulator?: SimulatorThread;
  tap?: ReturnType<typeof tapProviderSends>;
  stack?: LocalStack;
  dynamodb?: DynamoDBClient;
  sqs?: SQSClient;
  tracker?: FinalityTracker;
}

/** The run's injectors: each counts what it did and records which key it touched. */
export function injectorsFor(seed: number, mix: ChaosMix, faultsByKey: FaultsByKey) {
  return {
    crash: createCrashInjector(seed, mix.crashProbability, faultsByKey),
    throttle: createThrottleInjector(
      seed,
      mix.throttleProbability,
      mix.retriedThrottleProbability,
      faultsByKey,
    ),
    lostAnswers: createLostAnswerInjector(
      seed,
      mix.lostAnswerProbability,
      mix.retriedLostAnswerProbability,
      faultsByKey,
    ),
    cipherFaults: createCipherFaultInjector(seed, mix.decryptFailureProbability, faultsByKey),
  };
}

/** A rigged run: every part started, ready to drive. */
export interface Rig {
  readonly options: ChaosRunOptions;
  readonly seed: number;
  readonly mix: ChaosMix;
  readonly provider: ChaosProvider;
  /** Wall-clock start of the run (the alarm drill's outage is relative to it). */
  readonly started: number;
  readonly capture: ReturnType<typeof captureOutput>;
  /** A progress line, past the output capture. */
  readonly say: (line: string) => void;
  /** Which injected fault touched which key: the zero-SMS classification (lost_deliverable) reads it. */
  readonly faultsByKey: FaultsByKey;
  readonly injectors: ReturnType<typeof injectorsFor>;
  readonly simUrl: string;
  /** The provider adapter's calls as the tap saw them (Twilio: fetch; none for the AWS SDKs). */
  readonly calls: ReturnType<typeof tapProviderSends>['calls'];
  readonly stack: LocalStack;
  /** The driver's own clients: never throttled, so observation does not disturb the verdict. */
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly tracker: FinalityTracker;
  readonly poisonPlanted: number;
  readonly loopDelay: ReturnType<typeof monitorEventLoopDelay>;
}

/** The run's fault mix: the defaults, the AWS providers' shorter token life, then the options'. */
export function mixFor(options: ChaosRunOptions): ChaosMix {
  const noAbsenceProof = options.provider === 'sns' || options.provider === 'eum';
  return {
    ...DEFAULT_MIX,
    // SNS and End User Messaging never prove absence: an unknown without evidence waits for its expiry.
    ...(noAbsenceProof ? { maxNormalLifeMs: AWS_MAX_NORMAL_LIFE_MS } : {}),
    // The SNS simulator attributes a message to the key registered for its secret before the send:
    // with a key per try it cannot know which key won.
    ...(options.provider === 'sns' ? { freshKeyProbability: 0 } : {}),
    ...(options.mix ?? {}),
  };
}

/** The service environment of the run: chaos timings, the provider's, the list-lag allowance, the options'. */
function serviceEnv(options: ChaosRunOptions, mix: ChaosMix, simUrl: string): Record<string, string> {
  const provider = options.provider ?? 'twilio';
  const aws = provider === 'sns' || provider === 'eum';
  return {
    ...CHAOS_ENV,
    ...(provider === 'sns' ? SNS_CHAOS_ENV : {}),
    // The deployment's list-lag allowance covers the longest lag the run injects (3 x settle): an
    // allowance is what the operator declares Twilio's lag to be bounded by. Lag beyond it is caught
    // only by the canary's tripwire, which cannot prove anything per message (docs/chaos.md).
    ...settingsEnv({ twilioListLagAllowance: listLagAllowanceSecondsFor(mix) }),
    ...(options.env ?? {}),
    // The AWS SDK clients do not use fetch: they are pointed at the simulator thread by endpoint.
    ...(aws ? settingsEnv({ provider, snsEndpoint: simUrl, eumEndpoint: simUrl, logsEndpoint: simUrl }) : {}),
  };
}

/** Starts the local stack with the run's injectors wired into it. */
function startStack(
  rig: Pick<Rig, 'options' | 'seed' | 'started' | 'mix' | 'injectors'>,
  env: Record<string, string>,
) {
  const { options, mix, injectors } = rig;
  return startLocalStack({
    ...(options.dynamodbEndpoint ? { dynamodbEndpoint: options.dynamodbEndpoint } : {}),
    ...(options.sqsEndpoint ? { sqsEndpoint: options.sqsEndpoint } : {}),
    tableName: `chaos-${rig.seed}-${rig.started.toString(36)}`,
    apiPort: 0,
    simPort: 0,
    env,
    reconcileIntervalMs: options.reconcileIntervalMs ?? 300,
    senderConcurrency: options.senderConcurrency ?? 6,
    simulatorStatusDelaysMs: SIMULATOR_DELAYS,
    onDispatchStep: injectors.crash.hook,
    wrapDynamoClient: (client) => {
      injectors.throttle.wrap(client);
      injectors.lostAnswers.wrap(client);
    },
    wrapCipher: injectors.cipherFaults.wrap,
    sqsDuplicateProbability: mix.sqsDuplicateProbability,
    streamDuplicateProbability: mix.streamDuplicateProbability,
    // Production's logger at production's level: every line it prints goes through the privacy scan.
    logger: new Logger({ serviceName: 'reset-notifier', logLevel: 'INFO' }),
  });
}

/** Plants `count` poison items in the due index; returns how many. */
async function plantPoison(dynamodb: DynamoDBClient, tableName: string, count: number): Promise<number> {
  for (let i = 0; i < count; i++) {
    await dynamodb.send(
      new PutItemCommand({ TableName: tableName, Item: marshall(poisonItem(`${POISON_PREFIX}${i}`)) }),
    );
  }
  return count;
}

/**
 * Starts everything a run needs and records each part in `parts` as it starts. The provider runs
 * in its own thread, and the provider adapter's requests are sent there: the tap is installed
 * before the stack starts, because the adapter picks up the global fetch when built.
 */
export async function rigChaos(
  options: ChaosRunOptions,
  capture: ReturnType<typeof captureOutput>,
  parts: RigParts,
): Promise<Rig> {
  const mix = mixFor(options);
  const seed = options.seed;
  const provider = options.provider ?? 'twilio';
  const aws = provider === 'sns' || provider === 'eum';
  const started = Date.now();
  const progress = options.progress ?? (() => undefined);
  const say = (line: string) => capture.bypass(() => progress(line));
  const faultsByKey: FaultsByKey = new Map();
  const injectors = injectorsFor(seed, mix, faultsByKey);
  parts.simulator = await startSimulatorThread(SIMULATOR_DELAYS, aws ? 'aws' : 'twilio');
  const simUrl = parts.simulator.url;
  parts.tap = tapProviderSends(aws ? {} : { redirectTo: simUrl });
  const stack = await startStack(
    { options, seed, started, mix, injectors },
    serviceEnv(options, mix, simUrl),
  );
  parts.stack = stack;
  if (provider === 'eum') {
    // End User Messaging events go to the stack's loopback receipts path.
    await fetch(`${simUrl}/_sim/config`, {
      method: 'POST',
      body: JSON.stringify({ events_url: `${stack.apiUrl}/v1/receipts/eum` }),
    });
  }
  const dynamodb = new DynamoDBClient({
    endpoint: stack.dynamodbEndpoint,
    region: 'us-east-1',
    credentials: localCredentials,
  });
  parts.dynamodb = dynamodb;
  const sqs = new SQSClient({
    endpoint: stack.sqsEndpoint,
    region: 'us-east-1',
    credentials: localCredentials,
  });
  parts.sqs = sqs;
  say(`chaos: stack up in ${Date.now() - started} ms (api ${stack.apiUrl}, simulator ${simUrl})`);
  const poisonPlanted = await plantPoison(dynamodb, stack.tableName, mix.poisonItems);
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  const tracker = trackFinality(dynamodb, stack.tableName);
  parts.tracker = tracker;
  return {
    options,
    seed,
    mix,
    provider,
    started,
    capture,
    say,
    faultsByKey,
    injectors,
    simUrl,
    calls: parts.tap.calls,
    stack,
    dynamodb,
    sqs,
    tracker,
    poisonPlanted,
    loopDelay,
  };
}

/** Stops whatever the rig started, in reverse order; safe after a failure half way and after collect. */
export async function dismantle(parts: RigParts, capture: ReturnType<typeof captureOutput>): Promise<void> {
  await parts.tracker?.stop();
  capture.stop();
  parts.dynamodb?.destroy();
  parts.sqs?.destroy();
  await parts.stack?.stop();
  parts.tap?.restore();
  await parts.simulator?.stop();
}

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
