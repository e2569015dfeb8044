/**
 * The one table that turns what a Twilio send call produced into a {@link SendOutcome}
 * (docs/design.md#states: accepted / definitely not sent, retryable or permanent / unknown; when in
 * doubt, unknown). Pure: the adapter reduces a call to a {@link SendObservation}, this module decides.
 *
 * The line between "not sent" and "unknown": a message can only exist if Twilio received the
 * request. So only failures that happen before a connection exists (refused, DNS, connect
 * timeout) and answers in which Twilio itself says "I did not do it" (4xx other than 408) are
 * "not sent". Everything after the request may have been written (resets, our deadline, 5xx,
 * 3xx, unreadable 2xx) is unknown: Twilio documents that a 500 on a create-message POST may still
 * have produced a message, and documents no 503 variant that guarantees "not processed".
 */
import type { ProviderStatus, SendOutcome } from '../../domain/provider.js';

/** What a send call produced, reduced to the facts the table needs. */
export type SendObservation = TransportObservation | HttpObservation;

/** The call failed without an HTTP response (or while reading its body). */
export interface TransportObservation {
  readonly kind: 'transport';
  /** Our own deadline (the AbortSignal) fired. */
  readonly timedOut: boolean;
  /** The system or undici error code found on the error or its causes, if any. */
  readonly code: string | null;
}

/** An HTTP response was read completely. */
export interface HttpObservation {
  readonly kind: 'http';
  readonly status: number;
  /** From `Retry-After`, already made relative to now; null when absent or unparsable. */
  readonly retryAfterMs: number | null;
  readonly body: TwilioBody;
}

/** The response body as far as classification cares. */
export type TwilioBody =
  | { readonly kind: 'message'; readonly sid: string }
  | { readonly kind: 'error'; readonly code: number }
  | { readonly kind: 'other' };

/** One row of the table: the first row whose `matches` holds decides. */
export interface SendRule {
  readonly id: string;
  /** The outcome kind this row produces (tests assert it). */
  readonly outcome: SendOutcome['kind'];
  /** For `unknown` rows: whether the row reports a timeout. */
  readonly timedOut?: boolean;
  readonly why: string;
  readonly matches: (o: SendObservation) => boolean;
  readonly classify: (o: SendObservation) => SendOutcome;
}

/**
 * A Twilio message sid: `SM` (or `MM` for MMS) and 32 hex digits, either case (the pattern of the
 * `sid` property in Twilio's OpenAPI document).
 */
export const MESSAGE_SID = /^(SM|MM)[0-9a-fA-F]{32}$/;

/**
 * Twilio API error codes that say this command can never succeed as it is (destination or content).
 * Everything else Twilio refuses with a 4xx is "not sent, retryable": credentials, sender and account
 * configuration are ours to fix, and retries are bounded by the attempt limit and the token's life.
 */
export const PERMANENT_TWILIO_CODES: Readonly<Record<number, string>> = {
  21211: "invalid 'To' phone number",
  21214: "'To' phone number cannot be reached",
  21217: 'phone number does not appear to be valid',
  21265: "'To' number cannot be a short code",
  21266: "'To' and 'From' cannot be the same",
  21407: 'phone number type does not support SMS',
  21602: 'message body is required',
  21604: "'To' phone number is required",
  21610: 'recipient unsubscribed (STOP)',
  21614: "'To' number is not a valid mobile number",
  21617: 'body exceeds 1600 characters',
  21624: 'invalid validity period',
};

/**
 * Twilio API error codes that are our configuration, not the destination: the same command can
 * succeed once the account is fixed. Retryable, with a detail of their own
 * (`twilio:config:<code>`) so a metric can count them apart from transient refusals. 21408 (geo
 * permissions) is not here: it is {@link TWILIO_FAILED_CODES}' "not sent, permanent" on every path.
 */
export const CONFIGURATION_TWILIO_CODES: Readonly<Record<number, string>> = {
  21612: "the 'From' sender cannot reach the 'To' number (sender/route configuration)",
};

