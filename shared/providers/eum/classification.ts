import type { SendOutcome } from '../../domain/provider.js';

/** The three outcomes a `SendTextMessage` error can mean (success is handled before classification). */
export type EumErrorKind = Exclude<SendOutcome['kind'], 'accepted'>;

/**
 * Why a send was refused, for metrics: `access` and `configuration` are our deployment's fault
 * (IAM, account state, a missing or inactive configuration set, origination identity or protect
 * configuration) and page someone; `throttled` and `quota` are load; `validation` and
 * `blocked_destination` are this message or this number; `server` and `transport` are doubt.
 */
export type EumErrorCategory =
  | 'throttled'
  | 'quota'
  | 'validation'
  | 'blocked_destination'
  | 'access'
  | 'configuration'
  | 'server'
  | 'transport';

interface Rule {
  readonly kind: EumErrorKind;
  readonly category: EumErrorCategory;
}

const rule = (kind: EumErrorKind, category: EumErrorCategory): Rule => ({ kind, category });

/**
 * The one classification table of End User Messaging SMS (`pinpoint-sms-voice-v2`)
 * `SendTextMessage` errors, from the operation's documented errors (`AccessDeniedException`,
 * `ConflictException`, `InternalServerException`, `ResourceNotFoundException`,
 * `ServiceQuotaExceededException`, `ThrottlingException`, `ValidationException`) and their
 * `Reason` enums in the SDK model. Lookup order: `byNameAndReason` (`<name>:<Reason>`), `byName`,
 * `byNetworkCode`, `byHttpStatus`, `byHttpStatusClass`, `fallback`.
 *
 * - Every 4xx the service answers is a refusal before acceptance: no message exists. Throttling and
 *   quotas may clear: retryable. Access and configuration errors are retryable too (a fix makes
 *   the next attempt work) but carry their own category so a metric can alarm on them.
 * - `ValidationException` and the blocked-destination `ConflictException` reasons (opted out,
 *   blocked by the protect configuration, unverified destination in the sandbox) cannot work for
 *   this message: permanent.
 * - `InternalServerException`, 5xx, timeouts and broken connections: the message may exist: unknown.
 */
export const EUM_SEND_ERROR_CLASSIFICATION = {
  byNameAndReason: {
    'ConflictException:DESTINATION_PHONE_NUMBER_OPTED_OUT': rule('not_sent_permanent', 'blocked_destination'),
    'ConflictException:DESTINATION_COUNTRY_BLOCKED_BY_PROTECT_CONFIGURATION': rule(
      'not_sent_permanent',
      'blocked_destination',
    ),
    'ConflictException:DESTINATION_PHONE_NUMBER_BLOCKED_BY_PROTECT_NUMBER_OVERRIDE': rule(
      'not_sent_permanent',
      'blocked_destination',
    ),
    'ConflictException:DESTINATION_PHONE_NUMBER_NOT_VERIFIED': rule(
      'not_sent_permanent',
      'blocked_destination',
    ),
    'ValidationException:DESTINATION_COUNTRY_BLOCKED': rule('not_sent_permanent', 'blocked_destination'),
    'ValidationException:CANNOT_ADD_OPTED_OUT_NUMBER': rule('not_sent_permanent', 'blocked_destination'),
  } as Readonly<Record<string, Rule>>,
  byName: {
    ThrottlingException: rule('not_sent_retryable', 'throttled'),
    ServiceQuotaExceededException: rule('not_sent_retryable', 'quota'),
    ValidationException: rule('not_sent_permanent', 'validation'),
    // Any other conflict reason is the state of our own resources (inactive, mismatched types...).
    ConflictException: rule('not_sent_retryable', 'configuration'),
    ResourceNotFoundException: rule('not_sent_retryable', 'configuration'),
    AccessDeniedException: rule('not_sent_retryable', 'access'),
    // Signing and credential errors from the AWS front door: nothing reached the service.
    UnrecognizedClientException: rule('not_sent_retryable', 'access'),
    InvalidSignatureException: rule('not_sent_retryable', 'access'),
    IncompleteSignatureException: rule('not_sent_retryable', 'access'),
    ExpiredTokenException: rule('not_sent_retryable', 'access'),
    MissingAuthenticationTokenException: rule('not_sent_retryable', 'access'),
    CredentialsProviderError: rule('not_sent_retryable', 'access'),
    InternalServerException: rule('unknown', 'server'),
    ServiceUnavailableException: rule('unknown', 'server'),
    InternalFailure: rule('unknown', 'server'),
    TimeoutError: rule('unknown', 'transport'),
    RequestTimeout: rule('unknown', 'transport'),
    AbortError: rule('unknown', 'transport'),
  } as Readonly<Record<string, Rule>>,
  byNetworkCode: {
    // No connection was ever made: nothing reached the service.
    ECONNREFUSED: rule('not_sent_retryable', 'transport'),
    ENOTFOUND: rule('not_sent_retryable', 'transport'),
    EAI_AGAIN: rule('not_sent_retryable', 'transport'),
    // The connection broke while the request was in flight: it may have been processed.
    ECONNRESET: rule('unknown', 'transport'),
    EPIPE: rule('unknown', 'transport'),
    ETIMEDOUT: rule('unknown', 'transport'),
    ECONNABORTED: rule('unknown', 'transport'),
  } as Readonly<Record<string, Rule>>,
  byHttpStatus: {
    408: rule('unknown', 'transport'),
    429: rule('not_sent_retryable', 'throttled'),
  } as Readonly<Record<number, Rule>>,
  byHttpStatusClass: {
    4: rule('not_sent_retryable', 'configuration'),
    5: rule('unknown', 'server'),
  } as Readonly<Record<number, Rule>>,
  fallback: rule('unknown', 'transport'),
} as const;

