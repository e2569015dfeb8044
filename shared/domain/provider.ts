import type { EpochMs } from './notification.js';

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

/** The classified result of a send: one of four, and "unknown" whenever in doubt. */
export type SendOutcome =
  | { readonly kind: 'accepted'; readonly messageId: string }
  | { readonly kind: 'not_sent_retryable'; readonly detail: string; readonly retryAfterMs?: number }
  | { readonly kind: 'not_sent_permanent'; readonly detail: string }
  | {
      readonly kind: 'unknown';
      readonly detail: string;
      readonly messageId?: string;
      readonly timedOut: boolean;
    };

/** Provider-side delivery status, normalised. */
export type ProviderStatus = 'pending' | 'sent' | 'delivered' | 'undelivered';

/** How to find an earlier attempt: by id when one came back, else by client reference. */
export interface LookupRef {
  readonly messageId?: string;
  readonly clientReference: string;
  readonly to: string;
  /** The earliest the attempt could have been made (narrows list queries). */
  readonly notBefore: EpochMs;
}

/** The classified result of a lookup. `absent` only when the provider's answer is authoritative. */
export type LookupOutcome =
  | { readonly kind: 'found'; readonly messageId: string; readonly status: ProviderStatus }
  | { readonly kind: 'absent' }
  | { readonly kind: 'inconclusive'; readonly detail: string };

/** The one port every provider implements. `lookup` only reads; it never sends. */
export interface SmsProvider {
  readonly name: string;
  send(command: SendCommand): Promise<SendOutcome>;
  lookup(ref: LookupRef): Promise<LookupOutcome>;
}

/** `<idempotency_key>#<attempt>`. */
export function clientReference(idempotencyKey: string, attempt: number): string {
  return `${idempotencyKey}#${attempt}`;
}
