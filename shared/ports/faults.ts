import { CodedError } from '../domain/errors.js';

/**
 * Faults a port may raise that say "nothing is wrong with the request; try again". An adapter
 * maps its technology's throttling and transient errors to a subclass; the HTTP layer answers
 * those with `503 temporarily_unavailable` and `Retry-After` (docs/design.md#http-api), and every
 * other fault stays a generic 500.
 */
export abstract class TransientFault extends CodedError {
  /** How long a caller should wait before retrying, in whole seconds. */
  readonly retryAfterSeconds: number;

  constructor(message: string, options: ErrorOptions & { readonly retryAfterSeconds?: number } = {}) {
    super(message, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(options.retryAfterSeconds ?? 1));
  }
}

/** True for a {@link TransientFault}, also when it is the `cause` of a wrapping error. */
export function transientFaultOf(error: unknown): TransientFault | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof TransientFault) return current;
    current = current.cause;
  }
  return undefined;
}
