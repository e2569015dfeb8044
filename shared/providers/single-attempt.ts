/**
 * A send client that cannot retry, by construction. A retry of `SendTextMessage` or `Publish`
 * after a lost response is a second SMS; whatever the SDK client was created with (`maxAttempts`,
 * a `retryStrategy`, a custom strategy of either SDK interface, or the default of 3 attempts), the
 * middleware installed here lets each command reach the transport once: any further pass of the
 * same command is refused before it can leave, so the retry loop ends with the first attempt's
 * error (docs/providers/aws.md#one-request-per-send).
 *
 * It sits in `finalizeRequest` at low priority, inside every retry middleware (the SDK's own is
 * `finalizeRequest`/high) and outside the deserializer, so it sees the first attempt's error as
 * the caller would have seen it. Attempts are counted per command input: the retry loop passes
 * the same `input` object on every attempt, while the request itself is cloned by signing.
 */
import type { FinalizeRequestMiddleware, MetadataBearer, MiddlewareStack } from '@smithy/types';
import { CodedError } from '../domain/errors.js';

/** Thrown inside the SDK for any attempt after the first; it carries what the first attempt threw. */
export class RetryRefusedError extends CodedError {
  readonly code = 'retry_refused';
  /** The first (and only) attempt's error; `undefined` if the first attempt was answered. */
  readonly firstAttempt: unknown;
  constructor(firstAttempt: unknown) {
    super('a second attempt of a send was refused: a retry after a lost response can send an SMS twice');
    this.firstAttempt = firstAttempt;
  }
}

/** The middleware's name on the client's stack. */
export const SINGLE_ATTEMPT_MIDDLEWARE = 'resetNotifierSingleAttempt';

type FirstAttempt = { failed: false } | { failed: true; error: unknown };

/**
 * Installs the single-attempt guard on `client` (idempotent: installing it twice keeps one).
 * Every command sent through the client afterwards makes at most one request.
 */
export function refuseRetries<I extends object, O extends MetadataBearer>(client: {
  readonly middlewareStack: MiddlewareStack<I, O>;
}): void {
  // Keyed on the command's input object: one entry per command, gone with it.
  const firstAttempts = new WeakMap<object, FirstAttempt>();
  const guard: FinalizeRequestMiddleware<I, O> = (next) => async (args) => {
    const key = (args as { input?: unknown }).input;
    if (typeof key !== 'object' || key === null) return next(args);
    const first = firstAttempts.get(key);
    if (first !== undefined) throw new RetryRefusedError(first.failed ? first.error : undefined);
    // Marked before the request leaves: no second pass can start while the first is in flight.
    firstAttempts.set(key, { failed: false });
    try {
      return await next(args);
    } catch (error) {
      firstAttempts.set(key, { failed: true, error });
      throw error;
    }
  };
  client.middlewareStack.add(guard, {
    step: 'finalizeRequest',
    priority: 'low',
    name: SINGLE_ATTEMPT_MIDDLEWARE,
    override: true,
  });
}

/**
 * The error to classify for a failed send: the first attempt's error when a retry was refused
 * (the refusal itself says nothing about the message), the error itself otherwise.
 */
export function firstAttemptError(error: unknown): unknown {
  return error instanceof RetryRefusedError && error.firstAttempt !== undefined ? error.firstAttempt : error;
}
