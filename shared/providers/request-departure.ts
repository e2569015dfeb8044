/**
 * Whether an AWS SDK request may have left this process. A send whose deadline fires while the
 * request is still inside the SDK (credentials being resolved on a cold start, signing, waiting
 * for the client) provably reached no provider: it is "not sent", not an unknown outcome that a
 * provider without absence proofs (SNS, End User Messaging) could never settle
 * (docs/providers/aws.md#a-request-that-never-left).
 *
 * The mark is the last `finalizeRequest` middleware of the one command: past it the request goes
 * to the HTTP handler and may be on the wire. It refuses to go on once the send's abort signal has
 * fired, so a request the deadline caught before the mark can never leave afterwards.
 */
import type { FinalizeRequestMiddleware, MetadataBearer, MiddlewareStack } from '@smithy/types';
import { CodedError } from '../domain/errors.js';

/** The departure state of one request: `left` turns true when it is handed to the transport. */
export interface RequestDeparture {
  readonly left: () => boolean;
}

/** Error thrown inside the SDK for a request that the deadline caught before it could leave. */
export class RequestHeldBackError extends CodedError {
  readonly code = 'request_held_back';
}

/** Marks `command` so the caller can tell, after an abort, whether its request may have left. */
export function markDeparture<I extends object, O extends MetadataBearer>(
  command: { readonly middlewareStack: MiddlewareStack<I, O> },
  signal: AbortSignal,
): RequestDeparture {
  let left = false;
  const mark: FinalizeRequestMiddleware<I, O> = (next) => async (args) => {
    if (signal.aborted) throw new RequestHeldBackError('deadline reached before the request left');
    left = true;
    return next(args);
  };
  command.middlewareStack.add(mark, {
    step: 'finalizeRequest',
    priority: 'low',
    name: 'resetNotifierRequestDeparture',
  });
  return { left: () => left };
}