const TIMEOUT_NAMES: ReadonlySet<string> = new Set(['TimeoutError', 'RequestTimeout', 'AbortError']);

/** One classified error; `detail` (`eum:<category>:<name>[:<reason>]`) is safe to store and to use as a metric dimension. */
export interface EumErrorClassification {
  readonly kind: EumErrorKind;
  readonly category: EumErrorCategory;
  readonly detail: string;
  readonly timedOut: boolean;
}

/** Classifies an error thrown by `SendTextMessage` with {@link EUM_SEND_ERROR_CLASSIFICATION}. */
export function classifyEumSendError(error: unknown): EumErrorClassification {
  const table = EUM_SEND_ERROR_CLASSIFICATION;
  const { name, reason, code, status } = describe(error);
  const timedOut = (name !== undefined && TIMEOUT_NAMES.has(name)) || code === 'ETIMEDOUT' || status === 408;
  const label = [name ?? code ?? (status === undefined ? 'unrecognised_error' : `http_${status}`)];
  if (reason !== undefined) label.push(reason);
  const found =
    (name !== undefined && reason !== undefined
      ? own(table.byNameAndReason, `${name}:${reason}`)
      : undefined) ??
    (name === undefined ? undefined : own(table.byName, name)) ??
    (code === undefined ? undefined : own(table.byNetworkCode, code)) ??
    (status === undefined
      ? undefined
      : (own(table.byHttpStatus, status) ?? own(table.byHttpStatusClass, Math.floor(status / 100)))) ??
    table.fallback;
  return {
    kind: found.kind,
    category: found.category,
    detail: `eum:${found.category}:${label.join(':')}`,
    timedOut,
  };
}

function own<K extends string | number>(record: Readonly<Record<K, Rule>>, key: K): Rule | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

const SAFE_TOKEN = /^[A-Za-z0-9_.-]{1,80}$/;

function describe(error: unknown): { name?: string; reason?: string; code?: string; status?: number } {
  if (typeof error !== 'object' || error === null) return {};
  const e = error as {
    name?: unknown;
    Reason?: unknown;
    code?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  const out: { name?: string; reason?: string; code?: string; status?: number } = {};
  // Only enum-like tokens go into a detail: never a message text that could echo the request.
  if (typeof e.name === 'string' && e.name !== 'Error' && SAFE_TOKEN.test(e.name)) out.name = e.name;
  if (typeof e.Reason === 'string' && SAFE_TOKEN.test(e.Reason)) out.reason = e.Reason;
  if (typeof e.code === 'string' && SAFE_TOKEN.test(e.code)) out.code = e.code;
  if (typeof e.$metadata?.httpStatusCode === 'number') out.status = e.$metadata.httpStatusCode;
  return out;
}
