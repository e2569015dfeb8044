/**
 * The three AWS protocols of the AWS simulator (./server.ts): SNS `Publish` (Query protocol),
 * End User Messaging `SendTextMessage` / `PutMessageFeedback` (JSON 1.0) and CloudWatch Logs
 * `FilterLogEvents` (JSON 1.1) over the SNS delivery-status groups, as the module comment of
 * ./server.ts describes them.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AwsFaultPlan } from './faults.js';
import {
  type AwsState,
  accept,
  deliveryLine,
  isSuccess,
  oracleKeyOf,
  type RequestRecord,
  type Step,
} from './state.js';
import {
  E164,
  EUM_MAX_BODY,
  EUM_MAX_TTL,
  EUM_MIN_TTL,
  jsonError,
  LOG_PAGE_SIZE,
  parsePattern,
  send,
  sendJson,
  snsError,
} from './wire.js';

/** The common fault handling of one well-formed send; returns true when the request was answered. */
function applySendFault(
  sim: AwsState,
  plan: AwsFaultPlan | null,
  res: ServerResponse,
  record: RequestRecord,
  answer: (kind: 'throttled' | 'unavailable' | 'permanent') => void,
): 'handled' | 'accept' | 'accept_then_500' | 'accept_then_hold' | 'accept_not_sent' {
  switch (plan?.mode) {
    case 'timeout_before_accept':
      sim.kernel.hold(res, `send ${record.client_reference ?? '-'} (timeout_before_accept)`);
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
    case 'brownout':
      return 'accept_then_hold';
    case 'error_5xx_after_accept':
      return 'accept_then_500';
    case 'fail_not_sent':
      return 'accept_not_sent';
    default:
      return 'accept';
  }
}

