import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { FieldError } from './request-schema.js';

/** The error body of every deliberate 4xx and of the generic 500. */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly errors?: readonly FieldError[];
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };

export function json(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

export function problem(statusCode: number, code: string, message: string, errors?: readonly FieldError[]) {
  const body: ErrorBody = errors ? { code, message, errors } : { code, message };
  return json(statusCode, body);
}

/** What the error handler returns for anything unexpected: nothing internal leaks. */
export const GENERIC_500_BODY = JSON.stringify({
  code: 'internal_error',
  message: 'internal error',
} satisfies ErrorBody);

/**
 * `503 temporarily_unavailable` with `Retry-After`: a dependency throttled or failed transiently
 * (docs/design.md#http-api). Nothing went wrong with the request; retrying with the same
 * `Idempotency-Key` is safe.
 */
export function temporarilyUnavailable(retryAfterSeconds: number): APIGatewayProxyStructuredResultV2 {
  const body: ErrorBody = {
    code: 'temporarily_unavailable',
    message: 'the service is temporarily unavailable; retry with the same Idempotency-Key',
  };
  return json(503, body, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
}

/**
 * `409 event_already_admitted`: another idempotency key already admitted this `event_id`,
 * channel and template with a different payload; nothing was stored or counted. The message,
 * the field error and `Location` name that first command (a key, never a number or params).
 */
export function eventAlreadyAdmitted(firstIdempotencyKey: string): APIGatewayProxyStructuredResultV2 {
  const response = problem(
    409,
    'event_already_admitted',
    `this event was already admitted under idempotency key ${firstIdempotencyKey}, with a different payload`,
    [{ path: 'event_id', message: `is already admitted under idempotency key ${firstIdempotencyKey}` }],
  );
  return {
    ...response,
    headers: {
      ...response.headers,
      location: `/v1/notifications/${encodeURIComponent(firstIdempotencyKey)}`,
    },
  };
}
