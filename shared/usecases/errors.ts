/** Errors of the use-case layer. Expected outcomes are returned; these mean "retry this message". */
import { CodedError } from '../domain/errors.js';

/** A fault of a use case (the one coded base: {@link CodedError}). */
export abstract class UseCaseError extends CodedError {}

/** A non-final command has no sealed payload: the data is inconsistent and needs an operator. */
export class MissingPayloadError extends UseCaseError {
  readonly code = 'missing_payload';
}

/**
 * The sealed payload could not be opened (KMS key disabled or changed, cipher fault). Raised before
 * any claim: the message was not sent and the command is untouched, so the queue may retry it.
 */
export class PayloadUnreadableError extends UseCaseError {
  readonly code = 'payload_unreadable';
}
