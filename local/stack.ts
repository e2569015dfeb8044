import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { parseKey } from '../shared/adapters/local-cipher.js';
import { createSqsDispatchQueue } from '../shared/adapters/sqs/dispatch-queue.js';
import {
  composeApi,
  composeForwarder,
  composeReceipts,
  composeReconciler,
  composeReconcileWorker,
  composeSender,
  type MetricsSink,
} from '../shared/composition/handlers.js';
import { inlineFingerprinter } from '../shared/composition/secrets.js';
import { createServiceRuntime, type ServiceRuntime } from '../shared/composition.js';
import { loadConfig, loadLocalConfig, type ServiceConfig } from '../shared/config.js';
import { TWILIO_RECEIPTS_PATH } from '../shared/handlers/receipts-handler.js';
import type { Cipher } from '../shared/ports/cipher.js';
import { SETTINGS, settingsEnv, settingsReader } from '../shared/settings.js';
import { ingestReceipt } from '../shared/usecases/ingest-receipt.js';
import type { ReconcileSummary } from '../shared/usecases/reconcile-due.js';
import { LOCAL_HANDLER_FUNCTIONS, type LocalAlarmOptions, localAlarmsFor } from './alarms/local-stack.js';
import type { AlarmMonitor } from './alarms/monitor.js';
import { startDynamoDbLocal } from './dynamodb-local.js';
import { type DispatchStepHook, withDispatchSteps } from './faults/dispatch-crash.js';
import { startLocalFauxqs } from './fauxqs.js';
import { withKmsAuthorization } from './iam/cipher.js';
import { runAs } from './iam/context.js';
import type { IamDenial, IamEnforcer } from './iam/enforcer.js';
import { type LocalIamOptions, localIamEnforcer } from './iam/local-stack.js';
import { ensureQueues, ensureTable } from './resources.js';
import { EUM_RECEIPTS_PATH, eumReceiptsRoute } from './runtime/eum-receipts-route.js';
import { type ApiHandler, type LocalRoute, startHttpServer } from './runtime/http-server.js';
import { receiptsListenerPort, startReceiptsListener } from './runtime/receipts-listener.js';
import { type QueueHandler, startSqsPoller, startTimer } from './runtime/sqs-poller.js';
import { startStreamPoller } from './runtime/stream-poller.js';
import { startAwsSimulator } from './simulator/aws/server.js';
import { POOL_SENDER, SIM_MESSAGING_SERVICE_SID, SIM_OWNED_NUMBER } from './simulator/messages.js';
import { startSimulator } from './simulator/server.js';

export interface LocalStackOptions {
  /** Keep DynamoDB Local's data (and the local keys) here; in memory otherwise. */
  readonly dataDir?: string;
  readonly apiPort?: number;
  readonly simPort?: number;
  /** Ports for the emulators this stack starts (random when omitted). */
  readonly dynamodbPort?: number;
  readonly sqsPort?: number;
  /** Reuse running emulators (tests start them once in a global setup). */
  readonly dynamodbEndpoint?: string;
  readonly sqsEndpoint?: string;
  readonly tableName?: string;
  readonly queueName?: string;
  /** Environment overrides (timings etc.), read like Lambda's environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly reconcileIntervalMs?: number;
  readonly senderConcurrency?: number;
  /** Runs at each step of every dispatch, and may crash the sender there (`local/faults/dispatch-crash.ts`). */
  readonly onDispatchStep?: DispatchStepHook;
  readonly streamDuplicateProbability?: number;
  readonly sqsDuplicateProbability?: number;
  readonly simulatorStatusDelaysMs?: { sent: number; delivered: number };
  readonly routes?: readonly LocalRoute[];
  readonly logger?: Logger;
  /** Lets a caller add middleware to the DynamoDB client the handlers use (chaos: injected throttling). */
  readonly wrapDynamoClient?: (client: DynamoDBClient) => void;
  /** Lets a caller wrap the cipher the handlers use (chaos: KMS failures for a share of decryptions). */
  readonly wrapCipher?: (cipher: Cipher) => Cipher;
  /** Parallel reconcile-queue consumers (the worker function's `maxConcurrency`). */
  readonly reconcileWorkerConcurrency?: number;
  /** Parallel status-poll-queue consumers (the poll event source's `maxConcurrency`). */
  readonly reconcilePollWorkerConcurrency?: number;
  /** IAM enforcement: each function's AWS calls evaluated against its role in the template (local/iam/). */
  readonly iam?: LocalIamOptions;
  /** The template's alarms, evaluated over what the local runtime observes (local/alarms/). */
  readonly alarms?: LocalAlarmOptions;
}

