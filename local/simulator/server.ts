/**
 * Provider simulator: a real HTTP server speaking the subset of Twilio's Messages API the service
 * uses, as Twilio documents it (OpenAPI: ../shared/reference/twilio/), with a ledger of accepted
 * messages and fault injection (DESIGN.md section 8). It must never be better than Twilio.
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

import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loopbackOnly, refuseForeignHost } from '../runtime/loopback.js';
import { realClock, type SimulatorClock } from './clock.js';
import { type FaultMode, FaultSchedule, parseFaultPlans } from './faults.js';
import { openLedgerFile } from './ledger-file.js';
import {
  API_VERSION,
  maskNumber,
  POOL_SENDER,
  type ReceiptFault,
  type StatusDelays,
  type StatusEvent,
  type StoredMessage,
  segmentCount,
  stateAt,
  timelineFor,
  toLedgerEntry,
  toTwilioJson,
} from './messages.js';

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
}

/** One send request as `/_sim/requests` lists it. */
interface RequestRecord {
  received_at: string;
  client_reference: string | null;
  fault: FaultMode | null;
  outcome: 'recorded' | 'not_recorded';
  message_id: string | null;
  /** null while (or when) the request was never answered. */
  http_status: number | null;
}

/** One status callback received at the simulator's own sink. */
interface CallbackRecord {
  readonly received_at: string;
  readonly client_reference: string | null;
  readonly query: string;
  /** The posted parameters without To, From and Body (personal data). */
  readonly params: Record<string, string>;
  readonly signature: string | null;
  /** Whether `X-Twilio-Signature` verifies with the simulator's auth token over the URL as received. */
  readonly signature_valid: boolean;
  readonly idempotency_token: string | null;
}

export const DEFAULT_STATUS_DELAYS: StatusDelays = { sent: 200, delivered: 1000 };
/** The default auth token: the local configuration's default `PROVIDER_AUTH_TOKEN`. */
export const DEFAULT_AUTH_TOKEN = 'simulator-token';
/** Where the simulator accepts status callbacks addressed to itself. */
export const CALLBACK_SINK_PATH = '/_callbacks/status';

const MAX_REQUEST_BYTES = 64 * 1024;
const MAX_BODY_CHARS = 1600;
const MAX_VALIDITY_SECONDS = 36_000;
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;
const DAY_MS = 86_400_000;
const CALLBACK_TIMEOUT_MS = 5_000;
/**
 * Message Scheduling's window: Twilio must receive the create request at least 15 minutes before
 * `SendAt` (error 35114) and at most 35 days before it (the scheduling page), 7 days in its FAQ:
 * the narrower of the documented windows, never kinder.
 */
const SCHEDULE_MIN_LEAD_MS = 15 * 60_000;
const SCHEDULE_MAX_LEAD_MS = 7 * DAY_MS;
const E164 = /^\+[1-9]\d{6,14}$/;
const MESSAGES_ROUTE = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages(?:\/([^/]+))?\.json$/;

/** Twilio's magic test destinations and the errors they produce. */
const MAGIC_DESTINATIONS: Readonly<Record<string, readonly [number, string]>> = {
  '+15005550001': [21211, "The 'To' number is not a valid phone number."],
  '+15005550002': [21612, "The 'To' phone number is not currently reachable via SMS."],
  '+15005550003': [
    21408,
    'Permission to send an SMS has not been enabled for the region indicated by the To number.',
  ],
  '+15005550004': [21610, 'Attempt to send to unsubscribed recipient.'],
  '+15005550009': [21614, "'To' number is not a valid mobile number."],
};

type TwilioErrorSpec = readonly [code: number, message: string];

function defaultFingerprinter(): (e164: string) => string {
  // Keyed per simulator run: correlates within a run, cannot be reversed by hashing every number.
  const key = randomBytes(32);
  return (e164) => `sim1:${createHmac('sha256', key).update(e164).digest('hex').slice(0, 32)}`;
}

