import type { ErrorBodyShape } from '../http/view-schema.js';

/** The error body the API sends (`code`, `message`, field `errors`). */
export type ApiErrorBody = ErrorBodyShape;

/** Base of the client's faults: a stable `code`, the original `cause`. */
export abstract class ResetNotifierClientError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The service stayed unavailable (timeouts, network errors, 5xx, 429 or 503) for every attempt
 * the deadline allowed (the token's life for `admit`). The same `Idempotency-Key` was used
 * throughout: a later retry with it is still safe.
 */
export class ServiceUnavailableError extends ResetNotifierClientError {
  readonly code = 'service_unavailable';
  constructor(
    message: string,
    readonly attempts: number,
    readonly lastStatus: number | undefined,
    readonly body: ApiErrorBody | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** An answer the client did not expect (400, 403, 413, 415, a body that is not JSON): a bug or a misconfiguration. */
export class UnexpectedResponseError extends ResetNotifierClientError {
  readonly code = 'unexpected_response';
  constructor(
    message: string,
    readonly status: number,
    readonly body: ApiErrorBody | undefined,
  ) {
    super(message);
  }
}

/** The client was given an argument the API would reject (e.g. an idempotency key of the wrong shape). */
export class InvalidArgumentError extends ResetNotifierClientError {
  readonly code = 'invalid_argument';
}
