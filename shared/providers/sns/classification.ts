import type { SendOutcome } from '../../domain/provider.js';

/** The three outcomes an SNS `Publish` error can mean (success is handled before classification). */
export type SnsErrorKind = Exclude<SendOutcome['kind'], 'accepted'>;

/**
 * How an error thrown by `SNSClient.send(PublishCommand)` is classified: the one table for SNS
 * (docs/design.md#states). Lookup order: `byName` (SDK error name), then `byNetworkCode` (Node
 * socket error code), then `byHttpStatus` (`$metadata.httpStatusCode`), then `byHttpStatusClass`,
 * then `fallback`.
 *
 * - `not_sent_retryable`: SNS (or the network stack, before connecting) refused the request; no
 *   message exists, and another attempt may work (throttling, credentials, permissions).
 * - `not_sent_permanent`: SNS validated and rejected the request; retrying the same message cannot work.
 * - `unknown`: the request may have been accepted (timeouts, connection lost mid-request, 5xx).
 *   When in doubt, unknown: a wrong "not sent" could produce a second SMS.
 */
export const SNS_PUBLISH_ERROR_CLASSIFICATION = {
  byName: {
    // Throttling: refused before acceptance.
    ThrottledException: 'not_sent_retryable',
    Throttling: 'not_sent_retryable',
    ThrottlingException: 'not_sent_retryable',
    TooManyRequestsException: 'not_sent_retryable',
    RequestLimitExceeded: 'not_sent_retryable',
    KMSThrottlingException: 'not_sent_retryable',
    // Authentication / authorization / configuration: refused, may work once fixed.
    AuthorizationErrorException: 'not_sent_retryable',
    AccessDenied: 'not_sent_retryable',
    AccessDeniedException: 'not_sent_retryable',
    InvalidSecurityException: 'not_sent_retryable',
    ExpiredTokenException: 'not_sent_retryable',
    UnrecognizedClientException: 'not_sent_retryable',
    SignatureDoesNotMatch: 'not_sent_retryable',
    InvalidClientTokenId: 'not_sent_retryable',
    CredentialsProviderError: 'not_sent_retryable',
    KMSAccessDeniedException: 'not_sent_retryable',
    KMSDisabledException: 'not_sent_retryable',
    KMSInvalidStateException: 'not_sent_retryable',
    KMSNotFoundException: 'not_sent_retryable',
    KMSOptInRequired: 'not_sent_retryable',
    // The request itself is wrong for this destination or message: retrying cannot help.
    InvalidParameterException: 'not_sent_permanent',
    InvalidParameter: 'not_sent_permanent',
    InvalidParameterValueException: 'not_sent_permanent',
    ValidationException: 'not_sent_permanent',
    OptedOutException: 'not_sent_permanent',
    EndpointDisabledException: 'not_sent_permanent',
    NotFoundException: 'not_sent_permanent',
    // Server-side failures and timeouts: the message may exist.
    InternalErrorException: 'unknown',
    InternalFailure: 'unknown',
    ServiceUnavailable: 'unknown',
    TimeoutError: 'unknown',
    RequestTimeout: 'unknown',
    RequestTimeoutException: 'unknown',
    AbortError: 'unknown',
  },
  byNetworkCode: {
    // No connection was ever made: nothing reached SNS.
    ECONNREFUSED: 'not_sent_retryable',
    ENOTFOUND: 'not_sent_retryable',
    EAI_AGAIN: 'not_sent_retryable',
    // The connection broke while the request was in flight: it may have been processed.
    ECONNRESET: 'unknown',
    EPIPE: 'unknown',
    ETIMEDOUT: 'unknown',
    ECONNABORTED: 'unknown',
  },
  byHttpStatus: {
    408: 'unknown',
    429: 'not_sent_retryable',
  },
  byHttpStatusClass: {
    4: 'not_sent_retryable',
    5: 'unknown',
  },
  fallback: 'unknown',
} as const satisfies {
  readonly byName: Readonly<Record<string, SnsErrorKind>>;
  readonly byNetworkCode: Readonly<Record<string, SnsErrorKind>>;
  readonly byHttpStatus: Readonly<Record<number, SnsErrorKind>>;
  readonly byHttpStatusClass: Readonly<Record<number, SnsErrorKind>>;
  readonly fallback: SnsErrorKind;
};

/** Error names that mean the call ran out of time (reported as `timedOut` on unknown outcomes). */
const TIMEOUT_NAMES: ReadonlySet<string> = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
]);

/** The classified form of one error; `detail` is safe to store (no message text, no number). */
export interface SnsErrorClassification {
  readonly kind: SnsErrorKind;
  readonly detail: string;
  readonly timedOut: boolean;
}

/** Classifies an error thrown by `Publish` with {@link SNS_PUBLISH_ERROR_CLASSIFICATION}. */
export function classifySnsPublishError(error: unknown): SnsErrorClassification {
  const table = SNS_PUBLISH_ERROR_CLASSIFICATION;
  const { name, code, status } = describe(error);
  const timedOut = (name !== undefined && TIMEOUT_NAMES.has(name)) || code === 'ETIMEDOUT' || status === 408;
  const label = name ?? code ?? (status === undefined ? 'unrecognised_error' : `http_${status}`);
  const fromName = name === undefined ? undefined : lookup(table.byName, name);
  if (fromName !== undefined) return { kind: fromName, detail: `sns:${label}`, timedOut };
  const fromCode = code === undefined ? undefined : lookup(table.byNetworkCode, code);
  if (fromCode !== undefined) return { kind: fromCode, detail: `sns:${code}`, timedOut };
  if (status !== undefined) {
    const fromStatus =
      lookup(table.byHttpStatus, status) ?? lookup(table.byHttpStatusClass, Math.floor(status / 100));
    if (fromStatus !== undefined)
      return { kind: fromStatus, detail: `sns:${label}:http_${status}`, timedOut };
  }
  return { kind: table.fallback, detail: `sns:${label}`, timedOut };
}

function lookup<K extends string | number>(
  record: Readonly<Partial<Record<K, SnsErrorKind>>>,
  key: K,
): SnsErrorKind | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function describe(error: unknown): { name?: string; code?: string; status?: number } {
  if (typeof error !== 'object' || error === null) return {};
  const e = error as { name?: unknown; code?: unknown; $metadata?: { httpStatusCode?: unknown } };
  const out: { name?: string; code?: string; status?: number } = {};
  // A plain `Error` carries no classification information in its name.
  if (typeof e.name === 'string' && e.name !== 'Error') out.name = e.name;
  if (typeof e.code === 'string') out.code = e.code;
  if (typeof e.$metadata?.httpStatusCode === 'number') out.status = e.$metadata.httpStatusCode;
  return out;
}