/** What a `failed` message's error code says, by Twilio's documentation (docs/providers/twilio.md). */
export type FailedCodeClass = 'not_sent_retryable' | 'not_sent_permanent';

/** One row of {@link TWILIO_FAILED_CODES}. */
export interface FailedCodeRule {
  readonly class: FailedCodeClass;
  /** Twilio's title of the code. */
  readonly title: string;
  /** The Twilio page the classification rests on. */
  readonly source: string;
}

const ERROR_PAGE = 'https://www.twilio.com/docs/api/errors/';
const FEE_PAGE = 'https://support.twilio.com/hc/en-us/articles/27502337507483-Failed-Message-Processing-Fees';
const retryable = (title: string, source: string): FailedCodeRule => ({
  class: 'not_sent_retryable',
  title,
  source,
});
const permanent = (title: string, source: string): FailedCodeRule => ({
  class: 'not_sent_permanent',
  title,
  source,
});

/**
 * Error codes with which a `failed` message was, by Twilio's documentation, never handed to a
 * carrier ("failed: the message could not be sent"; the failed-message fee page names the codes
 * that are Twilio's own failures, account suspension, geo permissions and pumping protection):
 * - `not_sent_retryable`: Twilio's own failure or its queue; a new attempt may succeed while the
 *   token lives (30500: "Try sending the message again").
 * - `not_sent_permanent`: the account, its geo permissions or SMS Pumping Protection stopped it; a
 *   new attempt cannot help within a token's life (or, for 30450, feeds the block), so the command
 *   ends `failed` and an operator is paged (the failed-outcome alarm).
 * Any other `failed` code, and every `undelivered`, may have reached a carrier: it reads as
 * `undelivered`, a message that exists, and is never sent again.
 */
export const TWILIO_FAILED_CODES: Readonly<Record<number, FailedCodeRule>> = {
  30001: retryable('Queue overflow', `${ERROR_PAGE}30001`),
  30036: retryable('Validity Period Expired', `${ERROR_PAGE}30036`),
  30500: retryable('Twilio Internal Error', `${ERROR_PAGE}30500`),
  12400: retryable('Internal Failure', `${ERROR_PAGE}12400`),
  20500: retryable('Internal Server Error', `${ERROR_PAGE}20500`),
  20504: retryable('Twilio internal error (failed-message fee page)', FEE_PAGE),
  30103: retryable('Twilio internal error (failed-message fee page)', FEE_PAGE),
  30002: permanent('Account suspended', `${ERROR_PAGE}30002`),
  90010: permanent('Account is not active', `${ERROR_PAGE}90010`),
  30454: permanent('Twilio-imposed trial or fraud detection limit (failed-message fee page)', FEE_PAGE),
  21408: permanent('Message blocked: permissions disabled for the destination region', `${ERROR_PAGE}21408`),
  30450: permanent('Message delivery blocked (SMS Pumping Protection)', `${ERROR_PAGE}30450`),
};

/**
 * The codes of {@link TWILIO_FAILED_CODES} that are "not sent, retryable" (kept under its former
 * name: the status-normalisation tests and older callers read it).
 */
export const NOT_SENT_ERROR_CODES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(TWILIO_FAILED_CODES)
    .filter(([, rule]) => rule.class === 'not_sent_retryable')
    .map(([code, rule]) => [code, rule.title]),
);

/** Connection-stage failures: no connection existed, so no byte of the request was written. */
const NEVER_CONNECTED: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection_refused',
  ENOTFOUND: 'dns_unresolved',
  EAI_AGAIN: 'dns_unresolved',
  UND_ERR_CONNECT_TIMEOUT: 'connect_timeout',
};

/** undici's own timeouts after the request was written. */
const RESPONSE_TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

const isTransport = (o: SendObservation): o is TransportObservation => o.kind === 'transport';
const isHttp = (o: SendObservation): o is HttpObservation => o.kind === 'http';
const inRange = (o: SendObservation, from: number, to: number) =>
  isHttp(o) && o.status >= from && o.status <= to;
