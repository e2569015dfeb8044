/**
 * User confirmation (`POST /v1/notifications/{key}/confirmation`): the auth service says the code
 * or link was used. Recorded once as evidence (`user_confirmed`), then forwarded to the provider's
 * feedback API where one exists; a failed forward never fails the confirmation.
 */
import type { Clock } from '../domain/clock.js';
import { decideConfirmation } from '../domain/confirmation.js';
import { applyTransition } from '../domain/notification.js';
import type { CommandStore } from '../ports/command-store.js';
import type { FeedbackOutcome, SmsProvider } from '../ports/sms-provider.js';
import { UseCaseError } from './errors.js';
import { type NotificationView, toView } from './view.js';

export interface ConfirmDeps {
  readonly store: CommandStore;
  readonly clock: Clock;
  /** The provider's feedback API, when it has one (the port's optional `confirm`). */
  readonly feedback?: Pick<SmsProvider, 'confirm'>;
  /**
   * With more than one provider (docs/providers/failover.md): the feedback API of the provider the
   * confirmed message went through (undefined: it has none); used instead of `feedback`.
   */
  readonly feedbackOf?: (provider: string) => Pick<SmsProvider, 'confirm'> | undefined;
  /** Receives the outcome of a forward that did not work (ids and codes only, never PII). */
  readonly onFeedbackFailure?: (detail: { readonly idempotencyKey: string; readonly detail: string }) => void;
}

/** What a confirmation did. */
export type ConfirmResult =
  | {
      readonly kind: 'confirmed';
      readonly view: NotificationView;
      /** What the provider's feedback API said; `skipped` when there is none or no message id. */
      readonly feedback: FeedbackOutcome['kind'] | 'skipped';
    }
  | { readonly kind: 'already_confirmed'; readonly view: NotificationView }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'never_sent'; readonly view: NotificationView };

const MAX_WRITES = 3;

/** Records a user confirmation; idempotent (a repeat writes nothing and says `already_confirmed`). */
export async function confirmDelivery(deps: ConfirmDeps, idempotencyKey: string): Promise<ConfirmResult> {
  for (let write = 1; write <= MAX_WRITES; write++) {
    const stored = await deps.store.get(idempotencyKey);
    if (stored === undefined) return { kind: 'not_found' };
    const decision = decideConfirmation(stored.record, deps.clock.now());
    if (decision.kind === 'already_confirmed')
      return { kind: 'already_confirmed', view: toView(stored.record) };
    if (decision.kind === 'never_sent') return { kind: 'never_sent', view: toView(stored.record) };
    const written = await deps.store.transition(applyTransition(stored.record, decision.intent));
    if (written.kind === 'stale') continue; // another writer moved it: decide again on the new record
    // The feedback API of the provider the message went through (with failover, maybe not the primary).
    const target = deps.feedbackOf ? deps.feedbackOf(written.record.provider.name) : deps.feedback;
    const feedback = await forward(deps, target, idempotencyKey, written.record.provider.messageId);
    return { kind: 'confirmed', view: toView(written.record), feedback };
  }
  // Contended three times (a sender and receipts racing): the caller's retry is safe and idempotent.
  throw new ConfirmationContendedError(`confirmation of ${idempotencyKey} lost ${MAX_WRITES} write races`);
}

async function forward(
  deps: ConfirmDeps,
  target: Pick<SmsProvider, 'confirm'> | undefined,
  idempotencyKey: string,
  messageId: string | undefined,
): Promise<FeedbackOutcome['kind'] | 'skipped'> {
  const confirm = target?.confirm;
  if (confirm === undefined || messageId === undefined) return 'skipped';
  let outcome: FeedbackOutcome;
  try {
    outcome = await confirm.call(target, messageId);
  } catch (error) {
    outcome = { kind: 'failed', detail: `adapter_threw:${(error as Error).name}` };
  }
  if (outcome.kind === 'failed') deps.onFeedbackFailure?.({ idempotencyKey, detail: outcome.detail });
  return outcome.kind;
}

/** A confirmation kept losing version races; nothing was written by it. Safe to retry. */
export class ConfirmationContendedError extends UseCaseError {
  readonly code = 'confirmation_contended';
}
