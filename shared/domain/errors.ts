/** Errors of the domain module. Expected outcomes are returned values; these are programming or data faults. */

/** Base class: a stable machine-readable `code` and the original `cause`. */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A transition the table does not allow was requested. */
export class ForbiddenTransitionError extends DomainError {
  readonly code = 'forbidden_transition';
  constructor(
    readonly from: string | null,
    readonly to: string,
    readonly reason: string,
  ) {
    super(`transition ${from ?? '(none)'} -> ${to} (${reason}) is not in the transition table`);
  }
}

/** A key, secret or setting the domain needs is malformed. */
export class InvalidConfigurationError extends DomainError {
  readonly code = 'invalid_configuration';
}
