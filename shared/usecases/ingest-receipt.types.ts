/**
 * Type-only declaration of the receipts use case the `receipts` branch lands in
 * `shared/usecases/ingest-receipt.ts`. The End User Messaging event handler codes against these
 * types and receives the function itself by injection, so this file holds no implementation and
 * is deleted when the real module is merged (imports then point at `./ingest-receipt.js`).
 */
import type { Clock } from '../domain/clock.js';
import type { DispatchPolicy } from '../domain/policy.js';
import type { ProviderStatus } from '../domain/provider.js';
import type { NotificationState } from '../domain/states.js';
import type { NotificationStore } from '../ports/store.js';

/** One piece of push evidence from a provider, already authenticated and parsed. */
export interface ReceiptInput {
  readonly provider: string;
  readonly clientReference: string;
  readonly messageId: string;
  readonly status: ProviderStatus;
  readonly providerStatus: string;
  readonly dedupeToken?: string;
}

/** What the use case did with a receipt. */
export type ReceiptResult =
  | { kind: 'applied'; to: NotificationState }
  | { kind: 'ignored'; why: string }
  | { kind: 'unknown_reference' }
  | { kind: 'unknown_command' };

/** The dependencies of `ingestReceipt`. */
export interface IngestReceiptDeps {
  readonly store: NotificationStore;
  readonly clock: Clock;
  readonly policy: DispatchPolicy;
}

/** The signature of `ingestReceipt` in `shared/usecases/ingest-receipt.ts`. */
export type IngestReceipt = (deps: IngestReceiptDeps, input: ReceiptInput) => Promise<ReceiptResult>;
