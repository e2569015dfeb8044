/**
 * AWS simulator: one loopback HTTP server speaking the three AWS wire protocols the SNS and End
 * User Messaging adapters use, so the real SDK clients run against it through an endpoint override:
 *
 * - SNS Query protocol (`POST /`, form `Action=Publish&PhoneNumber=...&Message=...`) -> XML
 *   `PublishResponse` with a `MessageId`, or an XML `ErrorResponse` (`Throttled` 429,
 *   `InvalidParameter` 400, `InternalError` 500).
 * - End User Messaging SMS, JSON 1.0 (`X-Amz-Target: PinpointSMSVoiceV2.SendTextMessage` and
 *   `.PutMessageFeedback`) -> `{MessageId}` or `{__type, Message, Reason?}` errors with the
 *   service's status codes.
 * - CloudWatch Logs, JSON 1.1 (`X-Amz-Target: Logs_20140328.FilterLogEvents`) over the SNS SMS
 *   delivery-status log groups `sns/<region>/<account>/DirectPublishToPhoneNumber[/Failure]`.
 *   Lines appear `logLagMs` after the delivery outcome (plus any `list_lag` fault), success lines
 *   only with probability `logSuccessSamplingRate`, as SNS samples them. Filter patterns: the
 *   `$.notification.messageId = "..."` terms joined by `||` (what the adapter sends); anything else
 *   is refused with `InvalidParameterException` rather than guessed.
 * - End User Messaging events (TEXT_QUEUED, TEXT_SUCCESSFUL, TEXT_DELIVERED, TEXT_TTL_EXPIRED;
 *   TEXT_UNKNOWN at the carrier-result horizon for a carrier that never answers; a Monitor protect
 *   rule's recommendation), with `context` echoed, POSTed as SNS HTTP notifications to `eventsUrl`
 *   (the local receipts path) after `eventDelayMs`, in no guaranteed order (`eventReorderMs`) and
 *   some twice (`eventDuplicateShare`), subject to `receipt_delay`, `receipt_loss` and
 *   `receipt_duplicate`; a 5xx or no answer is retried 3 times `eventRetryDelayMs` apart, as SNS's
 *   default HTTP policy.
 *
 * Like the real services, and never better: SNS returns no reference and has no lookup; its logs
 * are late and sampled; End User Messaging has no status API at all; a message whose TimeToLive
 * ends before hand-off is never delivered and reports TEXT_TTL_EXPIRED.
 *
 * Control API: the same as the Twilio simulator's (`/_sim/health`, `/_sim/messages`,
 * `/_sim/requests`, `/_sim/faults`, `/_sim/reset`), plus `GET /_sim/receipts` (events posted) and
 * `POST /_sim/config {events_url}`. Bodies live in memory only (a fingerprint stays); numbers too,
 * unless `ledgerFile` keeps the messages across restarts, with the number sealed. The control
 * ledger and every log line carry the destination fingerprint, never the number or the body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimulatorClock } from '../clock.js';
import {
  controlHandler,
  createKernel,
  defaultFingerprinter,
  isControlPath,
  MessageLedger,
  readBody,
  readJson,
  type SimulatorKernel,
} from '../kernel.js';
import { openSealedLedger } from '../ledger-file.js';
import { AwsFaultSchedule, parseAwsFaultPlans } from './faults.js';
import { handleEum, handleLogs, handleSns } from './protocols.js';
import { AWS_LEDGER_FORMAT, type AwsMessage, type AwsState, ledgerEntry, replayDueEvents } from './state.js';
import { LOOPBACK_HOST, MAX_REQUEST_BYTES, send, sendJson } from './wire.js';

export { parsePattern } from './wire.js';

/** Options of {@link startAwsSimulator}. */
export interface AwsSimulatorOptions {
  readonly port?: number;
  readonly host?: string;
  /** Acceptance to hand-off (`sent`) and to `delivered`; default 200 ms and 1000 ms. */
  readonly statusDelaysMs?: { readonly sent: number; readonly delivered: number };
  readonly fingerprint?: (value: string) => string;
  readonly log?: (line: string) => void;
  readonly region?: string;
  readonly accountId?: string;
  /** Where End User Messaging events are posted (SNS HTTP notification); none when unset. */
  readonly eventsUrl?: string;
  /** Base delay before an event is published; default 100 ms. */
  readonly eventDelayMs?: number;
  /**
   * Up to this much more delay, drawn per event: events are published in no guaranteed order (SNS
   * does not order a standard topic's notifications), so one message's TEXT_QUEUED can come after
   * its final event and an earlier attempt's events after a later attempt's. Default
   * {@link DEFAULT_EVENT_REORDER_MS}; 0 publishes in order.
   */
  readonly eventReorderMs?: number;
  /**
   * Share of events SNS delivers twice, the copy keeping the notification's `MessageId` and
   * reordered like any event (SNS delivers at least once). Default {@link DEFAULT_EVENT_DUPLICATE_SHARE}.
   */
  readonly eventDuplicateShare?: number;
  /**
   * Share of handed-off End User Messaging messages whose carrier never sends a final result: they
   * get TEXT_UNKNOWN (final) `unknownAfterMs` after the request. Default 0.
   */
  readonly carrierSilentShare?: number;
  /**
   * The carrier-result horizon: AWS's 72 hours by default. The simulator runs on real durations (a
   * message's TimeToLive is the one the request gave); a run that compresses the service's timings
   * passes the horizon compressed alike (docs/providers/aws.md#local-runs-and-the-aws-simulator).
   */
  readonly unknownAfterMs?: number;
  /**
   * Protect configuration in Monitor mode: the share of End User Messaging messages its rule would
   * have blocked. They are sent all the same, their events carry the recommendation
   * (`protectConfiguration.protectStatus: "MONITOR"`) and a final TEXT_PROTECT_BLOCKED carrying it
   * is published at acceptance (the harshest reading of the guide). Default 0 (no Monitor rule).
   */
  readonly protectMonitorShare?: number;
  /** Delay between redeliveries of an event answered 5xx or not at all; default 20 s (SNS's HTTP default). */
  readonly eventRetryDelayMs?: number;
  /** Delivery-status log lag after the outcome; default 2000 ms. */
  readonly logLagMs?: number;
  /** DeliveryStatusSuccessSamplingRate as a fraction; default 1 (100 %). */
  readonly logSuccessSamplingRate?: number;
  readonly random?: () => number;
  /** When given, a `SendTextMessage` naming another configuration set gets ResourceNotFoundException. */
  readonly configurationSets?: readonly string[];
  /**
   * Time of the status schedule, the event and retry timers, the log lag and every timestamp;
   * default the real clock. Tests pass a manual one (test/support/manual-clock.ts).
   */
  readonly clock?: SimulatorClock;
  /**
   * Keep accepted messages in this JSONL file across restarts, as SNS (its delivery-status logs)
   * and End User Messaging (its events still due) keep them. Numbers are written only sealed
   * (../ledger-file.ts); bodies are never kept at all (only their fingerprint).
   */
  readonly ledgerFile?: string;
  /** Key material the ledger's seal is derived from (the local stack's data key); see ../ledger-file.ts. */
  readonly ledgerKey?: Uint8Array;
}

