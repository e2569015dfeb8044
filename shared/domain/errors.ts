/** Errors of the domain module. Expected outcomes are returned values; these are programming or data faults. */

/**
 * The one base of every fault the service raises (domain, ports, adapters, providers, use cases,
 * CLI): a stable machine-readable `code`, which logs, metrics and callers match on (a class name
 * does not survive a minified bundle), and the original `cause` (`options.cause`). A test keeps
 * `extends Error` out of `shared/` except here (and the standalone client package).
 */
export abstract class CodedError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A fault of the domain itself. */
export abstract class DomainError extends CodedError {}

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