const is4xx = (o: SendObservation): o is HttpObservation => inRange(o, 400, 499);
const twilioCode = (o: HttpObservation): number | null => (o.body.kind === 'error' ? o.body.code : null);
const httpDetail = (o: SendObservation) => {
  if (!isHttp(o)) return 'transport';
  const code = twilioCode(o);
  return code === null ? `http_${o.status}` : `twilio_${code}`;
};

/** The classification table, in evaluation order. The last row matches everything. */
export const SEND_CLASSIFICATION: readonly SendRule[] = [
  {
    id: 'deadline_reached',
    outcome: 'unknown',
    timedOut: true,
    why: 'our deadline fired; the request may have been written and accepted',
    matches: (o) => isTransport(o) && o.timedOut,
    classify: () => ({ kind: 'unknown', detail: 'timeout', timedOut: true }),
  },
  {
    id: 'never_connected',
    outcome: 'not_sent_retryable',
    why: 'refused, unresolvable or not connected in time: no connection, so nothing was written',
    matches: (o) => isTransport(o) && o.code !== null && Object.hasOwn(NEVER_CONNECTED, o.code),
    classify: (o) => ({
      kind: 'not_sent_retryable',
      detail: (isTransport(o) && o.code !== null && NEVER_CONNECTED[o.code]) || 'not_connected',
    }),
  },
  {
    id: 'response_timeout',
    outcome: 'unknown',
    timedOut: true,
    why: 'the request was written and the answer did not come in time',
    matches: (o) => isTransport(o) && o.code !== null && RESPONSE_TIMEOUTS.has(o.code),
    classify: () => ({ kind: 'unknown', detail: 'response_timeout', timedOut: true }),
  },
  {
    id: 'transport_failed',
    outcome: 'unknown',
    timedOut: false,
    why: 'reset, closed or failed after connecting: the request may have reached Twilio',
    matches: isTransport,
    classify: (o) => ({
      kind: 'unknown',
      detail: `transport_${(isTransport(o) && o.code) || 'error'}`,
      timedOut: false,
    }),
  },
  {
    id: 'accepted',
    outcome: 'accepted',
    why: '2xx with a well-formed message sid: Twilio created the message',
    matches: (o) => inRange(o, 200, 299) && isHttp(o) && o.body.kind === 'message',
    classify: (o) => ({
      kind: 'accepted',
      messageId: isHttp(o) && o.body.kind === 'message' ? o.body.sid : '',
    }),
  },
  {
    id: 'success_without_sid',
    outcome: 'unknown',
    timedOut: false,
    why: 'a 2xx we cannot read: the message probably exists but we have no id',
    matches: (o) => inRange(o, 200, 299),
    classify: (o) => ({ kind: 'unknown', detail: `unreadable_${httpDetail(o)}`, timedOut: false }),
  },
  {
    id: 'redirect',
    outcome: 'unknown',
    timedOut: false,
    why: 'redirects are not followed (following would re-send); what happened is unclear',
    matches: (o) => inRange(o, 300, 399),
    classify: (o) => ({ kind: 'unknown', detail: httpDetail(o), timedOut: false }),
  },
  {
    id: 'request_timeout',
    outcome: 'unknown',
    timedOut: true,
    why: '408: a timeout somewhere on the path; conservatively unknown',
    matches: (o) => inRange(o, 408, 408),
    classify: () => ({ kind: 'unknown', detail: 'http_408', timedOut: true }),
  },
  {
    id: 'rate_limited',
    outcome: 'not_sent_retryable',
    why: '429: Twilio refused before creating anything; honour Retry-After',
    matches: (o) => inRange(o, 429, 429),
    classify: (o) => {
      const retryAfterMs = isHttp(o) ? o.retryAfterMs : null;
      return {
        kind: 'not_sent_retryable',
        detail: 'rate_limited',
        ...(retryAfterMs === null ? {} : { retryAfterMs }),
      };
    },
  },
  {
    id: 'rejected_permanent',
    outcome: 'not_sent_permanent',
    why: 'a 4xx whose Twilio code is about the destination or the content: retrying cannot help',
    matches: (o) => is4xx(o) && Object.hasOwn(PERMANENT_TWILIO_CODES, twilioCode(o) ?? 0),
    classify: (o) => ({ kind: 'not_sent_permanent', detail: httpDetail(o) }),
  },
  {
    id: 'rejected_account_permanent',
    outcome: 'not_sent_permanent',
    why: 'a 4xx whose Twilio code is a "not sent, permanent" failed code (21408 geo permissions): page, never retry',
    matches: (o) => {
      const code = isHttp(o) ? twilioCode(o) : null;
      return is4xx(o) && code !== null && TWILIO_FAILED_CODES[code]?.class === 'not_sent_permanent';
    },
    classify: (o) => ({
      kind: 'not_sent_permanent',
      detail: `twilio:${isHttp(o) ? (twilioCode(o) ?? 0) : 0}`,
    }),
  },
  {
    id: 'rejected_configuration',
    outcome: 'not_sent_retryable',
    why: "a 4xx whose Twilio code is our account's configuration (the sender's route)",
    matches: (o) => is4xx(o) && Object.hasOwn(CONFIGURATION_TWILIO_CODES, twilioCode(o) ?? 0),
    classify: (o) => ({
      kind: 'not_sent_retryable',
      detail: `twilio:config:${isHttp(o) ? (twilioCode(o) ?? 0) : 0}`,
    }),
  },
  {
    id: 'auth_rejected',
    outcome: 'not_sent_retryable',
    why: '401/403: nothing was processed; wrong or rotated credentials are ours to fix, not the command',
    matches: (o) => inRange(o, 401, 401) || inRange(o, 403, 403),
    classify: (o) => ({ kind: 'not_sent_retryable', detail: `auth_rejected_${httpDetail(o)}` }),
  },
  {
    id: 'rejected_retryable',
    outcome: 'not_sent_retryable',
    why: 'any other 4xx: refused, so not sent; the cause (sender, account, queue) may clear',
    matches: is4xx,
    classify: (o) => ({ kind: 'not_sent_retryable', detail: httpDetail(o) }),
  },
  {
    id: 'server_error',
    outcome: 'unknown',
    timedOut: false,
    why: '5xx: Twilio documents that a failed create-message POST may still have sent',
    matches: (o) => inRange(o, 500, 599),
    classify: (o) => ({
      kind: 'unknown',
      detail: httpDetail(o),
      timedOut: false,
      // A sid in an error answer is a strong hint the message exists: lookups can use it.
      ...(isHttp(o) && o.body.kind === 'message' ? { messageId: o.body.sid } : {}),
    }),
  },
  {
    id: 'unexpected',
    outcome: 'unknown',
    timedOut: false,
    why: 'anything else: when in doubt, unknown',
    matches: () => true,
    classify: (o) => ({ kind: 'unknown', detail: httpDetail(o), timedOut: false }),
  },
];

