/**
 * Receipts: one use case for every provider's push evidence (Twilio status callbacks, End User
 * Messaging events). The edge authenticates and parses; this reads the command strongly, asks the
 * domain what the receipt means and writes that transition with its evidence in one guarded write.
 */
import type { Clock } from '../domain/clock.js';
import { applyReceipt, type ReceiptIgnored } from '../domain/dispatch.js';
import { providerOfAttempt } from '../domain/failover.js';
import { applyTransition } from '../domain/notification.js';
import type { DispatchPolicy } from '../domain/policy.js';
import { type ProviderStatus, parseClientReference } from '../domain/provider.js';
import type { NotificationState } from '../domain/states.js';
import type { CommandStore } from '../ports/command-store.js';

/** One authenticated receipt, normalised by the provider's edge. Carries no number and no body. */
export interface ReceiptInput {
  /** Which edge it came from (`twilio`, `eum`): for logs and metrics. */
  readonly provider: string;
  /** `<idempotency_key>#<attempt>`, as we gave it to the provider. */
  readonly clientReference: string;
  /** The provider's message id (Twilio SID, End User Messaging MessageId). */
  readonly messageId: string;
  readonly status: ProviderStatus;
  /** The provider's own status word (`delivered`, `TEXT_DELIVERED`, ...), for logs. */
  readonly providerStatus: string;
  /**
   * The provider's code for a final status, in the `reason_detail` grammar (`twilio:30003`): the
   * evidence of the transition carries it (the domain checks it against the grammar again).
   */
  readonly detail?: string;
  /**
   * The provider's delivery id for this callback (`I-Twilio-Idempotency-Token`, an event id). Not
   * needed for correctness: a repeated receipt is a repeated fact, and the state machine never
   * records a fact twice. Logged to correlate retries.
   */
  readonly dedupeToken?: string;
}

/** What a receipt did. Every kind is an expected outcome: the edge answers 2xx to all of them. */
export type ReceiptResult =
  | { kind: 'applied'; to: NotificationState }
  | { kind: 'ignored'; why: string }
  | { kind: 'unknown_reference' }
  | { kind: 'unknown_command' };

/**
 * Why a receipt changed nothing, beyond the domain's own reasons: `other_provider`, the attempt
 * it names went to another provider than the one it came from (docs/providers/failover.md).
 */
export type ReceiptIgnoredWhy = ReceiptIgnored | 'contended' | 'other_provider';

/** What {@link ingestReceipt} needs. */
export interface IngestReceiptDeps {
  readonly store: CommandStore;
  readonly clock: Clock;
  readonly policy: DispatchPolicy;
  /**
   * Whether receipts from edge `edge` (`ReceiptInput.provider`) can be about an attempt that went
   * to provider `provider`; a receipt for another provider's attempt settles nothing. Unset (one
   * provider): every receipt is about the one provider.
   */
  readonly receiptsSettle?: (edge: string, provider: string) => boolean;
}

/** The use case's shape, for callers that receive it injected (End User Messaging events). */
export type IngestReceipt = (deps: IngestReceiptDeps, input: ReceiptInput) => Promise<ReceiptResult>;

/** Receipts lose a version race only to another writer of the same key; re-deciding twice is plenty. */
const MAX_WRITES = 3;

/**
 * Applies one receipt. A lost version race (a sender, the reconciler or a duplicate receipt wrote
 * first) re-reads and re-decides: the record may have moved so that the receipt now means nothing.
 * Store faults are thrown (the provider retries the callback); every other outcome is returned.
 */
export async function ingestReceipt(deps: IngestReceiptDeps, input: ReceiptInput): Promise<ReceiptResult> {
  const reference = parseClientReference(input.clientReference);
  if (reference === undefined) return { kind: 'unknown_reference' };
  const receipt = {
    attempt: reference.attempt,
    messageId: input.messageId,
    status: input.status,
    ...(input.detail === undefined ? {} : { detail: input.detail }),
  };
  for (let write = 1; write <= MAX_WRITES; write++) {
    const stored = await deps.store.get(reference.idempotencyKey);
    if (stored === undefined) return { kind: 'unknown_command' };
    // With failover an attempt's receipts come from its own provider only (a Twilio callback never
    // settles an End User Messaging attempt, whatever reference it carries).
    const attemptProvider = providerOfAttempt(stored.record, reference.attempt);
    if (deps.receiptsSettle !== undefined && !deps.receiptsSettle(input.provider, attemptProvider)) {
      return { kind: 'ignored', why: 'other_provider' satisfies ReceiptIgnoredWhy };
    }
    const decision = applyReceipt(stored.record, receipt, deps.clock.now(), deps.policy);
    if ('kind' in decision) return { kind: 'ignored', why: decision.why };
    const written = await deps.store.transition(applyTransition(stored.record, decision));
    if (written.kind === 'written') return { kind: 'applied', to: written.record.state };
  }
  // Still contended after re-deciding: whoever keeps winning is moving the record on; the provider's
  // retry (or its next status) comes back to a quieter record.
  return { kind: 'ignored', why: 'contended' satisfies ReceiptIgnoredWhy };
}
