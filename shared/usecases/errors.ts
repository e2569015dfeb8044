/** Errors of the use-case layer. Expected outcomes are returned; these mean "retry this message". */

export abstract class UseCaseError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

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
