/**
 * Provider simulator: a real HTTP server speaking the subset of Twilio's Messages API the service
 * uses, as Twilio documents it (OpenAPI: ../shared/reference/twilio/), with a ledger of accepted
 * messages and fault injection (docs/design.md#local-stack). It must never be better than Twilio.
 *
 * Messages API (Basic auth: the account sid and the simulator's auth token; else 401, code 20003):
 * - `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` (form: To, From and/or
 *   MessagingServiceSid, Body, ValidityPeriod, StatusCallback) -> 201 Message | 400/401/429/5xx
 *   with Twilio's error shape `{code, message, more_info, status}`.
 *   With `MessagingServiceSid`, `ScheduleType=fixed` and `SendAt` (UTC ISO 8601, 15 minutes to 7
 *   days ahead; else 35126, 35111 or 35114) the message is `scheduled` (no `date_sent`, listed
 *   like any other) until `SendAt`, then runs its timeline; without a messaging service the
 *   schedule is dropped and the message sent at once, as Twilio documents.
 * - `GET  .../Messages/{Sid}.json` -> 200 Message | 404 (20404).
 * - `POST .../Messages/{Sid}.json` with `Body=""` -> 200 Message with the body redacted (Twilio's
 *   only body update); with `Status=canceled` -> 200 `canceled` for a `scheduled` message (never
 *   sent then), else 30409; `DELETE .../Messages/{Sid}.json` -> 204 (gone from reads; the ledger keeps it).
 * - `GET  .../Messages.json?To=&From=&DateSent=&DateSent<=&DateSent>=&PageSize=&Page=&PageToken=`
 *   -> Twilio's list page, newest `date_sent` first (unsent messages first; `listOrder`), keyset
 *   pagination through `next_page_uri`. `DateSent`
 *   filters are whole GMT days (`YYYY-MM-DD`; a date-time counts as its day), inclusive, on
 *   `date_sent`, which is null until the message is sent, so queued messages never match them.
 *
 * Behaviour worth knowing:
 * - A Message carries exactly the properties of Twilio's Message schema: no callback URL, no
 *   reference. `extensions: true` adds `status_callback` (NOT Twilio; for old tools only).
 * - Status is computed lazily from the acceptance time: `queued` (`accepted` for a messaging
 *   service, whose `from` is null until the pool assigns one), then `sent`, then `delivered`.
 *   When the ValidityPeriod ends before the send time, the message becomes `failed` with error
 *   30036 at the end of the validity, and is never sent, as Twilio does.
 * - Status callbacks (sent, delivered, failed) are POSTed form-encoded (AccountSid, ApiVersion,
 *   From, To, MessageSid, MessageStatus, SmsSid, SmsStatus, MessagingServiceSid?, ErrorCode?) with
 *   `X-Twilio-Signature` (HMAC-SHA1 of the full URL and the sorted parameters, keyed with the auth
 *   token) and `I-Twilio-Idempotency-Token` (the same for a re-delivery). Best effort, never failing
 *   the simulator. The simulator accepts callbacks itself at `POST /_callbacks/status` (listed,
 *   without numbers, at `/_sim/callbacks`).
 * - Message Redaction (the `redaction` fault) is applied when a message is stored: reads show the
 *   numbers' last 4 digits as XXXX and a blank body, and a `To` filter no longer matches it.
 * - Twilio's magic test destinations are rejected with their documented codes: +15005550001
 *   (21211), +15005550002 (21612), +15005550003 (21408), +15005550004 (21610), +15005550009 (21614).
 *
 * Control API (provider-neutral): see {@link startSimulator}. Send faults apply to well-formed,
 * authenticated sends (an invalid send gets its 400 and consumes nothing), except `hang`, which
 * holds every Messages API request (sends and lookups) before authentication and counts every
 * request it holds. Message faults apply to each accepted message (see ./faults.ts).
 * Other protocols (e.g. AWS) mount in front of the Twilio routes through `handlers`.
 *
 * Privacy: log lines carry only sids, client references and codes; the ledger carries a
 * destination fingerprint, never the number or the body.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { loopbackOnly, refuseForeignHost } from '../runtime/loopback.js';
import type { SimulatorClock } from './clock.js';
import { FaultSchedule, parseFaultPlans } from './faults.js';
import {
  controlHandler,
  createKernel,
  defaultFingerprinter,
  isControlPath,
  MessageLedger,
  type SimulatorKernel,
} from './kernel.js';
import { openLedgerFile } from './ledger-file.js';
import { type StatusDelays, type StoredMessage, toLedgerEntry } from './messages.js';
import { handleCallbackSink, handleMessagesApi, scheduleCallbacks, type TwilioState } from './twilio-api.js';
import { MAX_REQUEST_BYTES, MESSAGES_ROUTE, sendJson, twilioError } from './twilio-wire.js';

export { twilioSignature } from './twilio-wire.js';

/** Options of {@link startSimulator}. */
export interface SimulatorOptions {
  /** TCP port; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  readonly host?: string;
  /** Delays from acceptance to `sent` and to `delivered`; default 200 ms and 1000 ms. */
  readonly statusDelaysMs?: { readonly sent: number; readonly delivered: number };
  /** Destination fingerprint for the ledger; default a keyed SHA-256 placeholder (`sim1:...`). */
  readonly fingerprint?: (e164: string) => string;
  /** Receives one line per notable event; lines never carry a number or a body. */
  readonly log?: (line: string) => void;
  /**
   * Keep accepted messages in this JSONL file across restarts, as a real provider would (without
   * it, a restarted stack with a kept table could conclude "absent" for a message that exists):
   * every property a read shows, bodies and numbers included, and callbacks still due are posted
   * after the restart. Numbers and bodies are personal data and the secret: they are written only
   * sealed (AES-256-GCM under `ledgerKey`; ./ledger-file.ts), never in clear.
   */
  readonly ledgerFile?: string;
  /**
   * Key material (32 bytes or more) the ledger file's seal is derived from: the local stack's data
   * key. Without it, a random key kept next to the file (`<ledgerFile>.key`, mode 0600).
   */
  readonly ledgerKey?: Uint8Array;
  /** The auth token every Messages API request must carry; default {@link DEFAULT_AUTH_TOKEN}. */
  readonly authToken?: string;
  /** Adds the non-Twilio `status_callback` property to Message resources. Default false. */
  readonly extensions?: boolean;
  /**
   * Request handlers tried, in order, before the Twilio routes (after the control API): a second
   * protocol (e.g. AWS) mounts here. A handler returns true when it answered the request.
   */
  readonly handlers?: readonly SimulatorHandler[];
  /** Random source of the fault probabilities; default Math.random. */
  readonly random?: () => number;
  /**
   * Time of the status schedule, the callbacks' timers, `list_lag`, `DateSent` and every
   * timestamp; default the real clock. Tests pass a manual one (test/support/manual-clock.ts).
   */
  readonly clock?: SimulatorClock;
  /**
   * How list reads are ordered, newest first. `date_sent` (the default): by `date_sent`, messages
   * not sent yet (no `date_sent`) first; this is how Twilio documents its Message list (sorted by
   * DateSent, most recent first), and it is the harder order for a reader, since a message created
   * long ago but queued until now lists before newer ones. `date_created`: by creation.
   */
  readonly listOrder?: 'date_sent' | 'date_created';
}

