/** Errors of the DynamoDB adapter. Lost races are returned values; these are faults. */

export abstract class StoreError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A stored item does not have the shape this code writes. */
export class CorruptItemError extends StoreError {
  readonly code = 'corrupt_item';
}

/** DynamoDB refused a write for a reason other than our own guard (throttling, conflict, ...). */
export class StoreWriteError extends StoreError {
  readonly code = 'store_write_failed';
}
