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
 * - End User Messaging events (TEXT_QUEUED, TEXT_SUCCESSFUL, TEXT_DELIVERED, TEXT_TTL_EXPIRED),
 *   with `context` echoed, POSTed as SNS HTTP notifications to `eventsUrl` (the local receipts
 *   path) after `eventDelayMs`, subject to `receipt_delay`, `receipt_loss` and `receipt_duplicate`;
 *   a 5xx or no answer is retried 3 times `eventRetryDelayMs` apart, as SNS's default HTTP policy.
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
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realClock, type SimulatorClock } from '../clock.js';
import { type LedgerFormat, openSealedLedger } from '../ledger-file.js';
import { type AwsFaultPlan, AwsFaultSchedule, parseAwsFaultPlans } from './faults.js';

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
  stop(): Promise<void>;
}

type SimStatus = 'queued' | 'sent' | 'delivered' | 'failed';

interface Step {
  readonly at: number;
  readonly status: SimStatus;
  /** End User Messaging event type of this step. */
  readonly eventType: string;
}

interface AwsMessage {
  readonly id: string;
  readonly protocol: 'sns' | 'eum';
  /** In memory only: the delivery-status log line carries it, as SNS's does. */
  readonly to: string;
  readonly clientReference: string | null;
  readonly destinationFingerprint: string;
  readonly contentFingerprint: string;
  readonly acceptedAt: number;
  readonly ttlSeconds: number | null;
  readonly timeline: readonly Step[];
  /** SNS only: when the delivery-status line becomes visible, and whether it was sampled. */
  readonly logVisibleAt: number;
  readonly logged: boolean;
  feedback: string | null;
  /** Events of the message that the `receipt_loss` fault dropped (the ledger's `receipts`). */
  eventsLost: number;
}

/** How the ledger file writes an AWS message: by id, the number sealed. */
const AWS_LEDGER_FORMAT: LedgerFormat<AwsMessage> = { id: (m) => m.id, sealed: ['to'] };

interface RequestRecord {
  received_at: string;
  protocol: 'sns' | 'eum';
  client_reference: string | null;
  fault: string | null;
  outcome: 'recorded' | 'not_recorded';
  message_id: string | null;
  http_status: number | null;
}

interface ReceiptRecord {
  readonly posted_at: string;
  readonly message_id: string;
  readonly client_reference: string | null;
  readonly event_type: string;
  readonly notification_id: string;
  readonly http_status: number | null;
  readonly duplicate: boolean;
}

export const DEFAULT_AWS_STATUS_DELAYS = { sent: 200, delivered: 1000 } as const;
const MAX_REQUEST_BYTES = 256 * 1024;
const E164 = /^\+[1-9]\d{6,14}$/;
const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;
const EUM_MIN_TTL = 5;
const EUM_MAX_TTL = 259_200;
const EUM_MAX_BODY = 1600;
const LOG_PAGE_SIZE = 100;
const POST_TIMEOUT_MS = 5_000;
const EVENT_RETRIES = 3;
const TERM = /^\(?\s*\$\.notification\.messageId\s*=\s*("(?:[^"\\]|\\.)*")\s*\)?$/;

function defaultFingerprinter(): (value: string) => string {
  const key = randomBytes(32);
  return (value) => `sim1:${createHmac('sha256', key).update(value).digest('hex').slice(0, 32)}`;
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

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
) {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': type, 'x-amzn-requestid': randomUUID(), ...headers });
  res.end(body);
}

const sendJson = (res: ServerResponse, status: number, body: unknown, type = 'application/json') =>
  send(res, status, type, JSON.stringify(body));

const xmlEscape = (text: string) =>
  text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c,
  );

/** The SNS Query protocol's error document. */
function snsError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
) {
  const type = status >= 500 ? 'Receiver' : 'Sender';
  send(
    res,
    status,
    'text/xml',
    `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>${type}</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
    headers,
  );
}

/** The awsJson error document: `__type` names the modelled exception. */
function jsonError(
  res: ServerResponse,
  namespace: string,
  status: number,
  name: string,
  message: string,
  fields: Record<string, unknown> = {},
  type = 'application/x-amz-json-1.0',
) {
  send(res, status, type, JSON.stringify({ __type: `${namespace}#${name}`, Message: message, ...fields }), {
    'x-amzn-errortype': name,
  });
}