export interface LocalStack {
  readonly apiUrl: string;
  /** The receipts-only listener, when one runs (real Twilio or `RECEIPTS_PORT`): tunnel this one. */
  readonly receiptsUrl?: string;
  readonly simUrl: string;
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /** The reconcile queue the scheduled pass fans due keys out to. */
  readonly reconcileQueueUrl: string;
  /** The status-poll queue: the pass's poll-lane keys, consumed by the same worker. */
  readonly pollQueueUrl: string;
  readonly config: ServiceConfig;
  readonly runtime: ServiceRuntime;
  /**
   * Runs one reconciler pass now and handles its keys in this call (the timer's pass only enqueues
   * them for the reconcile workers), so a caller sees the effect when it resolves.
   */
  reconcileNow(): Promise<ReconcileSummary>;
  /** The calls IAM denied so far, when enforcement is on. */
  readonly iam?: { denials(): readonly IamDenial[] };
  /** The template's alarms and their states (local/alarms/). */
  readonly alarms: AlarmMonitor;
  stop(): Promise<void>;
}

const localCredentials = { accessKeyId: 'local', secretAccessKey: 'local' };

async function localKeys(dataDir: string | undefined): Promise<{ dataKey: string; fingerprintKey: string }> {
  const fresh = { dataKey: randomBytes(32).toString('hex'), fingerprintKey: randomBytes(32).toString('hex') };
  if (!dataDir) return fresh;
  // Persisted with the data: a restart must still decrypt stored payloads and match fingerprints.
  const file = join(dataDir, 'local-keys.json');
  try {
    return JSON.parse(await readFile(file, 'utf8')) as typeof fresh;
  } catch {
    await writeFile(file, JSON.stringify(fresh), { mode: 0o600 });
    return fresh;
  }
}

type Stops = Array<() => Promise<void>>;
type SettingRead = ReturnType<typeof settingsReader>;
type LocalSettings = ReturnType<typeof loadLocalConfig>;
type Keys = Awaited<ReturnType<typeof localKeys>>;
type Queues = Awaited<ReturnType<typeof ensureQueues>>;

/** The emulators: reused when the options name their endpoints, started (and stopped with the stack) otherwise. */
async function startEmulators(options: LocalStackOptions, stops: Stops) {
  let dynamodbEndpoint = options.dynamodbEndpoint;
  if (!dynamodbEndpoint) {
    const ddb = await startDynamoDbLocal({
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.dynamodbPort ? { port: options.dynamodbPort } : {}),
    });
    stops.push(ddb.stop);
    dynamodbEndpoint = ddb.endpoint;
  }
  let sqsEndpoint = options.sqsEndpoint;
  if (!sqsEndpoint) {
    const fauxqs = await startLocalFauxqs({ port: options.sqsPort ?? 0 });
    stops.push(() => fauxqs.stop());
    sqsEndpoint = fauxqs.address;
  }
  return { dynamodbEndpoint, sqsEndpoint };
}

/**
 * The provider simulator: `PROVIDER=sns|eum` starts the AWS simulator, for the real AWS SDK
 * clients (same control API); otherwise the Twilio simulator. Ledgers are kept across restarts
 * with a data dir, sealed under a key derived from the stack's data key. Returns the simulator
 * and the provider environment it implies.
 */