/** What a mounted protocol handler may use: the shared fault plans, the log and the ledger. */
export interface SimulatorContext {
  readonly faults: FaultSchedule;
  readonly log: (line: string) => void;
  readonly fingerprint: (e164: string) => string;
  /** Adds an entry to the provider-neutral ledger (`GET /_sim/messages`); never a number or a body. */
  readonly addLedgerEntry: (entry: Readonly<Record<string, unknown>>) => void;
  /** Called on `POST /_sim/reset`. */
  readonly onReset: (listener: () => void) => void;
}

/** A request handler mounted before the Twilio routes; true = it answered. */
export type SimulatorHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  context: SimulatorContext,
) => boolean | Promise<boolean>;

/** A started simulator. */
export interface RunningSimulator {
  /** Base URL, e.g. `http://127.0.0.1:4010`. */
  readonly url: string;
  readonly port: number;
  /** Closes the listener and destroys every open socket, held requests included. Idempotent. */
  stop(): Promise<void>;
  /** Mounts one more handler before the Twilio routes (after those given in the options). */
  use(handler: SimulatorHandler): void;
  /** Resolves once the simulator accepts connections: at once, unless a `down` fault is on. */
  whenUp(): Promise<void>;
}

export const DEFAULT_STATUS_DELAYS: StatusDelays = { sent: 200, delivered: 1000 };
/** The default auth token: the local configuration's default `PROVIDER_AUTH_TOKEN`. */
export const DEFAULT_AUTH_TOKEN = 'simulator-token';
/** Where the simulator accepts status callbacks addressed to itself. */
export const CALLBACK_SINK_PATH = '/_callbacks/status';

/** The simulator's state from its options: the ledger reloaded from its file when one is kept. */
function stateFrom(options: SimulatorOptions, kernel: SimulatorKernel): TwilioState {
  // Written on every change of a message (accepted, redacted, canceled, deleted): the last line wins.
  const file = options.ledgerFile ? openLedgerFile(options.ledgerFile, options.ledgerKey) : undefined;
  const ledger = new MessageLedger<StoredMessage>((m) => m.sid, file);
  return {
    kernel,
    ledger,
    faults: new FaultSchedule(options.random),
    requests: [],
    callbacks: [],
    fingerprint: options.fingerprint ?? defaultFingerprinter(),
    authToken: options.authToken ?? DEFAULT_AUTH_TOKEN,
    extensions: options.extensions === true,
    delays: options.statusDelaysMs ?? DEFAULT_STATUS_DELAYS,
    listOrder: options.listOrder ?? 'date_sent',
    seq: ledger.reloaded.reduce((max, m) => Math.max(max, m.seq), 0),
  };
}

