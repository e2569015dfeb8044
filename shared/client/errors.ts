import type { ApiErrorBody } from './wire.js';

/** Base of the client's faults: a stable `code`, the original `cause`. */
export abstract class ResetNotifierClientError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * A read (`get`, `evidence`, `byEvent`) found the service unavailable (timeouts, network errors,
 * 5xx, 429 without a code, 503) for every attempt its time budget allowed. (`admit` and `confirm`
 * return this as their `unavailable` outcome instead.)
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

/**
 * The request could not be signed, so nothing was sent: usually no AWS credentials (the default
 * chain found none, or the given provider failed). Not retried: the `cause` says what to fix.
 */
export class CredentialsError extends ResetNotifierClientError {
  readonly code = 'credentials_unavailable';
}
