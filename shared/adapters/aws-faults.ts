/**
 * Which AWS SDK errors are transient: a retry of the same request may succeed, and a request that
 * is idempotent by design (conditional writes, the idempotency key) is safe to repeat. Decided by
 * error name/code and HTTP status, the way the SDK reports them, never by message text.
 */

/** Throttling and service-side transient errors (DynamoDB names first). */
const TRANSIENT_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'Throttling',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TransactionConflictException',
  'TransactionInProgressException',
  'ReplicatedWriteConflictException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
]);

/** Network errors Node reports in `code` (connection resets, refused or timed-out sockets). */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Cancellation reason codes of a DynamoDB transaction that a retry may clear. */
export const TRANSIENT_CANCELLATION_CODES = new Set([
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'TransactionConflict',
  'RequestLimitExceeded',
]);

interface SdkLikeError {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly $fault?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: unknown };
  readonly $retryable?: { readonly throttling?: boolean } | undefined;
}

/** True when `error` (an SDK or network error) is throttling or a transient fault. */
export function isTransientAwsError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as SdkLikeError;
  if (typeof e.name === 'string' && TRANSIENT_NAMES.has(e.name)) return true;
  if (typeof e.code === 'string' && (TRANSIENT_NETWORK_CODES.has(e.code) || TRANSIENT_NAMES.has(e.code)))
    return true;
  if (e.$retryable?.throttling === true) return true;
  const status = e.$metadata?.httpStatusCode;
  if (typeof status === 'number' && (status >= 500 || status === 429)) return true;
  return false;
}

/** True when `error` is throttling (as opposed to a service fault): callers should back off longer. */
export function isThrottlingAwsError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as SdkLikeError;
  return (
    e.$retryable?.throttling === true ||
    (typeof e.name === 'string' &&
      /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded|TooManyRequests/.test(e.name))
  );
}