async function startProviderSimulator(
  options: LocalStackOptions,
  context: { local: LocalSettings; preConfig: ServiceConfig; keys: Keys; read: SettingRead },
  stops: Stops,
) {
  const { local, preConfig, keys, read } = context;
  const fingerprinter = inlineFingerprinter(
    preConfig.fingerprintKey ?? keys.fingerprintKey,
    preConfig.fingerprintKeyVersion,
  );
  const awsProvider =
    preConfig.provider === 'sns' || preConfig.provider === 'eum' ? preConfig.provider : undefined;
  const awsSim = awsProvider
    ? await startAwsSimulator({
        port: options.simPort ?? local.ports.sim,
        fingerprint: (value) => fingerprinter.destination(value),
        ...(options.simulatorStatusDelaysMs ? { statusDelaysMs: options.simulatorStatusDelaysMs } : {}),
        ...(options.dataDir
          ? {
              ledgerFile: join(options.dataDir, 'aws-simulator-ledger.jsonl'),
              ledgerKey: parseKey(keys.dataKey),
            }
          : {}),
      })
    : undefined;
  const sim =
    awsSim ??
    (await startSimulator({
      port: options.simPort ?? local.ports.sim,
      authToken: preConfig.providerAuthToken,
      fingerprint: (e164) => fingerprinter.destination(e164),
      // Bodies and numbers kept across restarts, sealed under a key derived from the stack's data key.
      ...(options.dataDir
        ? { ledgerFile: join(options.dataDir, 'simulator-ledger.jsonl'), ledgerKey: parseKey(keys.dataKey) }
        : {}),
      ...(options.simulatorStatusDelaysMs ? { statusDelaysMs: options.simulatorStatusDelaysMs } : {}),
    }));
  stops.push(sim.stop);
  const awsEnv = awsSim
    ? settingsEnv({
        provider: awsProvider,
        awsRegion: 'us-east-1',
        snsEndpoint: read(SETTINGS.snsEndpoint, awsSim.url),
        logsEndpoint: read(SETTINGS.logsEndpoint, awsSim.url),
        eumEndpoint: read(SETTINGS.eumEndpoint, awsSim.url),
        snsDeliveryLogGroups: [awsSim.logGroups.success, awsSim.logGroups.failure],
        eumOriginationIdentity: read(SETTINGS.eumOriginationIdentity, 'pool-local'),
        eumConfigurationSet: read(SETTINGS.eumConfigurationSet, 'reset-notifier'),
        eumEventsTopicArn: awsSim.eventsTopicArn,
      })
    : settingsEnv({ provider: 'simulator' });
  return { sim, awsSim, awsProvider, awsEnv };
}

type ProviderSimulator = Awaited<ReturnType<typeof startProviderSimulator>>;

/** The table and the three queue pairs (dispatch, reconcile, status poll), created when missing. */
async function ensureResources(
  options: LocalStackOptions,
  local: LocalSettings,
  tableName: string,
  clients: { dynamodb: DynamoDBClient; sqs: SQSClient },
) {
  const { dynamodb, sqs } = clients;
  await ensureTable(dynamodb, tableName);
  const queueSettings = {
    visibilityTimeoutSeconds: local.queueVisibilityTimeoutSeconds,
    maxReceiveCount: local.maxReceiveCount,
  };
  const dispatch = await ensureQueues(sqs, options.queueName ?? `${tableName}-dispatch`, queueSettings);
  const reconcile = await ensureQueues(
    sqs,
    options.queueName ? `${options.queueName}-reconcile` : `${tableName}-reconcile`,
    queueSettings,
  );
  // Status polls of `sent` messages on their own queue, as in AWS: they never delay an expiry.
  const poll = await ensureQueues(
    sqs,
    options.queueName ? `${options.queueName}-status-poll` : `${tableName}-status-poll`,
    queueSettings,
  );
  return { dispatch, reconcile, poll };
}

