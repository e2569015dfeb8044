/**
 * The Twilio Messages API of the simulator (./server.ts): sends, reads, lists, updates, deletes
 * and status callbacks over one {@link TwilioState}, as Twilio documents them (the module comment
 * of ./server.ts lists what is modelled). The wire rules are in ./twilio-wire.ts; HTTP plumbing,
 * timers and the ledger in ./kernel.ts.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultMode, FaultSchedule } from './faults.js';
import { type MessageLedger, readBody, type SimulatorKernel } from './kernel.js';
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
  toTwilioJson,
} from './messages.js';
import {
  AUTHENTICATE,
  byCreation,
  bySendTime,
  CALLBACK_TIMEOUT_MS,
  credentials,
  DEFAULT_PAGE_SIZE,
  LIST_FILTERS,
  MAX_PAGE_SIZE,
  MAX_REQUEST_BYTES,
  MAX_VALIDITY_SECONDS,
  parseDay,
  referenceFrom,
  safeDecode,
  scheduleOf,
  sendJson,
  type TwilioErrorSpec,
  twilioError,
  twilioSignature,
  validateSend,
} from './twilio-wire.js';

/** One send request as `/_sim/requests` lists it. */
export interface RequestRecord {
  received_at: string;
  client_reference: string | null;
  /**
   * Whether the request asked for a scheduled message (Message Scheduling: sent at `SendAt`, not
   * now): the service's absence probe is one, to a number it owns, canceled at once.
   */
  scheduled: boolean;
  fault: FaultMode | null;
  outcome: 'recorded' | 'not_recorded';
  message_id: string | null;
  /** null while (or when) the request was never answered. */
  http_status: number | null;
}

/** One status callback received at the simulator's own sink. */
export interface CallbackRecord {
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

/** What the Messages API reads and changes: one simulator's state and settings. */
export interface TwilioState {
  readonly kernel: SimulatorKernel;
  readonly ledger: MessageLedger<StoredMessage>;
  readonly faults: FaultSchedule;
  readonly requests: RequestRecord[];
  readonly callbacks: CallbackRecord[];
  readonly fingerprint: (e164: string) => string;
  readonly authToken: string;
  readonly extensions: boolean;
  readonly delays: StatusDelays;
  readonly listOrder: 'date_sent' | 'date_created';
  /** The creation sequence of the last accepted message. */
  seq: number;
}

function authorised(sim: TwilioState, req: IncomingMessage, accountSid: string): boolean {
  const auth = credentials(req);
  return auth !== null && auth.sid === accountSid && auth.token === sim.authToken;
}

async function postCallback(sim: TwilioState, message: StoredMessage, event: StatusEvent, token: string) {
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
        'x-twilio-signature': twilioSignature(sim.authToken, url, params),
        'i-twilio-idempotency-token': token,
      },
      body: params.toString(),
      signal: AbortSignal.any([sim.kernel.stopping, AbortSignal.timeout(CALLBACK_TIMEOUT_MS)]),
      redirect: 'manual',
    });
    await response.arrayBuffer().catch(() => undefined);
    sim.kernel.log(`callback sid=${message.sid} status=${event.status} http=${response.status}`);
  } catch {
    sim.kernel.log(`callback failed sid=${message.sid} status=${event.status}`);
  }
}

/** Posts the message's status callbacks at their times; events before `from` are not posted. */
export function scheduleCallbacks(sim: TwilioState, message: StoredMessage, from = Number.NEGATIVE_INFINITY) {
  if (message.statusCallback === null || message.receiptFault === 'lost') return;
  const copies = message.receiptFault === 'duplicated' ? 2 : 1;
  for (const event of message.timeline) {
    if (event.at < from) continue;
    // One token per event: a re-delivery of the same event carries the same token.
    const token = `${message.sid}-${event.status}-${randomBytes(6).toString('hex')}`;
    for (let copy = 0; copy < copies; copy += 1) {
      sim.kernel.later(event.at + (message.receiptDelayMs ?? 0) + copy * 50 - sim.kernel.clock.now(), () => {
        // A canceled scheduled message never runs its timeline.
        if (message.canceledAt !== undefined) return;
        void postCallback(sim, message, event, token);
      });
    }
  }
}