/** A started simulator. */
export interface RunningAwsSimulator {
  readonly url: string;
  readonly port: number;
  readonly eventsTopicArn: string;
  readonly logGroups: { readonly success: string; readonly failure: string };
  /** Points event publication at the receipts path once it is known. */
  setEventsUrl(url: string | undefined): void;
  /** Resolves once the simulator accepts connections: at once, unless a `down` fault is on. */
  whenUp(): Promise<void>;
  stop(): Promise<void>;
}

export const DEFAULT_AWS_STATUS_DELAYS = { sent: 200, delivered: 1000 } as const;
/**
 * SNS does not order a standard topic's notifications: by default each event is published up to
 * this much later than its due time, enough to swap a message's own events (200 ms and 1 s apart
 * by default) and those of consecutive attempts.
 */
export const DEFAULT_EVENT_REORDER_MS = 1_500;
/** SNS delivers at least once: by default 1 event in 100 is delivered twice. */
export const DEFAULT_EVENT_DUPLICATE_SHARE = 0.01;
/** "After 72 hours ... the service will automatically return an UNKNOWN messageStatus." */
export const CARRIER_RESULT_HORIZON_MS = 72 * 3_600_000;

/** The simulator's state from its options: the ledger reloaded from its file when one is kept. */
function stateFrom(options: AwsSimulatorOptions, kernel: SimulatorKernel): AwsState {
  const region = options.region ?? 'us-east-1';
  const account = options.accountId ?? '000000000000';
  const random = options.random ?? Math.random;
  const successGroup = `sns/${region}/${account}/DirectPublishToPhoneNumber`;
  const file = options.ledgerFile
    ? openSealedLedger(options.ledgerFile, AWS_LEDGER_FORMAT, options.ledgerKey)
    : undefined;
  return {
    kernel,
    ledger: new MessageLedger<AwsMessage>((m) => m.id, file),
    faults: new AwsFaultSchedule(random),
    requests: [],
    receipts: [],
    oracle: new Map(),
    oracleRequests: new Map(),
    fingerprint: options.fingerprint ?? defaultFingerprinter(),
    random,
    delays: options.statusDelaysMs ?? DEFAULT_AWS_STATUS_DELAYS,
    eventsTopicArn: `arn:aws:sns:${region}:${account}:reset-notifier-eum-events`,
    successGroup,
    failureGroup: `${successGroup}/Failure`,
    logLagMs: options.logLagMs ?? 2_000,
    samplingRate: options.logSuccessSamplingRate ?? 1,
    eventDelayMs: options.eventDelayMs ?? 100,
    eventReorderMs: options.eventReorderMs ?? DEFAULT_EVENT_REORDER_MS,
    eventDuplicateShare: options.eventDuplicateShare ?? DEFAULT_EVENT_DUPLICATE_SHARE,
    carrierSilentShare: options.carrierSilentShare ?? 0,
    unknownAfterMs: options.unknownAfterMs ?? CARRIER_RESULT_HORIZON_MS,
    protectMonitorShare: options.protectMonitorShare ?? 0,
    eventRetryDelayMs: options.eventRetryDelayMs ?? 20_000,
    configurationSets: options.configurationSets,
    eventsUrl: options.eventsUrl,
  };
}

