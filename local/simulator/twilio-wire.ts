/**
 * The Twilio Messages API's wire rules as the simulator applies them (./server.ts): request
 * validation, error bodies, Basic credentials, request signatures, schedules, `DateSent` days and
 * list orders, each as Twilio documents it (OpenAPI: ../shared/reference/twilio/). Pure: no state.
 */
import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type StoredMessage, stateAt } from './messages.js';

export const MAX_REQUEST_BYTES = 64 * 1024;
const MAX_BODY_CHARS = 1600;
export const MAX_VALIDITY_SECONDS = 36_000;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
const DAY_MS = 86_400_000;
export const CALLBACK_TIMEOUT_MS = 5_000;
/**
 * Message Scheduling's window: Twilio must receive the create request at least 15 minutes before
 * `SendAt` (error 35114) and at most 35 days before it (the scheduling page), 7 days in its FAQ:
 * the narrower of the documented windows, never kinder.
 */
const SCHEDULE_MIN_LEAD_MS = 15 * 60_000;
const SCHEDULE_MAX_LEAD_MS = 7 * DAY_MS;
const E164 = /^\+[1-9]\d{6,14}$/;
export const MESSAGES_ROUTE = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages(?:\/([^/]+))?\.json$/;

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

export type TwilioErrorSpec = readonly [code: number, message: string];

/** Twilio's request signature: HMAC-SHA1(token, url + sorted key/value pairs), base64. */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const pairs = [...params.entries()].sort(([a, av], [b, bv]) =>
    a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1,
  );
  const data = url + pairs.map(([k, v]) => k + v).join('');
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** `client_reference` from a StatusCallback URL's query, or null. */
export function referenceFrom(callback: string | null): string | null {
  if (callback === null) return null;
  try {
    return new URL(callback).searchParams.get('client_reference');
  } catch {
    return null;
  }
}

export function credentials(req: IncomingMessage): { sid: string; token: string } | null {
  const header = req.headers.authorization;
  if (header === undefined || !/^Basic\s+/i.test(header)) return null;
  const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) return null;
  return { sid: decoded.slice(0, colon), token: decoded.slice(colon + 1) };
}

export function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

export function twilioError(
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
export function scheduleOf(form: URLSearchParams, now: number): { sendAt?: number } | TwilioErrorSpec {
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
export function validateSend(form: URLSearchParams, now: number): TwilioErrorSpec | null {
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
export function parseDay(value: string): { from: number; to: number } | null {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Date.parse(value);
  if (Number.isNaN(day)) return null;
  const start = Math.floor(day / DAY_MS) * DAY_MS;
  return { from: start, to: start + DAY_MS };
}

export const LIST_FILTERS = ['To', 'From', 'DateSent', 'DateSent>', 'DateSent<'] as const;

/** Newest created first. */
export const byCreation = (a: StoredMessage, b: StoredMessage) => b.seq - a.seq;

/** Newest `date_sent` first, messages not sent yet before all others; ties newest created first. */
export const bySendTime = (now: number) => {
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
export const AUTHENTICATE: TwilioErrorSpec = [20003, 'Authenticate'];