function accept(sim: TwilioState, accountSid: string, form: URLSearchParams): StoredMessage {
  const acceptedAt = sim.kernel.clock.now();
  const to = form.get('To') ?? '';
  const body = form.get('Body') ?? '';
  const validity = Number(form.get('ValidityPeriod') ?? MAX_VALIDITY_SECONDS);
  const statusCallback = form.get('StatusCallback');
  const service = form.get('MessagingServiceSid');
  // Validated before: a schedule here is well-formed (or absent: sent at once).
  const schedule = scheduleOf(form, acceptedAt);
  const sendAt = Array.isArray(schedule) ? undefined : (schedule as { sendAt?: number }).sendAt;
  const fired = sim.faults.takeForMessage();
  const receiptFault: ReceiptFault = fired.receipt_loss
    ? 'lost'
    : fired.receipt_duplicate
      ? 'duplicated'
      : fired.receipt_delay
        ? 'delayed'
        : 'none';
  sim.seq += 1;
  const message: StoredMessage = {
    seq: sim.seq,
    sid: `SM${randomBytes(16).toString('hex')}`,
    accountSid,
    to,
    from: form.get('From') ?? '',
    messagingServiceSid: service === null || service === '' ? null : service,
    body,
    validityPeriodSeconds: validity,
    statusCallback,
    clientReference: referenceFrom(statusCallback),
    destinationFingerprint: sim.fingerprint(to),
    acceptedAt,
    numSegments: segmentCount(body),
    // A scheduled message's life (queue, send, delivery) starts at its SendAt.
    timeline: timelineFor(
      sendAt ?? acceptedAt,
      validity,
      sim.delays,
      fired.fail_not_sent?.errorCode,
      fired.queue_delay?.ms ?? 0,
    ),
    redacted: fired.redaction !== undefined,
    listVisibleAt: acceptedAt + (fired.list_lag?.ms ?? 0),
    receiptDelayMs: fired.receipt_delay?.ms ?? 0,
    receiptFault,
    ...(sendAt === undefined ? {} : { sendAt }),
  };
  sim.ledger.add(message);
  scheduleCallbacks(sim, message);
  const applied = Object.keys(fired);
  if (applied.length > 0) sim.kernel.log(`message faults sid=${message.sid} ${applied.join(',')}`);
  return message;
}

function isScheduled(form: URLSearchParams, now: number): boolean {
  const schedule = scheduleOf(form, now);
  return 'sendAt' in schedule && schedule.sendAt !== undefined;
}

async function handleSend(sim: TwilioState, req: IncomingMessage, res: ServerResponse, accountSid: string) {
  const raw = await readBody(req, MAX_REQUEST_BYTES);
  const form = new URLSearchParams(raw ?? '');
  const record: RequestRecord = {
    received_at: sim.kernel.isoNow(),
    client_reference: referenceFrom(form.get('StatusCallback')),
    scheduled: isScheduled(form, sim.kernel.clock.now()),
    fault: null,
    outcome: 'not_recorded',
    message_id: null,
    http_status: null,
  };
  sim.requests.push(record);
  const ref = record.client_reference ?? '-';
  if (sim.faults.takeHang()) {
    record.fault = 'hang';
    return sim.kernel.hold(res, `send client_reference=${ref} (hang)`);
  }
  const answer = (status: number, spec: TwilioErrorSpec, headers: Record<string, string> = {}) => {
    record.http_status = status;
    sim.kernel.log(`send rejected http=${status} code=${spec[0]} client_reference=${ref}`);
    twilioError(res, status, spec, headers);
  };
  if (raw === null) return answer(413, [20001, 'Request body too large'], { connection: 'close' });
  if (!authorised(sim, req, accountSid))
    return answer(401, AUTHENTICATE, { 'www-authenticate': 'Basic realm="Twilio API"' });
  const invalid = validateSend(form, sim.kernel.clock.now());
  if (invalid !== null) return answer(400, invalid);

  // A brownout fires first: the send lane's plans wait for the sends it spares.
  const fault = sim.faults.takeBrownout() ?? sim.faults.takeForSend();
  record.fault = fault?.mode ?? null;
  switch (fault?.mode) {
    case 'timeout_before_accept':
      return sim.kernel.hold(res, `send client_reference=${ref} (timeout_before_accept)`);
    case 'error_5xx_before_accept':
      return answer(503, [20503, 'Service Unavailable']);
    case 'rate_limited':
      return answer(429, [20429, 'Too Many Requests'], { 'retry-after': String(fault.retryAfterSeconds) });
    case 'reject_permanent':
      return answer(400, [21211, "The 'To' number is not a valid phone number."]);
    default:
      break;
  }
  const message = accept(sim, accountSid, form);
  record.outcome = 'recorded';
  record.message_id = message.sid;
  sim.kernel.log(
    `send accepted sid=${message.sid} client_reference=${ref}${fault ? ` fault=${fault.mode}` : ''}`,
  );
  if (fault?.mode === 'timeout_after_accept' || fault?.mode === 'brownout')
    return sim.kernel.hold(res, `send sid=${message.sid} (${fault.mode})`);
  if (fault?.mode === 'error_5xx_after_accept') {
    record.http_status = 500;
    return twilioError(res, 500, [20500, 'Internal Server Error']);
  }
  record.http_status = 201;
  // The create answer is the request's own echo: redaction shows in later reads, as Twilio stores it.
  sendJson(res, 201, toTwilioJson({ ...message, redacted: false }, sim.kernel.clock.now(), sim.extensions));
}