/** `POST /_sim/config {events_url}`. */
async function configure(sim: AwsState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const input = (await readJson(req, MAX_REQUEST_BYTES)) as { events_url?: unknown } | undefined;
  if (input === undefined)
    return sendJson(res, 400, { code: 'invalid_config', message: 'body must be JSON' });
  if (input.events_url !== undefined && typeof input.events_url !== 'string') {
    return sendJson(res, 400, { code: 'invalid_config', message: 'events_url must be a string' });
  }
  sim.eventsUrl = input.events_url;
  return sendJson(res, 200, { events_url: sim.eventsUrl ?? null });
}

/** `POST /_sim/oracle {entries: [{secret, key}]}`: the chaos runs' SNS attribution (./state.ts). */
async function registerOracle(sim: AwsState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const input = (await readJson(req, MAX_REQUEST_BYTES)) as { entries?: unknown } | undefined;
  if (input === undefined)
    return sendJson(res, 400, { code: 'invalid_oracle', message: 'body must be JSON' });
  if (!Array.isArray(input.entries))
    return sendJson(res, 400, { code: 'invalid_oracle', message: 'entries[]' });
  for (const entry of input.entries as { secret?: unknown; key?: unknown }[]) {
    if (typeof entry.secret === 'string' && typeof entry.key === 'string')
      sim.oracle.set(entry.secret, entry.key);
  }
  return sendJson(res, 200, { entries: sim.oracle.size });
}