/** Twilio's request signature: HMAC-SHA1(token, url + sorted key/value pairs), base64. */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const pairs = [...params.entries()].sort(([a, av], [b, bv]) =>
    a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1,
  );
  const data = url + pairs.map(([k, v]) => k + v).join('');
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** `client_reference` from a StatusCallback URL's query, or null. */
function referenceFrom(callback: string | null): string | null {
  if (callback === null) return null;
  try {
    return new URL(callback).searchParams.get('client_reference');
  } catch {
    return null;
  }
}

function credentials(req: IncomingMessage): { sid: string; token: string } | null {
  const header = req.headers.authorization;
  if (header === undefined || !/^Basic\s+/i.test(header)) return null;
  const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) return null;
  return { sid: decoded.slice(0, colon), token: decoded.slice(colon + 1) };
}

function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_REQUEST_BYTES) return null;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

function twilioError(
  res: ServerResponse,
  status: number,
  [code, message]: TwilioErrorSpec,
  headers: Record<string, string> = {},
): void {
  sendJson(
    res,
    status,
    { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
    headers,
  );
}

/**
 * `SendAt` of a message to schedule, or undefined for an immediate send. Twilio schedules only
 * with a messaging service: without `MessagingServiceSid` it drops `ScheduleType`/`SendAt` and
 * sends at once (Message Scheduling FAQ), and so does the simulator. `SendAt` without
 * `ScheduleType` is likewise not a schedule. A malformed schedule is an error (35126, 35111, 35114).
 */
function scheduleOf(form: URLSearchParams, now: number): { sendAt?: number } | TwilioErrorSpec {
  const service = form.get('MessagingServiceSid');
  const type = form.get('ScheduleType');
  if (service === null || service === '' || type === null) return {};
  if (type !== 'fixed') return [35126, 'The ScheduleType value provided is not supported for this channel'];
  const raw = form.get('SendAt');
  if (raw === null || raw === '') return [35111, 'SendAt timestamp is missing'];
  // ISO 8601 in UTC, as Twilio documents it (`2021-11-30T20:36:27Z`).
  const sendAt = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(sendAt) || sendAt - now < SCHEDULE_MIN_LEAD_MS || sendAt - now > SCHEDULE_MAX_LEAD_MS)
    return [35114, 'Scheduling does not support this timestamp'];
  return { sendAt };
}

/** Twilio-style validation of a create-message form. */
function validateSend(form: URLSearchParams, now: number): TwilioErrorSpec | null {
  const to = form.get('To');
  const body = form.get('Body');
  if (to === null || to === '') return [21604, "A 'To' phone number is required."];
  const service = form.get('MessagingServiceSid');
  if ((form.get('From') ?? '') === '' && (service ?? '') === '')
    return [21603, "A 'From' phone number is required."];
  if (service !== null && service !== '' && !/^MG[0-9a-fA-F]{32}$/.test(service))
    return [21701, 'The Messaging Service Sid is invalid.'];
  if (body === null || body === '') return [21602, 'Message body is required.'];
  // Deliberately does not echo the number (Twilio does; our logs must not see it).
  if (!E164.test(to)) return [21211, "The 'To' number is not a valid phone number."];
  if ([...body].length > MAX_BODY_CHARS)
    return [21617, 'The concatenated message body exceeds the 1600 character limit.'];
  const validity = form.get('ValidityPeriod');
  if (
    validity !== null &&
    !(/^\d{1,6}$/.test(validity) && Number(validity) >= 1 && Number(validity) <= MAX_VALIDITY_SECONDS)
  ) {
    return [21624, 'Invalid validity period value'];
  }
  const callback = form.get('StatusCallback');
  if (callback !== null) {
    let ok = false;
    try {
      const parsed = new URL(callback);
      ok = parsed.protocol === 'http:' || parsed.protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) return [21609, 'Invalid StatusCallback URL'];
  }
  const schedule = scheduleOf(form, now);
  if (Array.isArray(schedule)) return schedule as TwilioErrorSpec;
  return MAGIC_DESTINATIONS[to] ?? null;
}

/**
 * A `DateSent` value as the whole GMT day it names: `YYYY-MM-DD`, or a date-time (ISO 8601 as the
 * twilio client sends it, or RFC 2822), of which only the day counts (Twilio filters by date).
 */