/** The control API: the kernel's, plus the ledger view (with mounted protocols' entries) and the callback sink's list. */
function twilioControl(
  sim: TwilioState,
  externalLedger: Readonly<Record<string, unknown>>[],
  onReset: () => void,
) {
  const reply = (res: ServerResponse, status: number, body: unknown) => sendJson(res, status, body);
  return controlHandler(sim.kernel, {
    reply,
    faults: sim.faults,
    lasts: (plan) => plan.ms,
    parsePlans: parseFaultPlans,
    messageCount: () => sim.ledger.all.length,
    requests: sim.requests,
    maxBodyBytes: MAX_REQUEST_BYTES,
    routes: {
      'GET /_sim/messages': (_req, res, url) => {
        const now = sim.kernel.clock.now();
        const ref = url.searchParams.get('client_reference');
        const list = ref === null ? sim.ledger.all : sim.ledger.all.filter((m) => m.clientReference === ref);
        const external =
          ref === null ? externalLedger : externalLedger.filter((e) => e.client_reference === ref);
        reply(res, 200, { messages: [...list.map((m) => toLedgerEntry(m, now)), ...external] });
      },
      'GET /_sim/callbacks': (_req, res) => reply(res, 200, { callbacks: sim.callbacks }),
    },
    reset: () => {
      sim.ledger.clear();
      sim.requests.length = 0;
      sim.callbacks.length = 0;
      externalLedger.length = 0;
      onReset();
    },
  });
}

/**
 * Starts the simulator. Control API (JSON, provider-neutral):
 * - `GET /_sim/health`; `GET /_sim/messages[?client_reference=]` -> `{messages: [{id, client_reference,
 *   destination_fingerprint, accepted_at, status, error_code, validity_period_seconds, account_sid,
 *   messaging_service_sid, redacted, deleted, receipts}]}` (the ledger: every accepted message, deleted
 *   ones included, since they were sent all the same);
 * - `GET /_sim/requests` -> `{requests: [{received_at, client_reference, fault, outcome, message_id, http_status}]}`
 *   (every send request, in arrival order);
 * - `GET /_sim/callbacks`; `GET|POST|DELETE /_sim/faults` (POST takes `{mode, count?, probability?,
 *   retry_after_seconds?, ms?, error_code?}` or an array of them, replacing the current plans;
 *   `{mode: 'down', ms}` refuses every connection, this API's included, for `ms`, and
 *   `{mode: 'brownout', probability?, ms}` accepts that share of sends and never answers them,
 *   for `ms`: both end on their own);
 *   `POST /_sim/reset` (clears ledger, requests, callbacks, faults and pending callbacks; held
 *   requests stay held).
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const host = loopbackOnly(options.host);
  const kernel = createKernel((line) => options.log?.(`[sim] ${line}`), options.clock);
  const sim = stateFrom(options, kernel);
  // After a restart, the callbacks still due are posted as Twilio would; those that fell due while
  // the simulator was down went to a service that was down with it, and are not replayed.
  const restartedAt = kernel.clock.now();
  for (const message of sim.ledger.reloaded) scheduleCallbacks(sim, message, restartedAt);

  const externalLedger: Readonly<Record<string, unknown>>[] = [];
  const resetListeners: Array<() => void> = [];
  const context: SimulatorContext = {
    faults: sim.faults,
    log: kernel.log,
    fingerprint: sim.fingerprint,
    addLedgerEntry: (entry) => externalLedger.push(entry),
    onReset: (listener) => resetListeners.push(listener),
  };
  const handlers: SimulatorHandler[] = [...(options.handlers ?? [])];
  const control = twilioControl(sim, externalLedger, () => {
    for (const listener of resetListeners) listener();
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (refuseForeignHost(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    if (isControlPath(url.pathname)) return control(req, res, url);
    for (const handler of handlers) if (await handler(req, res, url, context)) return;
    if (url.pathname === CALLBACK_SINK_PATH) return handleCallbackSink(sim, req, res, url);
    const route = MESSAGES_ROUTE.exec(url.pathname);
    if (route === null) return twilioError(res, 404, [20404, 'The requested resource was not found']);
    return handleMessagesApi(sim, req, res, url, route);
  };
  // A client that vanished mid-request, or a bug: answer if still possible, never crash.
  const { url, port } = await kernel.listen(
    handle,
    (res) => sendJson(res, 500, { code: 20500, message: 'Internal Server Error', status: 500 }),
    options.port ?? 0,
    host,
  );
  return {
    url,
    port,
    use(handler) {
      handlers.push(handler);
    },
    whenUp: () => kernel.whenUp(),
    stop: () => kernel.stop(),
  };
}
