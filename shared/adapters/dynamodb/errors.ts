/** Errors of the DynamoDB adapter. Lost races are returned values; these are faults. */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { CodedError } from '../../domain/errors.js';
import { TransientFault } from '../../ports/faults.js';
import { isThrottlingAwsError, isTransientAwsError, TRANSIENT_CANCELLATION_CODES } from '../aws-faults.js';

/** A fault of the DynamoDB store (the one coded base: {@link CodedError}). */
abstract class StoreError extends CodedError {}

/** A stored item does not have the shape this code writes. */
export class CorruptItemError extends StoreError {
  readonly code = 'corrupt_item';
}

/** DynamoDB refused a write for a reason other than our own guard (throttling, conflict, ...). */
export class StoreWriteError extends StoreError {
  readonly code = 'store_write_failed';
}

/**
 * DynamoDB throttled the request or failed transiently (throttling, a transaction conflict, a
 * timeout, a 5xx, a reset connection): nothing is wrong with the request and a retry is safe,
 * because every write is conditional. The HTTP API answers `503` with `Retry-After`.
 */
export class StoreUnavailableError extends TransientFault {
  readonly code = 'store_unavailable';
}

/** Throttling asks callers to wait longer than a one-off transient fault. */
const RETRY_AFTER_SECONDS = { throttled: 2, transient: 1 } as const;

/**
 * Maps an error from a DynamoDB call to the adapter's faults: transient ones (see
 * {@link isTransientAwsError}, and transactions cancelled only for throttling or conflicts) to
 * {@link StoreUnavailableError}; anything else to `otherwise` (or the original error).
 */
export function storeFault(error: unknown, operation: string, otherwise?: (error: unknown) => Error): Error {
  if (isTransientAwsError(error) || cancelledTransiently(error)) {
    const throttled = isThrottlingAwsError(error) || cancelledTransiently(error, 'throttling');
    return new StoreUnavailableError(`${operation}: DynamoDB is temporarily unavailable`, {
      cause: error,
      retryAfterSeconds: throttled ? RETRY_AFTER_SECONDS.throttled : RETRY_AFTER_SECONDS.transient,
    });
  }
  if (otherwise !== undefined) return otherwise(error);
  return error instanceof Error ? error : new Error(`${operation} failed`, { cause: error });
}

function cancelledTransiently(error: unknown, only?: 'throttling'): boolean {
  if (!(error instanceof TransactionCanceledException)) return false;
  const codes = (error.CancellationReasons ?? []).map((r) => r.Code ?? 'None').filter((c) => c !== 'None');
  if (codes.length === 0) return false;
  const transient = (code: string) =>
    only === 'throttling'
      ? code !== 'TransactionConflict' && TRANSIENT_CANCELLATION_CODES.has(code)
      : TRANSIENT_CANCELLATION_CODES.has(code);
  return codes.every(transient);
}
