import { TransientFault } from '../ports/faults.js';

/**
 * How faults inside the reconciler and sender are described in logs: the error's name, stable
 * `code` and a short message with anything number-like masked, for the error and its causes. No
 * payload, phone number or secret is ever part of it.
 */
export interface ErrorDescription {
  readonly name: string;
  readonly code?: string;
  readonly message: string;
  /** The same for the `cause` chain, outermost first (at most three). */
  readonly causes?: readonly ErrorDescription[];
}

const MAX_MESSAGE = 160;

function one(error: unknown): ErrorDescription {
  if (!(error instanceof Error)) return { name: typeof error, message: '' };
  const code = (error as { code?: unknown }).code;
  // Digit runs of 6+ (a phone number, a code) are masked; our own messages carry keys and codes only.
  const message = error.message.replace(/\+?\d[\d\s-]{5,}\d/g, '[masked]').slice(0, MAX_MESSAGE);
  return { name: error.name, ...(typeof code === 'string' ? { code } : {}), message };
}

/** A PII-free description of an error and its causes. */
export function describeError(error: unknown): ErrorDescription {
  const causes: ErrorDescription[] = [];
  let cause = error instanceof Error ? error.cause : undefined;
  while (cause !== undefined && causes.length < 3) {
    causes.push(one(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return { ...one(error), ...(causes.length ? { causes } : {}) };
}

const TRANSIENT_NAMES =
  /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded|InternalServerError|ServiceUnavailable|TransactionConflict|TimeoutError|ECONNRESET|ECONNREFUSED/;

/**
 * A fault that says nothing about the item (throttling, the store or the network unavailable; looked
 * for along the cause chain, so a store error wrapping a throttle counts): the item is
 * retried as it is, not counted as poison.
 */
export function isTransientFault(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    // An adapter that already classified its fault as transient (a throttled transaction, which
    // carries no `$retryable` and no throttling name of its own) is believed.
    if (current instanceof TransientFault) return true;
    const code = (current as { code?: unknown }).code;
    if (code === 'redrive_enqueue_failed') return true;
    if ((current as { $retryable?: unknown }).$retryable !== undefined) return true;
    if (TRANSIENT_NAMES.test(current.name)) return true;
    current = current.cause;
  }
  return false;
}