/** The row that decides an observation. */
export function matchSendRule(observation: SendObservation): SendRule {
  // The last row matches everything, so find() always succeeds; the fallback keeps types honest.
  return (
    SEND_CLASSIFICATION.find((rule) => rule.matches(observation)) ?? (SEND_CLASSIFICATION.at(-1) as SendRule)
  );
}

/** Classifies one send call. */
export function classifySend(observation: SendObservation): SendOutcome {
  return matchSendRule(observation).classify(observation);
}

/** Reads a send response body: a message with a well-formed sid, a Twilio error, or other. */
export function parseSendBody(text: string): TwilioBody {
  const json = parseJson(text);
  if (typeof json !== 'object' || json === null) return { kind: 'other' };
  const record = json as Record<string, unknown>;
  if (typeof record.sid === 'string' && MESSAGE_SID.test(record.sid))
    return { kind: 'message', sid: record.sid };
  if (typeof record.code === 'number' && Number.isInteger(record.code))
    return { kind: 'error', code: record.code };
  return { kind: 'other' };
}

/** `JSON.parse` that returns undefined instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `Retry-After` (delta-seconds or HTTP-date) as milliseconds from `now`; null when absent or invalid. */
export function parseRetryAfter(header: string | null, now: number): number | null {
  if (header === null) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/[a-z]/i.test(trimmed)) return null;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Reduces a thrown fetch error to a {@link TransportObservation}. `aborted` is whether our own
 * deadline signal had fired: then it is a timeout whatever the error looks like.
 */
