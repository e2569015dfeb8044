/**
 * "Fault after commit" for a DynamoDB client (chaos runs, the store contract tests): the request
 * reaches DynamoDB and is applied, then its answer is lost and the caller gets a timeout- or
 * reset-shaped error instead, the way a socket timeout or a connection reset after the server
 * applied a write looks to the SDK. Two places:
 *
 * - outside the SDK's retry loop (`surfacing`): the application sees the error;
 * - inside it (`retried`): the SDK's standard retry strategy takes the error for a transient one
 *   (`TimeoutError`, `ECONNRESET`) and sends the same request again, which meets its own
 *   committed write (a failed guard, or for a transaction its `ClientRequestToken`).
 *
 * Only the wrapping lives here; which requests lose their answer is the caller's choice.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The shape of a lost answer: a client-side timeout or a reset connection. */
export type LostAnswerShape = 'timeout' | 'reset';

/** Decides, per request (its operation, e.g. `TransactWriteItems`, and input), whether its answer is lost. */
export type LostAnswerDecider = (operation: string, input: unknown) => LostAnswerShape | undefined;

export interface LostAnswerPlan {
  /** Outside the SDK's retries: the application sees the error. */
  readonly surfacing?: LostAnswerDecider;
  /** Inside the SDK's retries (once per try): the SDK retries, the retry meets the applied write. */
  readonly retried?: LostAnswerDecider;
}

/** DynamoDB operations that write: only their answers can be lost "after commit". */
export const WRITE_OPERATIONS: ReadonlySet<string> = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'TransactWriteItems',
  'BatchWriteItem',
]);

/** The error a lost answer surfaces as: what Node and the SDK raise for a timeout or a reset socket. */
export function lostAnswerError(shape: LostAnswerShape, operation: string): Error {
  const error =
    shape === 'timeout'
      ? Object.assign(
          new Error(`injected: ${operation} answer lost (socket timed out after the request was sent)`),
          {
            name: 'TimeoutError',
          },
        )
      : Object.assign(new Error(`injected: ${operation} answer lost (socket hang up)`), {
          code: 'ECONNRESET',
        });
  // The SDK's retry middleware records attempts on `$metadata`, as on its own network errors.
  return Object.assign(error, { $metadata: {} });
}

/** Adds the two middlewares of `plan` to `client` (see the module comment). */
export function withLostAnswers(client: DynamoDBClient, plan: LostAnswerPlan): void {
  const operationOf = (context: { commandName?: string }) =>
    (context.commandName ?? 'unknown').replace(/Command$/, '');
  const { surfacing, retried } = plan;
  if (surfacing) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        const operation = operationOf(context);
        const shape = surfacing(operation, args.input);
        if (shape) throw lostAnswerError(shape, operation);
        return result;
      },
      // The initialize step runs outside the retry middleware (finalizeRequest): no retry follows.
      { step: 'initialize', name: 'lostAnswerSurfacing', priority: 'high' },
    );
  }
  if (retried) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        const operation = operationOf(context);
        const shape = retried(operation, args.input);
        if (shape) throw lostAnswerError(shape, operation);
        return result;
      },
      // The deserialize step wraps the send of each try, inside the retry middleware; at high
      // priority it sees the parsed answer (a service error throws before it is reached).
      { step: 'deserialize', name: 'lostAnswerRetried', priority: 'high' },
    );
  }
}