/** The service configuration of the stack: the environment, plus what only the started parts know. */
function stackConfig(
  env: NodeJS.ProcessEnv,
  context: { read: SettingRead; preConfig: ServiceConfig; keys: Keys; provider: ProviderSimulator },
  wiring: {
    /** Where our receipts route listens: the receipts-only listener when one runs, else the API. */
    receiptsOrigin: string;
    tableName: string;
    queues: { dispatch: Queues; reconcile: Queues; poll: Queues };
    dynamodbEndpoint: string;
    sqsEndpoint: string;
  },
): ServiceConfig {
  const { read, preConfig, keys } = context;
  const { sim, awsSim, awsEnv } = context.provider;
  const twilioBaseUrl = read(SETTINGS.twilioBaseUrl);
  return loadConfig({
    ...env,
    ...settingsEnv({
      // Empty or unset: our own receipts route. A tunnel in front of the receipts-only listener
      // (real Twilio) sets its public URL.
      twilioStatusCallbackBase: read(
        SETTINGS.twilioStatusCallbackBase,
        `${wiring.receiptsOrigin}${TWILIO_RECEIPTS_PATH}`,
      ),
      tableName: wiring.tableName,
      dispatchQueueUrl: wiring.queues.dispatch.queueUrl,
      reconcileQueueUrl: wiring.queues.reconcile.queueUrl,
      reconcilePollQueueUrl: wiring.queues.poll.queueUrl,
      // Receipts reach the local receipts route within seconds: a status poll is the fallback for
      // one that did not come, as in AWS (120 s there), scaled to the local timings.
      receiptGrace: read(SETTINGS.receiptGrace, 10),
      dynamodbEndpoint: wiring.dynamodbEndpoint,
      sqsEndpoint: wiring.sqsEndpoint,
    }),
    // PROVIDER=sns|eum: the AWS simulator behind the real SDK clients. `PROVIDER=twilio` with
    // `PROVIDER_BASE_URL` points the stack at any Twilio-compatible endpoint (docs/design.md#local-stack);
    // otherwise the built-in Twilio simulator, posting its callbacks to our receipts route.
    ...(awsSim
      ? { ...settingsEnv({ twilioBaseUrl: sim.url }), ...awsEnv }
      : preConfig.provider === 'twilio' && twilioBaseUrl
        ? settingsEnv({ provider: 'twilio', twilioBaseUrl })
        : settingsEnv({
            provider: 'simulator',
            twilioBaseUrl: sim.url,
            // The simulator starts with no redaction and no list-lag fault active, so the local stack
            // can prove absence; the adapter's canary switches it off if a redaction fault shows up.
            twilioRedaction: read(SETTINGS.twilioRedaction, 'off'),
            twilioListLagAllowance: read(SETTINGS.twilioListLagAllowance, 0),
            // A simulated messaging service (Twilio schedules messages only through one) and a
            // number of the simulated account: absence is provable in a quiet account through the
            // scheduled-and-canceled probe (docs/providers/twilio.md). The sender stays fixed.
            twilioFrom: read(SETTINGS.twilioFrom, POOL_SENDER),
            twilioMessagingService: read(SETTINGS.twilioMessagingService, SIM_MESSAGING_SERVICE_SID),
            twilioAbsenceProbeTo: read(SETTINGS.twilioAbsenceProbeTo, SIM_OWNED_NUMBER),
          })),
    ...settingsEnv({
      cipher: 'local',
      localDataKey: read(SETTINGS.localDataKey, keys.dataKey),
      fingerprintKey: preConfig.fingerprintKey ?? keys.fingerprintKey,
    }),
  });
}

/**
 * The same composition as the Lambda entries (functions/*): the same handlers, log lines and
 * metrics, over the parts this one process shares (and the chaos driver wraps).
 */