export function observeTransportError(error: unknown, aborted: boolean): TransportObservation {
  const name = error instanceof Error ? error.name : '';
  const timedOut = aborted || name === 'TimeoutError' || name === 'AbortError';
  return { kind: 'transport', timedOut, code: errorCode(error) };
}

/** The first error code on the error or its `cause` chain (undici wraps the socket error). */
function errorCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const record = current as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof record.code === 'string') return record.code;
    // AggregateError from happy-eyeballs connects: one code only if every attempt agrees.
    if (Array.isArray(record.errors) && record.errors.length > 0) {
      const codes = new Set(record.errors.map((e) => errorCode(e)));
      const [only] = [...codes];
      if (codes.size === 1 && typeof only === 'string') return only;
      return null;
    }
    current = record.cause;
  }
  return null;
}

/**
 * Twilio message statuses, normalised. A status we do not know still proves the message exists,
 * so it reads as `pending` (keep polling) rather than as a lookup failure.
 */
export const TWILIO_STATUS_MAP: Readonly<Record<string, ProviderStatus>> = {
  accepted: 'pending',
  scheduled: 'pending',
  queued: 'pending',
  sending: 'pending',
  sent: 'sent',
  partially_delivered: 'sent',
  delivered: 'delivered',
  read: 'delivered',
  undelivered: 'undelivered',
  failed: 'undelivered',
  canceled: 'undelivered',
};

/**
 * Normalises a Twilio status string (unknown strings read as `pending`). With the message's
 * `error_code`, a `failed` message reads by {@link TWILIO_FAILED_CODES}: `not_sent` (retryable) or
 * `not_sent_permanent`; any other `failed` is `undelivered`.
 */
export function normaliseStatus(status: unknown, errorCode?: unknown): ProviderStatus {
  if (status === 'failed') {
    const rule = failedCodeRule(errorCode);
    if (rule !== undefined) return rule.class === 'not_sent_retryable' ? 'not_sent' : 'not_sent_permanent';
  }
  return (
    (typeof status === 'string' && Object.hasOwn(TWILIO_STATUS_MAP, status) && TWILIO_STATUS_MAP[status]) ||
    'pending'
  );
}

/**
 * The detail of a final Twilio status, in the `reason_detail` grammar: `twilio:<error_code>` when
 * the message carries one (`twilio:30500`), else `twilio:<status>` for a final status without a
 * code (`twilio:undelivered`), else undefined (still pending, or not a status we know).
 */
export function statusDetail(status: unknown, errorCode?: unknown): string | undefined {
  const code = numericCode(errorCode);
  if (code !== undefined && (status === 'failed' || status === 'undelivered')) return `twilio:${code}`;
  if (status === 'failed' || status === 'undelivered' || status === 'canceled') return `twilio:${status}`;
  return undefined;
}

/** The {@link TWILIO_FAILED_CODES} row of an `error_code` (number or numeric string), if any. */
export function failedCodeRule(errorCode: unknown): FailedCodeRule | undefined {
  const code = numericCode(errorCode);
  return code !== undefined && Object.hasOwn(TWILIO_FAILED_CODES, code)
    ? TWILIO_FAILED_CODES[code]
    : undefined;
}

/** An error code as a number: a safe integer, or a string of at most 6 digits; else undefined. */
function numericCode(errorCode: unknown): number | undefined {
  if (typeof errorCode === 'number')
    return Number.isSafeInteger(errorCode) && errorCode > 0 ? errorCode : undefined;
  return typeof errorCode === 'string' && /^\d{1,6}$/.test(errorCode) ? Number(errorCode) : undefined;
}