/** Whether a stored message matches a number filter (stored masked under redaction). */
function numberMatches(sim: TwilioState, stored: string, wanted: string, reloadedFingerprint?: string) {
  if (stored === '' && reloadedFingerprint !== undefined)
    return reloadedFingerprint === sim.fingerprint(wanted);
  return stored === wanted;
}

function handleList(sim: TwilioState, res: ServerResponse, accountSid: string, query: URLSearchParams) {
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
  const now = sim.kernel.clock.now();

  const matching = sim.ledger.all
    .filter((m) => {
      if (m.accountSid !== accountSid || m.deleted === true) return false;
      // Lists are not read-after-write consistent (the list_lag fault); a fetch by sid is.
      if (m.listVisibleAt !== undefined && now < m.listVisibleAt) return false;
      const redacted = m.redacted === true;
      if (to !== null) {
        const stored = redacted ? maskNumber(m.to) : m.to;
        // Messages reloaded from the ledger file carry only the fingerprint of their number.
        if (!numberMatches(sim, stored, to, redacted ? undefined : m.destinationFingerprint)) return false;
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
    .sort(sim.listOrder === 'date_created' ? byCreation : bySendTime(now));

  const startIndex =
    tokenMatch?.[1] === undefined
      ? page * pageSize
      : (() => {
          const after = Number(tokenMatch[1]);
          if (sim.listOrder === 'date_sent') {
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
    messages: items.map((m) => toTwilioJson(m, now, sim.extensions)),
    uri: uriFor({ Page: String(page), ...(token === null ? {} : { PageToken: token }) }),
    first_page_uri: uriFor({ Page: '0' }),
    next_page_uri: hasMore ? uriFor({ Page: String(page + 1), PageToken: `PA${last.seq}` }) : null,
    previous_page_uri: page > 0 ? uriFor({ Page: String(page - 1) }) : null,
    page,
    page_size: pageSize,
    start: startIndex,
    end: startIndex + Math.max(items.length, 1) - 1,
  });
}

/** `POST .../Messages/{Sid}.json`: Twilio allows `Body=""` (redaction) and `Status=canceled` (scheduled only). */
async function handleUpdate(
  sim: TwilioState,
  req: IncomingMessage,
  res: ServerResponse,
  message: StoredMessage,
) {
  const raw = await readBody(req, MAX_REQUEST_BYTES);
  if (raw === null) return twilioError(res, 413, [20001, 'Request body too large']);
  const form = new URLSearchParams(raw);
  const body = form.get('Body');
  if (form.has('Status')) {
    // `canceled` is the only value the update takes (OpenAPI `message_enum_update_status`).
    if (form.get('Status') !== 'canceled') return twilioError(res, 400, [20001, 'Invalid Status']);
    const now = sim.kernel.clock.now();
    // Error 30409: only a message still `scheduled` (which needs a messaging service) can be canceled.
    if (stateAt(message, now).status !== 'scheduled')
      return twilioError(res, 400, [30409, 'This message cannot be canceled']);
    message.canceledAt = now;
    sim.ledger.persist(message);
    sim.kernel.log(`canceled sid=${message.sid}`);
    if (message.statusCallback !== null && message.receiptFault !== 'lost') {
      // A status change after creation: Twilio posts a callback for it.
      const event: StatusEvent = { at: now, status: 'canceled', errorCode: null, errorMessage: null };
      void postCallback(sim, message, event, `${message.sid}-canceled-${randomBytes(6).toString('hex')}`);
    }
    return sendJson(res, 200, toTwilioJson(message, now, sim.extensions));
  }
  if (body !== '') return twilioError(res, 400, [20001, 'Body can only be updated to an empty string']);
  message.body = '';
  sim.ledger.persist(message);
  sim.kernel.log(`redacted body sid=${message.sid}`);
  return sendJson(res, 200, toTwilioJson(message, sim.kernel.clock.now(), sim.extensions));
}

export async function handleMessagesApi(
  sim: TwilioState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  route: RegExpExecArray,
) {
  const accountSid = safeDecode(route[1] ?? '');
  const sid = route[2] === undefined ? undefined : safeDecode(route[2]);
  const method = req.method ?? 'GET';
  if (accountSid === null || sid === null)
    return twilioError(res, 404, [20404, 'The requested resource was not found']);
  if (method === 'POST' && sid === undefined) return handleSend(sim, req, res, accountSid);
  if (!['GET', 'POST', 'DELETE'].includes(method) || (sid === undefined && method !== 'GET'))
    return twilioError(res, 405, [20004, 'Method not allowed']);
  if (sim.faults.takeHang())
    return sim.kernel.hold(res, sid === undefined ? 'list (hang)' : `${method} sid=${sid} (hang)`);
  if (!authorised(sim, req, accountSid)) {
    return twilioError(res, 401, AUTHENTICATE, { 'www-authenticate': 'Basic realm="Twilio API"' });
  }
  if (sid === undefined) return handleList(sim, res, accountSid, url.searchParams);
  const message = sim.ledger.get(sid);
  if (message === undefined || message.accountSid !== accountSid || message.deleted === true) {
    return twilioError(res, 404, [20404, `The requested resource ${url.pathname} was not found`]);
  }
  if (method === 'POST') return handleUpdate(sim, req, res, message);
  if (method === 'DELETE') {
    message.deleted = true;
    sim.ledger.persist(message);
    sim.kernel.log(`deleted sid=${message.sid}`);
    res.writeHead(204).end();
    return;
  }
  sendJson(res, 200, toTwilioJson(message, sim.kernel.clock.now(), sim.extensions));
}

export async function handleCallbackSink(
  sim: TwilioState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) {
  if (req.method !== 'POST') return sendJson(res, 405, { code: 'method_not_allowed', message: 'POST only' });
  const raw = await readBody(req, MAX_REQUEST_BYTES);
  if (raw === null) return sendJson(res, 413, { code: 'too_large', message: 'body too large' });
  const signature = req.headers['x-twilio-signature'];
  const token = req.headers['i-twilio-idempotency-token'];
  const form = new URLSearchParams(raw);
  const received = `http://${req.headers.host ?? 'localhost'}${req.url ?? url.pathname}`;
  const params = Object.fromEntries(form);
  for (const personal of ['To', 'From', 'Body']) delete params[personal];
  sim.callbacks.push({
    received_at: sim.kernel.isoNow(),
    client_reference: url.searchParams.get('client_reference'),
    query: url.search,
    params,
    signature: typeof signature === 'string' ? signature : null,
    signature_valid:
      typeof signature === 'string' && twilioSignature(sim.authToken, received, form) === signature,
    idempotency_token: typeof token === 'string' ? token : null,
  });
  res.writeHead(204).end();
}