function parseDay(value: string): { from: number; to: number } | null {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Date.parse(value);
  if (Number.isNaN(day)) return null;
  const start = Math.floor(day / DAY_MS) * DAY_MS;
  return { from: start, to: start + DAY_MS };
}

const LIST_FILTERS = ['To', 'From', 'DateSent', 'DateSent>', 'DateSent<'] as const;

/** Newest created first. */
const byCreation = (a: StoredMessage, b: StoredMessage) => b.seq - a.seq;

/** Newest `date_sent` first, messages not sent yet before all others; ties newest created first. */
const bySendTime = (now: number) => {
  const memo = new Map<StoredMessage, number>();
  const sentAt = (m: StoredMessage) => {
    let at = memo.get(m);
    if (at === undefined) {
      at = stateAt(m, now).sentAt ?? Number.POSITIVE_INFINITY;
      memo.set(m, at);
    }
    return at;
  };
  return (a: StoredMessage, b: StoredMessage) => {
    const x = sentAt(a);
    const y = sentAt(b);
    return x === y ? b.seq - a.seq : y > x ? 1 : -1;
  };
};

/** Twilio's 401: missing or wrong credentials. */
const AUTHENTICATE: TwilioErrorSpec = [20003, 'Authenticate'];

/**
 * Starts the simulator. Control API (JSON, provider-neutral):
 * - `GET /_sim/health`; `GET /_sim/messages[?client_reference=]` -> `{messages: [{id, client_reference,
 *   destination_fingerprint, accepted_at, status, error_code, validity_period_seconds, account_sid,
 *   messaging_service_sid, redacted, deleted, receipts}]}` (the ledger: every accepted message, deleted
 *   ones included, since they were sent all the same);
 * - `GET /_sim/requests` -> `{requests: [{received_at, client_reference, fault, outcome, message_id, http_status}]}`
 *   (every send request, in arrival order);
 * - `GET /_sim/callbacks`; `GET|POST|DELETE /_sim/faults` (POST takes `{mode, count?, probability?,
 *   retry_after_seconds?, ms?, error_code?}` or an array of them, replacing the current plans);
 *   `POST /_sim/reset` (clears ledger, requests, callbacks, faults and pending callbacks; held
 *   requests stay held).
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const listOrder = options.listOrder ?? 'date_sent';
  const host = loopbackOnly(options.host);
  const delays = options.statusDelaysMs ?? DEFAULT_STATUS_DELAYS;
  const fingerprint = options.fingerprint ?? defaultFingerprinter();
  const authToken = options.authToken ?? DEFAULT_AUTH_TOKEN;
  const extensions = options.extensions === true;
  const log = (line: string) => options.log?.(`[sim] ${line}`);
  const clock = options.clock ?? realClock;
  const isoNow = () => new Date(clock.now()).toISOString();

  const messages: StoredMessage[] = [];
  const bySid = new Map<string, StoredMessage>();
  const requests: RequestRecord[] = [];
  const callbacks: CallbackRecord[] = [];
  const externalLedger: Readonly<Record<string, unknown>>[] = [];
  const resetListeners: Array<() => void> = [];
  const faults = new FaultSchedule(options.random);
  /** Cancels the pending callback timers. */
  const timers = new Set<() => void>();
  const held = new Set<ServerResponse>();
  const stopping = new AbortController();
  let seq = 0;
  // Written on every change of a message (accepted, redacted, canceled, deleted): the last line wins.
  const ledger = options.ledgerFile ? openLedgerFile(options.ledgerFile, options.ledgerKey) : undefined;
  const reloaded = ledger?.load() ?? [];
  for (const message of reloaded) {
    messages.push(message);
    bySid.set(message.sid, message);
    seq = Math.max(seq, message.seq);
  }
  const persist = (message: StoredMessage) => ledger?.append(message);
  const context: SimulatorContext = {
    faults,
    log,
    fingerprint,
    addLedgerEntry: (entry) => externalLedger.push(entry),
    onReset: (listener) => resetListeners.push(listener),
  };
  const handlers: SimulatorHandler[] = [...(options.handlers ?? [])];

  const hold = (res: ServerResponse, what: string) => {
    // Never answered: the socket stays open until the client gives up or stop() destroys it.
    held.add(res);
    res.on('close', () => held.delete(res));
    log(`holding ${what}`);
  };

  const authorised = (req: IncomingMessage, accountSid: string): boolean => {
    const auth = credentials(req);
    return auth !== null && auth.sid === accountSid && auth.token === authToken;
  };

  const postCallback = async (message: StoredMessage, event: StatusEvent, token: string) => {
    const url = message.statusCallback;
    if (url === null) return;
    const redacted = message.redacted === true;
    const from = message.from !== '' ? message.from : POOL_SENDER;
    const params = new URLSearchParams({
      AccountSid: message.accountSid,
      ApiVersion: API_VERSION,
      From: redacted ? maskNumber(from) : from,
      MessageSid: message.sid,
      MessageStatus: event.status,
      SmsSid: message.sid,
      SmsStatus: event.status,
      To: redacted ? maskNumber(message.to) : message.to,
    });
    if (message.messagingServiceSid) params.set('MessagingServiceSid', message.messagingServiceSid);
    if (event.errorCode !== null) params.set('ErrorCode', String(event.errorCode));
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilioSignature(authToken, url, params),
          'i-twilio-idempotency-token': token,
        },
        body: params.toString(),
        signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(CALLBACK_TIMEOUT_MS)]),
        redirect: 'manual',
      });
      await response.arrayBuffer().catch(() => undefined);
      log(`callback sid=${message.sid} status=${event.status} http=${response.status}`);
    } catch {
      log(`callback failed sid=${message.sid} status=${event.status}`);
    }
  };

  /** Posts the message's status callbacks at their times; events before `from` are not posted. */
  const scheduleCallbacks = (message: StoredMessage, from = Number.NEGATIVE_INFINITY) => {
    if (message.statusCallback === null || message.receiptFault === 'lost') return;
    const copies = message.receiptFault === 'duplicated' ? 2 : 1;
    for (const event of message.timeline) {
      if (event.at < from) continue;
      // One token per event: a re-delivery of the same event carries the same token.
      const token = `${message.sid}-${event.status}-${randomBytes(6).toString('hex')}`;
      for (let copy = 0; copy < copies; copy += 1) {
        const cancel = clock.setTimer(
          () => {
            timers.delete(cancel);
            // A canceled scheduled message never runs its timeline.
            if (message.canceledAt !== undefined) return;
            void postCallback(message, event, token);
          },
          Math.max(0, event.at + (message.receiptDelayMs ?? 0) + copy * 50 - clock.now()),
        );
        timers.add(cancel);
      }
    }
  };

  // After a restart, the callbacks still due are posted as Twilio would; those that fell due while
  // the simulator was down went to a service that was down with it, and are not replayed.
  const restartedAt = clock.now();
  for (const message of reloaded) scheduleCallbacks(message, restartedAt);

  const accept = (accountSid: string, form: URLSearchParams): StoredMessage => {
    const acceptedAt = clock.now();
    const to = form.get('To') ?? '';
    const body = form.get('Body') ?? '';
    const validity = Number(form.get('ValidityPeriod') ?? MAX_VALIDITY_SECONDS);
    const statusCallback = form.get('StatusCallback');
    const service = form.get('MessagingServiceSid');
    // Validated before: a schedule here is well-formed (or absent: sent at once).
    const schedule = scheduleOf(form, acceptedAt);
    const sendAt = Array.isArray(schedule) ? undefined : (schedule as { sendAt?: number }).sendAt;
    const fired = faults.takeForMessage();
    const receiptFault: ReceiptFault = fired.receipt_loss
      ? 'lost'
      : fired.receipt_duplicate
        ? 'duplicated'
        : fired.receipt_delay
          ? 'delayed'
          : 'none';
    seq += 1;
    const message: StoredMessage = {
      seq,
      sid: `SM${randomBytes(16).toString('hex')}`,
      accountSid,
      to,
      from: form.get('From') ?? '',
      messagingServiceSid: service === null || service === '' ? null : service,
      body,
      validityPeriodSeconds: validity,
      statusCallback,
      clientReference: referenceFrom(statusCallback),
      destinationFingerprint: fingerprint(to),
      acceptedAt,
      numSegments: segmentCount(body),
      // A scheduled message's life (queue, send, delivery) starts at its SendAt.
      timeline: timelineFor(
        sendAt ?? acceptedAt,
        validity,
        delays,
        fired.fail_not_sent?.errorCode,
        fired.queue_delay?.ms ?? 0,
      ),
      redacted: fired.redaction !== undefined,
      listVisibleAt: acceptedAt + (fired.list_lag?.ms ?? 0),
      receiptDelayMs: fired.receipt_delay?.ms ?? 0,
      receiptFault,
      ...(sendAt === undefined ? {} : { sendAt }),
    };
    messages.push(message);
    bySid.set(message.sid, message);
    persist(message);
    scheduleCallbacks(message);
    const applied = Object.keys(fired);
    if (applied.length > 0) log(`message faults sid=${message.sid} ${applied.join(',')}`);
    return message;
  };

  const handleSend = async (req: IncomingMessage, res: ServerResponse, accountSid: string) => {
    const raw = await readBody(req);
    const form = new URLSearchParams(raw ?? '');
    const record: RequestRecord = {
      received_at: isoNow(),
      client_reference: referenceFrom(form.get('StatusCallback')),
      fault: null,
      outcome: 'not_recorded',
      message_id: null,
      http_status: null,
    };
    requests.push(record);
    const ref = record.client_reference ?? '-';
    if (faults.takeHang()) {
      record.fault = 'hang';
      return hold(res, `send client_reference=${ref} (hang)`);
    }
    const answer = (status: number, spec: TwilioErrorSpec, headers: Record<string, string> = {}) => {
      record.http_status = status;
      log(`send rejected http=${status} code=${spec[0]} client_reference=${ref}`);
      twilioError(res, status, spec, headers);
    };
    if (raw === null) return answer(413, [20001, 'Request body too large'], { connection: 'close' });
    if (!authorised(req, accountSid))
      return answer(401, AUTHENTICATE, { 'www-authenticate': 'Basic realm="Twilio API"' });
    const invalid = validateSend(form, clock.now());
    if (invalid !== null) return answer(400, invalid);

    const fault = faults.takeForSend();
    record.fault = fault?.mode ?? null;
    switch (fault?.mode) {
      case 'timeout_before_accept':
        return hold(res, `send client_reference=${ref} (timeout_before_accept)`);
      case 'error_5xx_before_accept':
        return answer(503, [20503, 'Service Unavailable']);
      case 'rate_limited':
        return answer(429, [20429, 'Too Many Requests'], { 'retry-after': String(fault.retryAfterSeconds) });
      case 'reject_permanent':
        return answer(400, [21211, "The 'To' number is not a valid phone number."]);
      default:
        break;
    }
    const message = accept(accountSid, form);
    record.outcome = 'recorded';
    record.message_id = message.sid;
    log(`send accepted sid=${message.sid} client_reference=${ref}${fault ? ` fault=${fault.mode}` : ''}`);
    if (fault?.mode === 'timeout_after_accept')
      return hold(res, `send sid=${message.sid} (timeout_after_accept)`);
    if (fault?.mode === 'error_5xx_after_accept') {
      record.http_status = 500;
      return twilioError(res, 500, [20500, 'Internal Server Error']);
    }
    record.http_status = 201;
    // The create answer is the request's own echo: redaction shows in later reads, as Twilio stores it.
    sendJson(res, 201, toTwilioJson({ ...message, redacted: false }, clock.now(), extensions));
  };

  /** Whether a stored message matches a number filter (stored masked under redaction). */
  const numberMatches = (stored: string, wanted: string, reloadedFingerprint?: string) => {
    if (stored === '' && reloadedFingerprint !== undefined)
      return reloadedFingerprint === fingerprint(wanted);
    return stored === wanted;
  };

  const handleList = (res: ServerResponse, accountSid: string, query: URLSearchParams) => {
    const invalid = (what: string) => twilioError(res, 400, [20001, `Invalid ${what}`]);
    const pageSizeRaw = query.get('PageSize');
    const pageRaw = query.get('Page');
    const token = query.get('PageToken');
    if (pageSizeRaw !== null && !/^\d+$/.test(pageSizeRaw)) return invalid('PageSize');
    if (pageRaw !== null && !/^\d+$/.test(pageRaw)) return invalid('Page');
    const tokenMatch = token === null ? null : /^PA(\d+)$/.exec(token);
    if (token !== null && tokenMatch === null) return invalid('PageToken');
    const pageSize = Math.min(MAX_PAGE_SIZE, Math.max(1, Number(pageSizeRaw ?? DEFAULT_PAGE_SIZE)));
    const page = Number(pageRaw ?? 0);

    const raw = LIST_FILTERS.slice(2).map((key) => query.get(key));
    const days = raw.map((v) => (v === null ? null : parseDay(v)));
    if (days.some((d, i) => d === null && raw[i] !== null)) return invalid('DateSent');
    const [onDay, onOrAfter, onOrBefore] = days;
    const to = query.get('To');
    const from = query.get('From');
    const now = clock.now();

    const matching = messages
      .filter((m) => {
        if (m.accountSid !== accountSid || m.deleted === true) return false;
        // Lists are not read-after-write consistent (the list_lag fault); a fetch by sid is.
        if (m.listVisibleAt !== undefined && now < m.listVisibleAt) return false;
        const redacted = m.redacted === true;
        if (to !== null) {
          const stored = redacted ? maskNumber(m.to) : m.to;
          // Messages reloaded from the ledger file carry only the fingerprint of their number.
          if (!numberMatches(stored, to, redacted ? undefined : m.destinationFingerprint)) return false;
        }
        if (from !== null) {
          const sender = m.from !== '' ? m.from : stateAt(m, now).sentAt === null ? '' : POOL_SENDER;
          if ((redacted ? maskNumber(sender) : sender) !== from) return false;
        }
        if (onDay || onOrAfter || onOrBefore) {
          const sentAt = stateAt(m, now).sentAt;
          if (sentAt === null) return false; // unsent messages have no date_sent (Twilio's semantics)
          if (onDay && (sentAt < onDay.from || sentAt >= onDay.to)) return false;
          if (onOrAfter && sentAt < onOrAfter.from) return false;
          if (onOrBefore && sentAt >= onOrBefore.to) return false;
        }
        return true;
      })
      .sort(listOrder === 'date_created' ? byCreation : bySendTime(now));

    const startIndex =
      tokenMatch?.[1] === undefined
        ? page * pageSize
        : (() => {
            const after = Number(tokenMatch[1]);
            if (listOrder === 'date_sent') {
              // The token names the last message of the previous page: the next page starts after it.
              const at = matching.findIndex((m) => m.seq === after);
              return at === -1 ? page * pageSize : at + 1;
            }
            const index = matching.findIndex((m) => m.seq < after);
            return index === -1 ? matching.length : index;
          })();
    const items = matching.slice(startIndex, startIndex + pageSize);
    const last = items.at(-1);
    const hasMore = startIndex + pageSize < matching.length && last !== undefined;

    const base = `/${API_VERSION}/Accounts/${accountSid}/Messages.json`;
    const uriFor = (extra: Record<string, string>) => {
      const params = new URLSearchParams();
      for (const key of LIST_FILTERS) {
        const value = query.get(key);
        if (value !== null) params.set(key, value);
      }
      params.set('PageSize', String(pageSize));
      for (const [k, v] of Object.entries(extra)) params.set(k, v);
      return `${base}?${params.toString()}`;
    };
    sendJson(res, 200, {
      messages: items.map((m) => toTwilioJson(m, now, extensions)),
      uri: uriFor({ Page: String(page), ...(token === null ? {} : { PageToken: token }) }),
      first_page_uri: uriFor({ Page: '0' }),
      next_page_uri: hasMore ? uriFor({ Page: String(page + 1), PageToken: `PA${last.seq}` }) : null,
      previous_page_uri: page > 0 ? uriFor({ Page: String(page - 1) }) : null,
      page,
      page_size: pageSize,
      start: startIndex,
      end: startIndex + Math.max(items.length, 1) - 1,
    });
  };

  /** `POST .../Messages/{Sid}.json`: Twilio allows `Body=""` (redaction) and `Status=canceled` (scheduled only). */
  const handleUpdate = async (req: IncomingMessage, res: ServerResponse, message: StoredMessage) => {
    const raw = await readBody(req);
    if (raw === null) return twilioError(res, 413, [20001, 'Request body too large']);
    const form = new URLSearchParams(raw);
    const body = form.get('Body');
    if (form.has('Status')) {
      // `canceled` is the only value the update takes (OpenAPI `message_enum_update_status`).
      if (form.get('Status') !== 'canceled') return twilioError(res, 400, [20001, 'Invalid Status']);
      const now = clock.now();
      // Error 30409: only a message still `scheduled` (which needs a messaging service) can be canceled.
      if (stateAt(message, now).status !== 'scheduled')
        return twilioError(res, 400, [30409, 'This message cannot be canceled']);
      message.canceledAt = now;
      persist(message);
      log(`canceled sid=${message.sid}`);
      if (message.statusCallback !== null && message.receiptFault !== 'lost') {
        // A status change after creation: Twilio posts a callback for it.
        const event: StatusEvent = { at: now, status: 'canceled', errorCode: null, errorMessage: null };
        void postCallback(message, event, `${message.sid}-canceled-${randomBytes(6).toString('hex')}`);
      }
      return sendJson(res, 200, toTwilioJson(message, now, extensions));
    }
    if (body !== '') return twilioError(res, 400, [20001, 'Body can only be updated to an empty string']);
    message.body = '';
    persist(message);
    log(`redacted body sid=${message.sid}`);
    return sendJson(res, 200, toTwilioJson(message, clock.now(), extensions));
  };

  const handleMessagesApi = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    route: RegExpExecArray,
  ) => {
    const accountSid = safeDecode(route[1] ?? '');
    const sid = route[2] === undefined ? undefined : safeDecode(route[2]);
    const method = req.method ?? 'GET';
    if (accountSid === null || sid === null)
      return twilioError(res, 404, [20404, 'The requested resource was not found']);
    if (method === 'POST' && sid === undefined) return handleSend(req, res, accountSid);
    if (!['GET', 'POST', 'DELETE'].includes(method) || (sid === undefined && method !== 'GET'))
      return twilioError(res, 405, [20004, 'Method not allowed']);
    if (faults.takeHang())
      return hold(res, sid === undefined ? 'list (hang)' : `${method} sid=${sid} (hang)`);
    if (!authorised(req, accountSid)) {
      return twilioError(res, 401, AUTHENTICATE, { 'www-authenticate': 'Basic realm="Twilio API"' });
    }
    if (sid === undefined) return handleList(res, accountSid, url.searchParams);
    const message = bySid.get(sid);
    if (message === undefined || message.accountSid !== accountSid || message.deleted === true) {
      return twilioError(res, 404, [20404, `The requested resource ${url.pathname} was not found`]);
    }
    if (method === 'POST') return handleUpdate(req, res, message);
    if (method === 'DELETE') {
      message.deleted = true;
      persist(message);
      log(`deleted sid=${message.sid}`);
      res.writeHead(204).end();
      return;
    }
    sendJson(res, 200, toTwilioJson(message, clock.now(), extensions));
  };

  const handleCallbackSink = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.method !== 'POST')
      return sendJson(res, 405, { code: 'method_not_allowed', message: 'POST only' });
    const raw = await readBody(req);
    if (raw === null) return sendJson(res, 413, { code: 'too_large', message: 'body too large' });
    const signature = req.headers['x-twilio-signature'];
    const token = req.headers['i-twilio-idempotency-token'];
    const form = new URLSearchParams(raw);
    const received = `http://${req.headers.host ?? 'localhost'}${req.url ?? url.pathname}`;
    const params = Object.fromEntries(form);
    for (const personal of ['To', 'From', 'Body']) delete params[personal];
    callbacks.push({
      received_at: isoNow(),
      client_reference: url.searchParams.get('client_reference'),
      query: url.search,
      params,
      signature: typeof signature === 'string' ? signature : null,
      signature_valid:
        typeof signature === 'string' && twilioSignature(authToken, received, form) === signature,
      idempotency_token: typeof token === 'string' ? token : null,
    });
    res.writeHead(204).end();
  };

  const handleControl = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const method = req.method ?? 'GET';
    const route = `${method} ${url.pathname}`;
    const now = clock.now();
    switch (route) {
      case 'GET /_sim/health':
        return sendJson(res, 200, { status: 'ok', messages: messages.length, held_requests: held.size });
      case 'GET /_sim/messages': {
        const ref = url.searchParams.get('client_reference');
        const list = ref === null ? messages : messages.filter((m) => m.clientReference === ref);
        const external =
          ref === null ? externalLedger : externalLedger.filter((e) => e.client_reference === ref);
        return sendJson(res, 200, { messages: [...list.map((m) => toLedgerEntry(m, now)), ...external] });
      }
      case 'GET /_sim/requests':
        return sendJson(res, 200, { requests });
      case 'GET /_sim/callbacks':
        return sendJson(res, 200, { callbacks });
      case 'GET /_sim/faults':
        return sendJson(res, 200, { faults: faults.view() });
      case 'POST /_sim/faults': {
        const raw = await readBody(req);
        let input: unknown;
        try {
          input = JSON.parse(raw ?? '');
        } catch {
          return sendJson(res, 400, { code: 'invalid_fault_plan', message: 'body must be JSON' });
        }
        const parsed = parseFaultPlans(input);
        if (!parsed.ok) return sendJson(res, 400, { code: 'invalid_fault_plan', message: parsed.message });
        faults.set(parsed.plans);
        log(
          `faults set: ${parsed.plans.map((p) => `${p.mode}x${p.remaining ?? 'inf'}@${p.probability}`).join(', ')}`,
        );
        return sendJson(res, 200, { faults: faults.view() });
      }
      case 'DELETE /_sim/faults':
        faults.clear();
        log('faults cleared');
        return sendJson(res, 200, { faults: [] });
      case 'POST /_sim/reset':
        ledger?.clear();
        messages.length = 0;
        bySid.clear();
        requests.length = 0;
        callbacks.length = 0;
        externalLedger.length = 0;
        faults.clear();
        for (const cancel of timers) cancel();
        timers.clear();
        for (const listener of resetListeners) listener();
        log('reset');
        return sendJson(res, 200, { status: 'reset' });
      default:
        return sendJson(res, 404, { code: 'not_found', message: `no control route ${route}` });
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    if (url.pathname === '/_sim' || url.pathname.startsWith('/_sim/')) return handleControl(req, res, url);
    for (const handler of handlers) if (await handler(req, res, url, context)) return;
    if (url.pathname === CALLBACK_SINK_PATH) return handleCallbackSink(req, res, url);
    const route = MESSAGES_ROUTE.exec(url.pathname);
    if (route === null) return twilioError(res, 404, [20404, 'The requested resource was not found']);
    return handleMessagesApi(req, res, url, route);
  };

  const server = createServer((req, res) => {
    if (refuseForeignHost(req, res)) return;
    handle(req, res).catch(() => {
      // A client that vanished mid-request, or a bug: answer if still possible, never crash.
      log('request failed');
      sendJson(res, 500, { code: 20500, message: 'Internal Server Error', status: 500 });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log(`listening on ${url}`);

  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    use(handler) {
      handlers.push(handler);
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        for (const cancel of timers) cancel();
        timers.clear();
        stopping.abort();
        server.close(() => resolve());
        for (const res of held) res.destroy();
        held.clear();
        // Idle keep-alive sockets and held requests alike: close() alone would wait for them.
        server.closeAllConnections();
        log('stopped');
      });
      return stopped;
    },
  };
}