async function composeLocalHandlers(
  config: ServiceConfig,
  runtime: ServiceRuntime,
  options: LocalStackOptions,
  reconcileQueue: ReturnType<typeof createSqsDispatchQueue>,
  metrics: MetricsSink,
) {
  const parts = {
    clock: runtime.clock,
    logger: runtime.logger,
    store: runtime.store,
    queue: runtime.queue,
    cipher: runtime.cipher,
    fingerprinter: runtime.fingerprinter,
    provider: runtime.provider,
    // EMF lines tapped into the local alarms (local/alarms/emf.ts), not printed.
    metrics,
    // The simulator signs with the well-known token: believed here with it only (refused in AWS).
    allowWellKnownAuthToken: config.provider === 'simulator',
  };
  const { onDispatchStep } = options;
  return {
    api: await composeApi(config, parts),
    receipts: composeReceipts(config, parts),
    forwarder: composeForwarder(config, parts),
    sender: await composeSender(config, parts, {
      owner: `local-sender-${process.pid}`,
      ...(onDispatchStep ? { wrapPorts: (ports) => withDispatchSteps(ports, onDispatchStep) } : {}),
    }),
    // The timer's pass only scans and enqueues; reconcileNow handles the keys itself.
    reconciler: await composeReconciler(config, parts, { reconcileQueue }),
    inlineReconciler: await composeReconciler(config, parts, { reconcileQueue: null }),
    reconcileWorker: await composeReconcileWorker(config, parts),
  };
}

/** End User Messaging events (SNS-shaped) on a loopback-only path of the same server; none for other providers. */
function eumRouteFor(
  config: ServiceConfig,
  runtime: ServiceRuntime,
  awsProvider: ProviderSimulator['awsProvider'],
  iam: IamEnforcer | undefined,
): LocalRoute | undefined {
  if (awsProvider !== 'eum' || !config.eumEventsTopicArn) return undefined;
  const route = eumReceiptsRoute(
    {
      ingest: ingestReceipt,
      topicArn: config.eumEventsTopicArn,
      store: runtime.store,
      clock: runtime.clock,
      policy: config.policy,
    },
    (report) => runtime.logger.info('eum receipt', { ...report }),
  );
  return (req, res, url) => runAs(iam, 'eumReceipts', () => route(req, res, url));
}

/** The event sources, the way Lambda polls them: the table's stream and the three queues. */
async function startEventSources(
  handlers: Awaited<ReturnType<typeof composeLocalHandlers>>,
  context: {
    options: LocalStackOptions;
    local: LocalSettings;
    tableName: string;
    dynamodbEndpoint: string;
    clients: { dynamodb: DynamoDBClient; sqs: SQSClient };
    queues: { dispatch: Queues; reconcile: Queues; poll: Queues };
    onError: (error: unknown) => void;
    iam: IamEnforcer | undefined;
  },
  stops: Stops,
): Promise<void> {
  const { options, local, clients, queues, onError, iam } = context;
  const streams = new DynamoDBStreamsClient({
    endpoint: context.dynamodbEndpoint,
    region: 'us-east-1',
    credentials: localCredentials,
  });
  const streamPoller = startStreamPoller({
    dynamodb: clients.dynamodb,
    streams,
    tableName: context.tableName,
    // The stream reads are the event source's, not evaluated (docs/testing.md#iam-enforced-locally).
    handler: (event) => runAs(iam, 'forwarder', () => handlers.forwarder(event)),
    onError,
    ...(options.streamDuplicateProbability
      ? { duplicateProbability: options.streamDuplicateProbability }
      : {}),
  });
  stops.push(streamPoller.stop);
  /**
   * An SQS event source on `url` (the ARN names it in the events), polling with the role of the
   * function it feeds, as Lambda's event source mapping does.
   */
  const consume = async (
    fn: 'sender' | 'reconcileWorker',
    url: string,
    handler: QueueHandler,
    concurrency: number,
    duplicateProbability?: number,
  ) => {
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    const poller = runAs(iam, fn, () =>
      startSqsPoller({
        client: clients.sqs,
        queueUrl: url,
        queueArn: attributes.Attributes?.QueueArn ?? '',
        handler,
        concurrency,
        onError,
        ...(duplicateProbability ? { duplicateProbability } : {}),
      }),
    );
    stops.push(poller.stop);
  };
  await consume(
    'sender',
    queues.dispatch.queueUrl,
    (event) => handlers.sender(event),
    options.senderConcurrency ?? 4,
    options.sqsDuplicateProbability,
  );
  await consume(
    'reconcileWorker',
    queues.reconcile.queueUrl,
    (event) => handlers.reconcileWorker(event),
    options.reconcileWorkerConcurrency ?? local.reconcileWorkerConcurrency,
  );
  await consume(
    'reconcileWorker',
    queues.poll.queueUrl,
    (event) => handlers.reconcileWorker(event),
    options.reconcilePollWorkerConcurrency ?? local.reconcilePollWorkerConcurrency,
  );
}

