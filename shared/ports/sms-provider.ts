/**
 * The SMS provider port: what the use cases call and every provider adapter implements
 * (`shared/providers/<kind>/`). The outcomes it returns and the capabilities it declares are the
 * domain's vocabulary (`../domain/provider.ts`): the domain decides on them, the port carries them.
 */
import type { EpochMs } from '../domain/notification.js';
import type { LookupOutcome, ProviderCapabilities, SendOutcome } from '../domain/provider.js';

/**
 * What a provider adapter needs to send one message. `clientReference` = `<key>#<attempt>` lets
 * the message be found later even when the send timed out before an id came back.
 */
export interface SendCommand {
  readonly idempotencyKey: string;
  readonly attempt: number;
  readonly clientReference: string;
  readonly to: string;
  readonly body: string;
  /** The token's remaining life: the provider must not deliver after it. Whole seconds, never more. */
  readonly validityPeriodSeconds: number;
  /** The call must give up by then (lease and token life both bound it). */
  readonly deadline: EpochMs;
}

/** How to find the messages of a command's attempts after an unknown outcome or for a status poll. */
export interface LookupRef {
  /** The current attempt's message id, when one came back. */
  readonly messageId?: string;
  readonly idempotencyKey: string;
  /** The current attempt (1, 2, ...). Earlier attempts' messages count as found too. */
  readonly attempt: number;
  /** `<key>#<attempt>` of the current attempt. */
  readonly clientReference: string;
  readonly to: string;
  /** What only this key's messages carry (the code or the reset URL), for content matching. */
  readonly secret: string;
  /** When the current attempt was claimed: search windows start here, never at admission. */
  readonly attemptStartedAt: EpochMs;
  /** When the current attempt's call had to end: no read before it can show absence. */
  readonly callDeadline: EpochMs;
}

/** What a provider's feedback API made of a user confirmation. Never fails the confirmation. */
export type FeedbackOutcome =
  | { readonly kind: 'recorded' }
  | { readonly kind: 'failed'; readonly detail: string };

/** The one port every provider implements. `lookup` only reads; it never sends. */
export interface SmsProvider {
  readonly name: string;
  readonly capabilities: ProviderCapabilities;
  send(command: SendCommand): Promise<SendOutcome>;
  lookup(ref: LookupRef): Promise<LookupOutcome>;
  /**
   * Optional: tells the provider's feedback API that the user acted on the message (Twilio Message
   * Feedback `Outcome=confirmed`, End User Messaging `PutMessageFeedback`). Only providers that
   * have one implement it; outcomes are returned, never thrown.
   */
  confirm?(messageId: string): Promise<FeedbackOutcome>;
}