/**
 * Starts the AWS simulator on loopback. See the module comment for the protocols; faults follow
 * docs/design.md#local-stack (`fail_not_sent`: accepted, then never handed off: an SNS FAILURE line, an
 * End User Messaging TEXT_TTL_EXPIRED event).
 */
export async function startAwsSimulator(options: AwsSimulatorOptions = {}): Promise<RunningAwsSimulator> {
  const host = options.host ?? '127.0.0.1';
  const region = options.region ?? 'us-east-1';
  const account = options.accountId ?? '000000000000';
  const delays = options.statusDelaysMs ?? DEFAULT_AWS_STATUS_DELAYS;
  const fingerprint = options.fingerprint ?? defaultFingerprinter();
  const random = options.random ?? Math.random;
  const clock = options.clock ?? realClock;
  const isoNow = () => new Date(clock.now()).toISOString();
  const log = (line: string) => options.log?.(`[aws-sim] ${line}`);
  const eventsTopicArn = `arn:aws:sns:${region}:${account}:reset-notifier-eum-events`;
  const successGroup = `sns/${region}/${account}/DirectPublishToPhoneNumber`;
  const failureGroup = `${successGroup}/Failure`;
  const logLagMs = options.logLagMs ?? 2_000;
  const samplingRate = options.logSuccessSamplingRate ?? 1;
  const eventDelayMs = options.eventDelayMs ?? 100;
  const eventRetryDelayMs = options.eventRetryDelayMs ?? 20_000;
  let eventsUrl = options.eventsUrl;

  const messages: AwsMessage[] = [];
  const byId = new Map<string, AwsMessage>();
  const requests: RequestRecord[] = [];
  const receipts: ReceiptRecord[] = [];
  /**
   * Test oracle (chaos runs only): SNS returns and logs no reference, so the ledger cannot name
   * the key of an SNS message by itself. A driver registers each key's secret; a published body
   * carrying it is attributed to `<key>#<n>`, n counting that key's Publish requests.
   */
  const oracle = new Map<string, string>();
  const oracleRequests = new Map<string, number>();
  const oracleKeyOf = (body: string): string | null => {
    if (oracle.size === 0) return null;
    for (const token of body.split(/\s+/)) {
      const key = oracle.get(token.replace(/[.,;:!?)]+$/, ''));
      if (key !== undefined) return key;
    }
    return null;
  };
  const faults = new AwsFaultSchedule(random);
  const ledger = options.ledgerFile
    ? openSealedLedger(options.ledgerFile, AWS_LEDGER_FORMAT, options.ledgerKey)
    : undefined;
  const reloaded = ledger?.load() ?? [];
  for (const message of reloaded) {
    messages.push(message);
    byId.set(message.id, message);
  }
  /** Cancels the pending event timers. */
  const timers = new Set<() => void>();
  const held = new Set<ServerResponse>();
  const stopping = new AbortController();

  const later = (ms: number, run: () => void) => {
    const cancel = clock.setTimer(
      () => {
        timers.delete(cancel);
        run();
      },
      Math.max(0, ms),
    );
    timers.add(cancel);
  };

  const hold = (res: ServerResponse, what: string) => {
    held.add(res);
    res.on('close', () => held.delete(res));
    log(`holding ${what}`);
  };

  /** Hand-off, then delivery; or, when the TTL ends first (or `fail_not_sent`), never handed off. */
  const timelineFor = (
    acceptedAt: number,
    ttlSeconds: number | null,
    notSent: boolean,
    queueDelayMs: number,
  ): Step[] => {
    const handOff = acceptedAt + delays.sent + queueDelayMs;
    const expiry = ttlSeconds === null ? Number.POSITIVE_INFINITY : acceptedAt + ttlSeconds * 1000;
    const queued: Step = { at: acceptedAt, status: 'queued', eventType: 'TEXT_QUEUED' };
    if (notSent || handOff > expiry) {
      const at = Math.min(handOff, expiry);
      return [queued, { at, status: 'failed', eventType: 'TEXT_TTL_EXPIRED' }];
    }
    return [
      queued,
      { at: handOff, status: 'sent', eventType: 'TEXT_SUCCESSFUL' },
      {
        at: acceptedAt + Math.max(delays.delivered, delays.sent) + queueDelayMs,
        status: 'delivered',
        eventType: 'TEXT_DELIVERED',
      },
    ];
  };

  const statusAt = (message: AwsMessage, now: number): SimStatus => {
    let status: SimStatus = 'queued';
    for (const step of message.timeline) if (step.at <= now) status = step.status;
    return status;
  };

  const postEvent = async (
    message: AwsMessage,
    step: Step,
    notificationId: string,
    duplicate: boolean,
    retry = 0,
  ): Promise<void> => {
    const url = eventsUrl;
    if (url === undefined) return;
    const event = {
      eventType: step.eventType,
      eventVersion: '1.0',
      eventTimestamp: step.at,
      isFinal: step.status === 'delivered' || step.status === 'failed',
      originationPhoneNumber: '+12065550152',
      destinationPhoneNumber: message.to,
      isInternationalSend: false,
      messageId: message.id,
      messageRequestTimestamp: message.acceptedAt,
      messageEncoding: 'GSM',
      messageType: 'TRANSACTIONAL',
      messageStatus: step.eventType.replace(/^TEXT_/, ''),
      messageStatusDescription: step.status === 'failed' ? 'Message expired before hand-off' : 'ok',
      ...(message.clientReference === null ? {} : { context: { client_reference: message.clientReference } }),
      totalMessageParts: 1,
    };
    const notification = {
      Type: 'Notification',
      MessageId: notificationId,
      TopicArn: eventsTopicArn,
      Message: JSON.stringify(event),
      Timestamp: isoNow(),
    };
    let status: number | null = null;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'text/plain; charset=UTF-8',
          'x-amz-sns-message-type': 'Notification',
          'x-amz-sns-message-id': notificationId,
          'x-amz-sns-topic-arn': eventsTopicArn,
        },
        body: JSON.stringify(notification),
        signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(POST_TIMEOUT_MS)]),
        redirect: 'manual',
      });
      await response.arrayBuffer().catch(() => undefined);
      status = response.status;
    } catch {
      status = null;
    }
    receipts.push({
      posted_at: isoNow(),
      message_id: message.id,
      client_reference: message.clientReference,
      event_type: step.eventType,
      notification_id: notificationId,
      http_status: status,
      duplicate,
    });
    log(
      `event ${step.eventType} id=${message.id} http=${status ?? 'failed'}${duplicate ? ' (duplicate)' : ''}`,
    );
    // SNS's default HTTP delivery policy: 3 retries, 20 s apart, on a 5xx or no answer (never on 4xx).
    if ((status === null || status >= 500) && retry < EVENT_RETRIES) {
      later(eventRetryDelayMs, () => void postEvent(message, step, notificationId, duplicate, retry + 1));
    }
  };

  const scheduleEvents = (message: AwsMessage) => {
    for (const step of message.timeline) {
      const fault = faults.takeForReceipt();
      if (fault?.mode === 'receipt_loss') {
        message.eventsLost += 1;
        continue;
      }
      const notificationId = randomUUID();
      const delay =
        step.at - clock.now() + eventDelayMs + (fault?.mode === 'receipt_delay' ? fault.delayMs : 0);
      later(delay, () => void postEvent(message, step, notificationId, false));
      // SNS is at-least-once: a redelivery keeps the notification's MessageId.
      if (fault?.mode === 'receipt_duplicate')
        later(delay + 50, () => void postEvent(message, step, notificationId, true));
    }
  };

  const accept = (
    protocol: 'sns' | 'eum',
    to: string,
    body: string,
    clientReference: string | null,
    ttlSeconds: number | null,
    notSent: boolean,
  ): AwsMessage => {
    const acceptedAt = clock.now();
    const timeline = timelineFor(acceptedAt, ttlSeconds, notSent, faults.takeQueueDelay());
    const outcome = timeline[timeline.length - 1] as Step;
    const success = outcome.status === 'delivered';
    const message: AwsMessage = {
      id: randomUUID(),
      protocol,
      to,
      clientReference,
      destinationFingerprint: fingerprint(to),
      contentFingerprint: fingerprint(body),
      acceptedAt,
      ttlSeconds,
      timeline,
      logVisibleAt: outcome.at + logLagMs + faults.takeListLag(),
      logged: !success || random() < samplingRate,
      feedback: null,
      eventsLost: 0,
    };
    messages.push(message);
    byId.set(message.id, message);
    ledger?.append(message);
    if (protocol === 'eum') scheduleEvents(message);
    return message;
  };

  // After a restart, End User Messaging's events still due are published; those that fell due
  // while the simulator was down went to a service that was down with it (SNS's retries included).
  const restartedAt = clock.now();
  for (const message of reloaded) {
    if (message.protocol !== 'eum') continue;
    for (const step of message.timeline) {
      if (step.at < restartedAt) continue;
      const notificationId = randomUUID();
      later(step.at - restartedAt + eventDelayMs, () => void postEvent(message, step, notificationId, false));
    }
  }

  /** The common fault handling of one well-formed send; returns true when the request was answered. */
  const applySendFault = (
    plan: AwsFaultPlan | null,
    res: ServerResponse,
    record: RequestRecord,
    answer: (kind: 'throttled' | 'unavailable' | 'permanent') => void,
  ): 'handled' | 'accept' | 'accept_then_500' | 'accept_then_hold' | 'accept_not_sent' => {
    switch (plan?.mode) {
      case 'timeout_before_accept':
        hold(res, `send ${record.client_reference ?? '-'} (timeout_before_accept)`);
        return 'handled';
      case 'error_5xx_before_accept':
        answer('unavailable');
        return 'handled';
      case 'rate_limited':
        answer('throttled');
        return 'handled';
      case 'reject_permanent':
        answer('permanent');
        return 'handled';
      case 'timeout_after_accept':
        return 'accept_then_hold';
      case 'error_5xx_after_accept':
        return 'accept_then_500';
      case 'fail_not_sent':
        return 'accept_not_sent';
      default:
        return 'accept';
    }
  };

  const handleSns = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const form = new URLSearchParams(raw);
    const action = form.get('Action');
    if (action !== 'Publish')
      return snsError(res, 400, 'InvalidAction', `action ${action ?? '-'} is not simulated`);
    const record: RequestRecord = {
      received_at: isoNow(),
      protocol: 'sns',
      client_reference: null,
      fault: null,
      outcome: 'not_recorded',
      message_id: null,
      http_status: null,
    };
    requests.push(record);
    if (!req.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) {
      record.http_status = 403;
      return snsError(
        res,
        403,
        'InvalidClientTokenId',
        'The security token included in the request is invalid.',
      );
    }
    const to = form.get('PhoneNumber') ?? '';
    const body = form.get('Message') ?? '';
    const oracleKey = oracleKeyOf(body);
    if (oracleKey !== null) {
      const n = (oracleRequests.get(oracleKey) ?? 0) + 1;
      oracleRequests.set(oracleKey, n);
      record.client_reference = `${oracleKey}#${n}`;
    }
    if (!E164.test(to) || body === '' || form.get('TopicArn') || form.get('TargetArn')) {
      record.http_status = 400;
      return snsError(
        res,
        400,
        'InvalidParameter',
        'Invalid parameter: PhoneNumber Reason: not an E.164 number',
      );
    }
    const plan = faults.takeForSend();
    record.fault = plan?.mode ?? null;
    const next = applySendFault(plan, res, record, (kind) => {
      if (kind === 'throttled') {
        record.http_status = 429;
        snsError(res, 429, 'Throttled', 'Rate exceeded');
      } else if (kind === 'unavailable') {
        record.http_status = 503;
        snsError(res, 503, 'InternalError', 'Service Unavailable');
      } else {
        record.http_status = 400;
        snsError(res, 400, 'InvalidParameter', 'Invalid parameter: PhoneNumber Reason: blocked destination');
      }
    });
    if (next === 'handled') return;
    const message = accept('sns', to, body, record.client_reference, null, next === 'accept_not_sent');
    record.outcome = 'recorded';
    record.message_id = message.id;
    log(`publish accepted id=${message.id}${plan ? ` (${plan.mode})` : ''}`);
    if (next === 'accept_then_hold') return hold(res, `publish id=${message.id} (timeout_after_accept)`);
    if (next === 'accept_then_500') {
      record.http_status = 500;
      return snsError(res, 500, 'InternalError', 'Internal Error');
    }
    record.http_status = 200;
    send(
      res,
      200,
      'text/xml',
      `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>${message.id}</MessageId></PublishResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></PublishResponse>`,
    );
  };

  const EUM_NS = 'com.amazonaws.pinpointsmsvoicev2';

  const handleEum = async (req: IncomingMessage, res: ServerResponse, operation: string, raw: string) => {
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(raw === '' ? '{}' : raw) as Record<string, unknown>;
    } catch {
      return jsonError(res, EUM_NS, 400, 'ValidationException', 'cannot parse', { Reason: 'CANNOT_PARSE' });
    }
    if (operation === 'PutMessageFeedback') {
      const message = typeof input.MessageId === 'string' ? byId.get(input.MessageId) : undefined;
      if (message === undefined || message.protocol !== 'eum') {
        return jsonError(res, EUM_NS, 404, 'ResourceNotFoundException', 'message not found', {
          ResourceType: 'message',
        });
      }
      message.feedback = String(input.MessageFeedbackStatus ?? '');
      ledger?.append(message);
      return sendJson(
        res,
        200,
        { MessageId: message.id, MessageFeedbackStatus: message.feedback },
        'application/x-amz-json-1.0',
      );
    }
    if (operation !== 'SendTextMessage') {
      return jsonError(res, EUM_NS, 400, 'ValidationException', `${operation} is not simulated`, {
        Reason: 'UNKNOWN_OPERATION',
      });
    }
    const context = (input.Context ?? {}) as Record<string, unknown>;
    const reference = typeof context.client_reference === 'string' ? context.client_reference : null;
    const record: RequestRecord = {
      received_at: isoNow(),
      protocol: 'eum',
      client_reference: reference,
      fault: null,
      outcome: 'not_recorded',
      message_id: null,
      http_status: null,
    };
    requests.push(record);
    const fail = (status: number, name: string, message: string, fields: Record<string, unknown> = {}) => {
      record.http_status = status;
      log(`send rejected http=${status} ${name} client_reference=${reference ?? '-'}`);
      jsonError(res, EUM_NS, status, name, message, fields);
    };
    if (!req.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) {
      return fail(
        400,
        'UnrecognizedClientException',
        'The security token included in the request is invalid.',
      );
    }
    const to = input.DestinationPhoneNumber;
    const body = input.MessageBody;
    const ttl = input.TimeToLive;
    if (typeof to !== 'string' || !E164.test(to)) {
      return fail(400, 'ValidationException', 'invalid destination', { Reason: 'INVALID_PARAMETER' });
    }
    if (typeof body !== 'string' || body.trim() === '' || [...body].length > EUM_MAX_BODY) {
      return fail(400, 'ValidationException', 'invalid message body', { Reason: 'FIELD_VALIDATION_FAILED' });
    }
    if (
      ttl !== undefined &&
      !(Number.isInteger(ttl) && (ttl as number) >= EUM_MIN_TTL && (ttl as number) <= EUM_MAX_TTL)
    ) {
      return fail(400, 'ValidationException', 'TimeToLive out of range', {
        Reason: 'FIELD_VALIDATION_FAILED',
      });
    }
    if (typeof input.OriginationIdentity !== 'string' || input.OriginationIdentity === '') {
      return fail(404, 'ResourceNotFoundException', 'origination identity not found', {
        ResourceType: 'pool',
      });
    }
    if (
      typeof input.ConfigurationSetName !== 'string' ||
      input.ConfigurationSetName === '' ||
      (options.configurationSets !== undefined &&
        !options.configurationSets.includes(input.ConfigurationSetName))
    ) {
      return fail(404, 'ResourceNotFoundException', 'configuration set not found', {
        ResourceType: 'configuration-set',
      });
    }
    const plan = faults.takeForSend();
    record.fault = plan?.mode ?? null;
    const next = applySendFault(plan, res, record, (kind) => {
      if (kind === 'throttled') fail(400, 'ThrottlingException', 'Rate exceeded');
      else if (kind === 'unavailable') fail(503, 'InternalServerException', 'Service Unavailable');
      else
        fail(409, 'ConflictException', 'destination opted out', {
          Reason: 'DESTINATION_PHONE_NUMBER_OPTED_OUT',
        });
    });
    if (next === 'handled') return;
    const message = accept(
      'eum',
      to,
      body,
      reference,
      typeof ttl === 'number' ? ttl : 259_200,
      next === 'accept_not_sent',
    );
    record.outcome = 'recorded';
    record.message_id = message.id;
    log(
      `send accepted id=${message.id} client_reference=${reference ?? '-'}${plan ? ` (${plan.mode})` : ''}`,
    );
    if (next === 'accept_then_hold') return hold(res, `send id=${message.id} (timeout_after_accept)`);
    if (next === 'accept_then_500') return fail(500, 'InternalServerException', 'Internal Error');
    record.http_status = 200;
    sendJson(res, 200, { MessageId: message.id }, 'application/x-amz-json-1.0');
  };

  const LOGS_NS = 'com.amazonaws.cloudwatchlogs';

  const handleLogs = async (res: ServerResponse, operation: string, raw: string) => {
    const type = 'application/x-amz-json-1.1';
    if (operation !== 'FilterLogEvents') {
      return jsonError(
        res,
        LOGS_NS,
        400,
        'InvalidParameterException',
        `${operation} is not simulated`,
        {},
        type,
      );
    }
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(raw === '' ? '{}' : raw) as Record<string, unknown>;
    } catch {
      return jsonError(res, LOGS_NS, 400, 'InvalidParameterException', 'cannot parse', {}, type);
    }
    const group = input.logGroupName;
    const now = clock.now();
    const failures = messages.filter((m) => m.protocol === 'sns' && !isSuccess(m) && m.logVisibleAt <= now);
    if (group !== successGroup && !(group === failureGroup && failures.length > 0)) {
      // SNS creates the /Failure group with its first failure line; any other name does not exist.
      return jsonError(
        res,
        LOGS_NS,
        400,
        'ResourceNotFoundException',
        'The specified log group does not exist.',
        {},
        type,
      );
    }
    const pattern = typeof input.filterPattern === 'string' ? input.filterPattern : '';
    const ids = parsePattern(pattern);
    if (ids === null) {
      return jsonError(
        res,
        LOGS_NS,
        400,
        'InvalidParameterException',
        'filter pattern not supported by the simulator',
        {},
        type,
      );
    }
    const start = typeof input.startTime === 'number' ? input.startTime : 0;
    const end = typeof input.endTime === 'number' ? input.endTime : Number.POSITIVE_INFINITY;
    const wantFailure = group === failureGroup;
    const lines = messages
      .filter(
        (m) => m.protocol === 'sns' && m.logged && m.logVisibleAt <= now && isSuccess(m) !== wantFailure,
      )
      .map((m) => ({ message: m, at: (m.timeline[m.timeline.length - 1] as Step).at }))
      .filter(({ message, at }) => at >= start && at <= end && (ids.size === 0 || ids.has(message.id)))
      .sort((a, b) => a.at - b.at);
    const offset = typeof input.nextToken === 'string' ? Number(input.nextToken) || 0 : 0;
    const page = lines.slice(offset, offset + LOG_PAGE_SIZE);
    const more = offset + LOG_PAGE_SIZE < lines.length;
    return sendJson(
      res,
      200,
      {
        events: page.map(({ message, at }) => ({
          logStreamName: randomUUID(),
          timestamp: at,
          ingestionTime: message.logVisibleAt,
          eventId: `${at}${message.id.replace(/-/g, '').slice(0, 12)}`,
          message: JSON.stringify(deliveryLine(message, at)),
        })),
        searchedLogStreams: [],
        ...(more ? { nextToken: String(offset + LOG_PAGE_SIZE) } : {}),
      },
      type,
    );
  };

  const isSuccess = (message: AwsMessage) =>
    message.timeline[message.timeline.length - 1]?.status === 'delivered';

  /** A delivery-status line as SNS writes it (the destination in clear, as in the real logs). */
  const deliveryLine = (message: AwsMessage, at: number) => ({
    notification: {
      messageId: message.id,
      timestamp: new Date(message.acceptedAt).toISOString().replace('T', ' ').replace('Z', ''),
    },
    delivery: {
      phoneCarrier: 'Simulated',
      mnc: 800,
      destination: message.to,
      priceInUSD: 0.00645,
      smsType: 'Transactional',
      mcc: 310,
      providerResponse: isSuccess(message)
        ? 'Message has been accepted by phone carrier'
        : 'Unknown error attempting to reach phone',
      dwellTimeMs: Math.max(0, at - message.acceptedAt),
      dwellTimeMsUntilDeviceAck: Math.max(0, at - message.acceptedAt),
    },
    status: isSuccess(message) ? 'SUCCESS' : 'FAILURE',
  });

  const ledgerEntry = (message: AwsMessage, now: number) => ({
    id: message.id,
    protocol: message.protocol,
    client_reference: message.clientReference,
    destination_fingerprint: message.destinationFingerprint,
    content_fingerprint: message.contentFingerprint,
    accepted_at: new Date(message.acceptedAt).toISOString(),
    status: statusAt(message, now),
    handed_off: message.timeline.some((s) => s.status === 'sent' && s.at <= now),
    ...(message.ttlSeconds === null ? {} : { validity_period_seconds: message.ttlSeconds }),
    ...(message.feedback === null ? {} : { feedback: message.feedback }),
    // As in the Twilio simulator's ledger: `lost` when no event of the message was ever posted.
    receipts:
      message.protocol === 'eum' &&
      message.timeline.length > 0 &&
      message.eventsLost === message.timeline.length
        ? 'lost'
        : 'none',
  });

  const handleControl = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    const now = clock.now();
    switch (route) {
      case 'GET /_sim/health':
        return sendJson(res, 200, { status: 'ok', messages: messages.length, held_requests: held.size });
      case 'GET /_sim/messages': {
        const ref = url.searchParams.get('client_reference');
        const list = ref === null ? messages : messages.filter((m) => m.clientReference === ref);
        return sendJson(res, 200, { messages: list.map((m) => ledgerEntry(m, now)) });
      }
      case 'GET /_sim/requests':
        return sendJson(res, 200, { requests });
      case 'GET /_sim/receipts':
      case 'GET /_sim/callbacks':
        return sendJson(res, 200, { receipts });
      case 'GET /_sim/faults':
        return sendJson(res, 200, { faults: faults.view() });
      case 'POST /_sim/faults': {
        let input: unknown;
        try {
          input = JSON.parse((await readBody(req)) ?? '');
        } catch {
          return sendJson(res, 400, { code: 'invalid_fault_plan', message: 'body must be JSON' });
        }
        const parsed = parseAwsFaultPlans(input);
        if (!parsed.ok) return sendJson(res, 400, { code: 'invalid_fault_plan', message: parsed.message });
        faults.set(parsed.plans);
        log(
          `faults set: ${parsed.plans.map((p) => `${p.mode}x${p.remaining ?? 'inf'}@${p.probability}`).join(', ')}`,
        );
        return sendJson(res, 200, { faults: faults.view() });
      }
      case 'DELETE /_sim/faults':
        faults.clear();
        return sendJson(res, 200, { faults: [] });
      case 'POST /_sim/config': {
        let input: { events_url?: unknown };
        try {
          input = JSON.parse((await readBody(req)) ?? '') as { events_url?: unknown };
        } catch {
          return sendJson(res, 400, { code: 'invalid_config', message: 'body must be JSON' });
        }
        if (input.events_url !== undefined && typeof input.events_url !== 'string') {
          return sendJson(res, 400, { code: 'invalid_config', message: 'events_url must be a string' });
        }
        eventsUrl = input.events_url;
        return sendJson(res, 200, { events_url: eventsUrl ?? null });
      }
      case 'POST /_sim/oracle': {
        let input: { entries?: unknown };
        try {
          input = JSON.parse((await readBody(req)) ?? '') as { entries?: unknown };
        } catch {
          return sendJson(res, 400, { code: 'invalid_oracle', message: 'body must be JSON' });
        }
        if (!Array.isArray(input.entries))
          return sendJson(res, 400, { code: 'invalid_oracle', message: 'entries[]' });
        for (const entry of input.entries as { secret?: unknown; key?: unknown }[]) {
          if (typeof entry.secret === 'string' && typeof entry.key === 'string')
            oracle.set(entry.secret, entry.key);
        }
        return sendJson(res, 200, { entries: oracle.size });
      }
      case 'POST /_sim/reset':
        ledger?.clear();
        oracle.clear();
        oracleRequests.clear();
        messages.length = 0;
        byId.clear();
        requests.length = 0;
        receipts.length = 0;
        faults.clear();
        for (const cancel of timers) cancel();
        timers.clear();
        log('reset');
        return sendJson(res, 200, { status: 'reset' });
      default:
        return sendJson(res, 404, { code: 'not_found', message: `no control route ${route}` });
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // Loopback only, by address (the listener) and by name (DNS rebinding): docs/design.md#local-stack.
    if (!LOOPBACK_HOST.test(req.headers.host ?? '')) {
      return sendJson(res, 403, { code: 'forbidden', message: 'loopback Host only' });
    }
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    if (url.pathname === '/_sim' || url.pathname.startsWith('/_sim/')) return handleControl(req, res, url);
    if (faults.takeHang()) return hold(res, `${req.method} ${url.pathname} (hang)`);
    const raw = await readBody(req);
    if (raw === null) return send(res, 413, 'text/plain', 'request too large', { connection: 'close' });
    const target = String(req.headers['x-amz-target'] ?? '');
    const [service, operation = ''] = target.split('.');
    if (service === 'PinpointSMSVoiceV2') return handleEum(req, res, operation, raw);
    if (service === 'Logs_20140328') return handleLogs(res, operation, raw);
    if (req.method === 'POST' && target === '') return handleSns(req, res, raw);
    return sendJson(res, 404, { code: 'not_found', message: 'unknown protocol' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      log('request failed');
      send(res, 500, 'text/plain', 'internal error');
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
    eventsTopicArn,
    logGroups: { success: successGroup, failure: failureGroup },
    setEventsUrl(next) {
      eventsUrl = next;
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        for (const cancel of timers) cancel();
        timers.clear();
        stopping.abort();
        server.close(() => resolve());
        for (const res of held) res.destroy();
        held.clear();
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

/** The message ids a supported filter pattern names; an empty set for no pattern; null = unsupported. */
export function parsePattern(pattern: string): Set<string> | null {
  const trimmed = pattern.trim();
  if (trimmed === '') return new Set();
  const inner = /^\{(.*)\}$/s.exec(trimmed)?.[1];
  if (inner === undefined) return null;
  const ids = new Set<string>();
  for (const term of inner.split('||')) {
    const quoted = TERM.exec(term.trim())?.[1];
    if (quoted === undefined) return null;
    ids.add(JSON.parse(quoted) as string);
  }
  return ids;
}