/** The service runtime over the stack's own DynamoDB client (which the chaos driver may wrap) and cipher. */
async function localRuntime(
  config: ServiceConfig,
  options: LocalStackOptions,
  dynamodbEndpoint: string,
  enforceIam: boolean,
): Promise<ServiceRuntime> {
  const logger = options.logger ?? new Logger({ serviceName: 'reset-notifier', logLevel: 'INFO' });
  const handlerDynamo = new DynamoDBClient({
    endpoint: dynamodbEndpoint,
    region: 'us-east-1',
    credentials: localCredentials,
  });
  options.wrapDynamoClient?.(handlerDynamo);
  const created = await createServiceRuntime(config, { logger, dynamoClient: handlerDynamo });
  // The local cipher stands for the KMS field key: its use is evaluated as KMS calls would be.
  const baseRuntime = enforceIam ? { ...created, cipher: withKmsAuthorization(created.cipher) } : created;
  return options.wrapCipher
    ? { ...baseRuntime, cipher: options.wrapCipher(baseRuntime.cipher) }
    : baseRuntime;
}

/**
 * Starts the whole service on loopback: DynamoDB Local, fauxqs, the provider simulator, and the
 * local runtime driving the same handler factories the Lambda entry points use.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stops: Stops = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
    const env = { ...process.env, ...(options.env ?? {}) };
    // Every setting is checked before anything starts: a malformed one stops the start, named.
    const read = settingsReader(env);
    const local = loadLocalConfig(env);
    const { dynamodbEndpoint, sqsEndpoint } = await startEmulators(options, stops);
    const keys = await localKeys(options.dataDir);
    const preConfig = loadConfig({
      ...env,
      ...settingsEnv({ fingerprintKey: read(SETTINGS.fingerprintKey, keys.fingerprintKey) }),
    });
    const provider = await startProviderSimulator(options, { local, preConfig, keys, read }, stops);

    const tableName = options.tableName ?? preConfig.tableName;
    const clients = {
      dynamodb: new DynamoDBClient({
        endpoint: dynamodbEndpoint,
        region: 'us-east-1',
        credentials: localCredentials,
      }),
      sqs: new SQSClient({ endpoint: sqsEndpoint, region: 'us-east-1', credentials: localCredentials }),
    };
    const queues = await ensureResources(options, local, tableName, clients);

    // The API listens before the configuration is built: the Twilio status-callback base is its own
    // receipts route, whose port is known only now. Requests wait for the handlers below (503 before).
    let routeRequest: ApiHandler = async () => ({ statusCode: 503, body: '' });
    let eumRouteHandler: LocalRoute | undefined;
    const lateEumRoute: LocalRoute = async (req, res, url) =>
      eumRouteHandler ? eumRouteHandler(req, res, url) : false;
    const api = await startHttpServer({
      handler: (event, context) => routeRequest(event, context),
      port: options.apiPort ?? local.ports.api,
      routes: [lateEumRoute, ...(options.routes ?? [])],
    });
    stops.push(api.stop);
    // Real Twilio's callbacks come through a tunnel: to a listener serving the receipts route only.
    const receiptsPort = receiptsListenerPort(env);
    let receiptRequest: ApiHandler = async () => ({ statusCode: 503, body: '' });
    const receipts =
      receiptsPort === undefined
        ? undefined
        : await startReceiptsListener({
            handler: (event, context) => receiptRequest(event, context),
            port: receiptsPort,
          });
    if (receipts) stops.push(receipts.stop);

    const config = stackConfig(
      env,
      { read, preConfig, keys, provider },
      { receiptsOrigin: receipts?.url ?? api.url, tableName, queues, dynamodbEndpoint, sqsEndpoint },
    );
    const enforceIam = options.iam?.enforce ?? read(SETTINGS.localIam);
    const runtime = await localRuntime(config, options, dynamodbEndpoint, enforceIam);
    // A denied call fails in the function as in AWS; the line names it (no request payload).
    const iam = enforceIam
      ? await localIamEnforcer(config, options.iam ?? {}, ({ fn, action, resource }) =>
          runtime.logger.warn('iam denied', { function: fn, action, resource }),
        )
      : undefined;
    const reconcileQueue = createSqsDispatchQueue(clients.sqs, queues.reconcile.queueUrl);
    const alarms = await localAlarmsFor(config, {
      sqs: clients.sqs,
      clock: runtime.clock,
      ...options.alarms,
    });
    const handlers = alarms.observe(
      await composeLocalHandlers(config, runtime, options, reconcileQueue, alarms.metrics),
      LOCAL_HANDLER_FUNCTIONS,
    );
    alarms.monitor.start(options.alarms?.intervalMs);
    stops.push(async () => alarms.monitor.stop());
    // As API Gateway routes them: the receipts route to its own handler, everything else to the API.
    routeRequest = (event, context) =>
      event.rawPath === TWILIO_RECEIPTS_PATH
        ? runAs(iam, 'receipts', () => handlers.receipts(event))
        : runAs(iam, 'api', () => handlers.api(event, context));
    receiptRequest = (event) => runAs(iam, 'receipts', () => handlers.receipts(event));
    eumRouteHandler = eumRouteFor(config, runtime, provider.awsProvider, iam);
    provider.awsSim?.setEventsUrl(`${api.url}${EUM_RECEIPTS_PATH}`);

    const onError = (error: unknown) =>
      runtime.logger.warn('local runtime error', { error: (error as Error).message });
    await startEventSources(
      handlers,
      { options, local, tableName, dynamodbEndpoint, clients, queues, onError, iam },
      stops,
    );
    const intervalMs = options.reconcileIntervalMs ?? local.reconcileIntervalMs;
    const timer = startTimer(
      intervalMs,
      () => runAs(iam, 'reconciler', () => handlers.reconciler()),
      onError,
    );
    stops.push(timer.stop);

    return {
      apiUrl: api.url,
      ...(receipts ? { receiptsUrl: receipts.url } : {}),
      simUrl: provider.sim.url,
      dynamodbEndpoint,
      sqsEndpoint,
      tableName,
      queueUrl: queues.dispatch.queueUrl,
      dlqUrl: queues.dispatch.dlqUrl,
      reconcileQueueUrl: queues.reconcile.queueUrl,
      pollQueueUrl: queues.poll.queueUrl,
      config,
      runtime,
      // Handles the keys itself: as the reconciler, which holds the workers' grants too.
      reconcileNow: () => runAs(iam, 'reconciler', () => handlers.inlineReconciler()),
      ...(iam ? { iam: { denials: () => iam.denials() } } : {}),
      alarms: alarms.monitor,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