export async function handleSns(sim: AwsState, req: IncomingMessage, res: ServerResponse, raw: string) {
  const form = new URLSearchParams(raw);
  const action = form.get('Action');
  if (action !== 'Publish')
    return snsError(res, 400, 'InvalidAction', `action ${action ?? '-'} is not simulated`);
  const record: RequestRecord = {
    received_at: sim.kernel.isoNow(),
    protocol: 'sns',
    client_reference: null,
    fault: null,
    outcome: 'not_recorded',
    message_id: null,
    http_status: null,
  };
  sim.requests.push(record);
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
  const oracleKey = oracleKeyOf(sim, body);
  if (oracleKey !== null) {
    const n = (sim.oracleRequests.get(oracleKey) ?? 0) + 1;
    sim.oracleRequests.set(oracleKey, n);
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
  // A brownout fires first: the send family's plans wait for the sends it spares.
  const plan = sim.faults.takeBrownout() ?? sim.faults.takeForSend();
  record.fault = plan?.mode ?? null;
  const next = applySendFault(sim, plan, res, record, (kind) => {
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
  const message = accept(sim, 'sns', to, body, record.client_reference, null, next === 'accept_not_sent');
  record.outcome = 'recorded';
  record.message_id = message.id;
  sim.kernel.log(`publish accepted id=${message.id}${plan ? ` (${plan.mode})` : ''}`);
  if (next === 'accept_then_hold') return sim.kernel.hold(res, `publish id=${message.id} (${plan?.mode})`);
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
}

const EUM_NS = 'com.amazonaws.pinpointsmsvoicev2';

type EumInput = Record<string, unknown>;
type EumRefusal = readonly [status: number, name: string, message: string, fields?: Record<string, unknown>];

/** `PutMessageFeedback`: the feedback is kept on the message (the ledger's `feedback`). */
function putFeedback(sim: AwsState, res: ServerResponse, input: EumInput) {
  const message = typeof input.MessageId === 'string' ? sim.ledger.get(input.MessageId) : undefined;
  if (message === undefined || message.protocol !== 'eum') {
    return jsonError(res, EUM_NS, 404, 'ResourceNotFoundException', 'message not found', {
      ResourceType: 'message',
    });
  }
  message.feedback = String(input.MessageFeedbackStatus ?? '');
  sim.ledger.persist(message);
  return sendJson(
    res,
    200,
    { MessageId: message.id, MessageFeedbackStatus: message.feedback },
    'application/x-amz-json-1.0',
  );
}

/** The service's refusal of a `SendTextMessage` request, or null for a well-formed one. */
function refusalOf(sim: AwsState, req: IncomingMessage, input: EumInput): EumRefusal | null {
  if (!req.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) {
    return [400, 'UnrecognizedClientException', 'The security token included in the request is invalid.'];
  }
  const to = input.DestinationPhoneNumber;
  const body = input.MessageBody;
  const ttl = input.TimeToLive;
  if (typeof to !== 'string' || !E164.test(to)) {
    return [400, 'ValidationException', 'invalid destination', { Reason: 'INVALID_PARAMETER' }];
  }
  if (typeof body !== 'string' || body.trim() === '' || [...body].length > EUM_MAX_BODY) {
    return [400, 'ValidationException', 'invalid message body', { Reason: 'FIELD_VALIDATION_FAILED' }];
  }
  if (
    ttl !== undefined &&
    !(Number.isInteger(ttl) && (ttl as number) >= EUM_MIN_TTL && (ttl as number) <= EUM_MAX_TTL)
  ) {
    return [400, 'ValidationException', 'TimeToLive out of range', { Reason: 'FIELD_VALIDATION_FAILED' }];
  }
  if (typeof input.OriginationIdentity !== 'string' || input.OriginationIdentity === '') {
    return [404, 'ResourceNotFoundException', 'origination identity not found', { ResourceType: 'pool' }];
  }
  if (
    typeof input.ConfigurationSetName !== 'string' ||
    input.ConfigurationSetName === '' ||
    (sim.configurationSets !== undefined && !sim.configurationSets.includes(input.ConfigurationSetName))
  ) {
    return [
      404,
      'ResourceNotFoundException',
      'configuration set not found',
      { ResourceType: 'configuration-set' },
    ];
  }
  return null;
}

/** `SendTextMessage`: refused, faulted, or accepted (with its events scheduled). */
function sendText(sim: AwsState, req: IncomingMessage, res: ServerResponse, input: EumInput) {
  const context = (input.Context ?? {}) as Record<string, unknown>;
  const reference = typeof context.client_reference === 'string' ? context.client_reference : null;
  const record: RequestRecord = {
    received_at: sim.kernel.isoNow(),
    protocol: 'eum',
    client_reference: reference,
    fault: null,
    outcome: 'not_recorded',
    message_id: null,
    http_status: null,
  };
  sim.requests.push(record);
  const fail = (status: number, name: string, message: string, fields: Record<string, unknown> = {}) => {
    record.http_status = status;
    sim.kernel.log(`send rejected http=${status} ${name} client_reference=${reference ?? '-'}`);
    jsonError(res, EUM_NS, status, name, message, fields);
  };
  const refusal = refusalOf(sim, req, input);
  if (refusal !== null) return fail(...refusal);
  // A brownout fires first: the send family's plans wait for the sends it spares.
  const plan = sim.faults.takeBrownout() ?? sim.faults.takeForSend();
  record.fault = plan?.mode ?? null;
  const next = applySendFault(sim, plan, res, record, (kind) => {
    if (kind === 'throttled') fail(400, 'ThrottlingException', 'Rate exceeded');
    else if (kind === 'unavailable') fail(503, 'InternalServerException', 'Service Unavailable');
    else
      fail(409, 'ConflictException', 'destination opted out', {
        Reason: 'DESTINATION_PHONE_NUMBER_OPTED_OUT',
      });
  });
  if (next === 'handled') return;
  const ttl = input.TimeToLive;
  const message = accept(
    sim,
    'eum',
    input.DestinationPhoneNumber as string,
    input.MessageBody as string,
    reference,
    typeof ttl === 'number' ? ttl : 259_200,
    next === 'accept_not_sent',
  );
  record.outcome = 'recorded';
  record.message_id = message.id;
  sim.kernel.log(
    `send accepted id=${message.id} client_reference=${reference ?? '-'}${plan ? ` (${plan.mode})` : ''}`,
  );
  if (next === 'accept_then_hold') return sim.kernel.hold(res, `send id=${message.id} (${plan?.mode})`);
  if (next === 'accept_then_500') return fail(500, 'InternalServerException', 'Internal Error');
  record.http_status = 200;
  sendJson(res, 200, { MessageId: message.id }, 'application/x-amz-json-1.0');
}

/** End User Messaging SMS (JSON 1.0): `SendTextMessage` and `PutMessageFeedback`. */
export async function handleEum(
  sim: AwsState,
  req: IncomingMessage,
  res: ServerResponse,
  operation: string,
  raw: string,
) {
  let input: EumInput;
  try {
    input = JSON.parse(raw === '' ? '{}' : raw) as EumInput;
  } catch {
    return jsonError(res, EUM_NS, 400, 'ValidationException', 'cannot parse', { Reason: 'CANNOT_PARSE' });
  }
  if (operation === 'PutMessageFeedback') return putFeedback(sim, res, input);
  if (operation !== 'SendTextMessage') {
    return jsonError(res, EUM_NS, 400, 'ValidationException', `${operation} is not simulated`, {
      Reason: 'UNKNOWN_OPERATION',
    });
  }
  return sendText(sim, req, res, input);
}

const LOGS_NS = 'com.amazonaws.cloudwatchlogs';

export async function handleLogs(sim: AwsState, res: ServerResponse, operation: string, raw: string) {
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
  const now = sim.kernel.clock.now();
  const failures = sim.ledger.all.filter(
    (m) => m.protocol === 'sns' && !isSuccess(m) && m.logVisibleAt <= now,
  );
  if (group !== sim.successGroup && !(group === sim.failureGroup && failures.length > 0)) {
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
  const wantFailure = group === sim.failureGroup;
  const lines = sim.ledger.all
    .filter((m) => m.protocol === 'sns' && m.logged && m.logVisibleAt <= now && isSuccess(m) !== wantFailure)
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
}