/** The control API: the kernel's, plus the ledger view, the events posted, configuration and the oracle. */
function awsControl(sim: AwsState) {
  const receipts = (_req: IncomingMessage, res: ServerResponse) =>
    sendJson(res, 200, { receipts: sim.receipts });
  return controlHandler(sim.kernel, {
    reply: (res, status, body) => sendJson(res, status, body),
    faults: sim.faults,
    lasts: (plan) => plan.delayMs,
    parsePlans: parseAwsFaultPlans,
    messageCount: () => sim.ledger.all.length,
    requests: sim.requests,
    maxBodyBytes: MAX_REQUEST_BYTES,
    routes: {
      'GET /_sim/messages': (_req, res, url) => {
        const now = sim.kernel.clock.now();
        const ref = url.searchParams.get('client_reference');
        const list = ref === null ? sim.ledger.all : sim.ledger.all.filter((m) => m.clientReference === ref);
        sendJson(res, 200, { messages: list.map((m) => ledgerEntry(m, now)) });
      },
      'GET /_sim/receipts': receipts,
      'GET /_sim/callbacks': receipts,
      'POST /_sim/config': (req, res) => configure(sim, req, res),
      'POST /_sim/oracle': (req, res) => registerOracle(sim, req, res),
    },
    reset: () => {
      sim.ledger.clear();
      sim.oracle.clear();
      sim.oracleRequests.clear();
      sim.requests.length = 0;
      sim.receipts.length = 0;
    },
  });
}

/**
 * Starts the AWS simulator on loopback. See the module comment for the protocols; faults follow
 * docs/design.md#local-stack (`fail_not_sent`: accepted, then never handed off: an SNS FAILURE line, an
 * End User Messaging TEXT_TTL_EXPIRED event).
 */
export async function startAwsSimulator(options: AwsSimulatorOptions = {}): Promise<RunningAwsSimulator> {
  const kernel = createKernel((line) => options.log?.(`[aws-sim] ${line}`), options.clock);
  const sim = stateFrom(options, kernel);
  replayDueEvents(sim);
  const control = awsControl(sim);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // Loopback only, by address (the listener) and by name (DNS rebinding): docs/design.md#local-stack.
    if (!LOOPBACK_HOST.test(req.headers.host ?? '')) {
      return sendJson(res, 403, { code: 'forbidden', message: 'loopback Host only' });
    }
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    if (isControlPath(url.pathname)) return control(req, res, url);
    if (sim.faults.takeHang()) return kernel.hold(res, `${req.method} ${url.pathname} (hang)`);
    const raw = await readBody(req, MAX_REQUEST_BYTES);
    if (raw === null) return send(res, 413, 'text/plain', 'request too large', { connection: 'close' });
    const target = String(req.headers['x-amz-target'] ?? '');
    const [service, operation = ''] = target.split('.');
    if (service === 'PinpointSMSVoiceV2') return handleEum(sim, req, res, operation, raw);
    if (service === 'Logs_20140328') return handleLogs(sim, res, operation, raw);
    if (req.method === 'POST' && target === '') return handleSns(sim, req, res, raw);
    return sendJson(res, 404, { code: 'not_found', message: 'unknown protocol' });
  };
  const { url, port } = await kernel.listen(
    handle,
    (res) => send(res, 500, 'text/plain', 'internal error'),
    options.port ?? 0,
    options.host ?? '127.0.0.1',
  );
  return {
    url,
    port,
    eventsTopicArn: sim.eventsTopicArn,
    logGroups: { success: sim.successGroup, failure: sim.failureGroup },
    setEventsUrl(next) {
      sim.eventsUrl = next;
    },
    whenUp: () => kernel.whenUp(),
    stop: () => kernel.stop(),
  };
}
