import { IDEMPOTENCY_KEY_PATTERN } from './idempotency-key.js';

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

/**
 * Provider-side delivery status, normalised. `not_sent` is a documented provider statement that
 * the message was never handed to a carrier (Twilio `failed` with such a code, an expired
 * validity period in the provider's queue): the user cannot have received it, so a new attempt
 * is safe while the token lives. `not_sent_permanent` says the same, for a cause no new attempt
 * can cure in time (account suspended, geo permissions, SMS pumping protection): the command
 * ends `failed`, never sent again.
 */
export type ProviderStatus =
  | 'pending'
  | 'sent'
  | 'delivered'
  | 'undelivered'
  | 'not_sent'
  | 'not_sent_permanent';

/** Whether a status is the provider's own "never handed to a carrier" (either kind). */
export function isNotSentStatus(status: ProviderStatus): status is 'not_sent' | 'not_sent_permanent' {
  return status === 'not_sent' || status === 'not_sent_permanent';
}

/** How an adapter can find a message after a send whose outcome is unknown. */
export const FindBy = {
  /** By the provider's message id, when one came back. */
  id: 'id',
  /** By our `client_reference`, as the provider echoes it in receipts or events. */
  reference: 'reference',
  /** By listing messages and matching this key's secret inside the body. */
  content: 'content',
} as const;
export type FindBy = (typeof FindBy)[keyof typeof FindBy];

/** Whether, and how, an adapter can show that a message does not exist. */
export const AbsenceProof = {
  /** Never: an unknown that no evidence settles ends `unknown_at_expiry`, without a second send. */
  never: 'never',
  /**
   * Only under conditions the adapter checks itself (complete listings, readable bodies, unmasked
   * numbers, redaction off). The domain adds its own: two absent reads at least the settle time
   * apart, both after the attempt's call deadline.
   */
  conditional: 'conditional',
} as const;
export type AbsenceProof = (typeof AbsenceProof)[keyof typeof AbsenceProof];

/** What an adapter declares about itself; decisions read it instead of the provider's name. */
export interface ProviderCapabilities {
  readonly findBy: readonly FindBy[];
  readonly absenceProof: AbsenceProof;
  /** The provider pushes receipts or events that carry our client reference. */
  readonly receipts: boolean;
}

/** The capabilities of a provider that can only confirm what it returned: nothing proves absence. */
export const NO_ABSENCE_PROOF: ProviderCapabilities = {
  findBy: [FindBy.id],
  absenceProof: AbsenceProof.never,
  receipts: false,
};

/** The classified result of a lookup. `absent` only when the provider's answer is authoritative. */
export type LookupOutcome =
  | {
      readonly kind: 'found';
      readonly messageId: string;
      readonly status: ProviderStatus;
      /** Which attempt the message belongs to, when the provider can tell (by reference). */
      readonly attempt?: number;
      /** The provider's code for a final status, in the `reason_detail` grammar (`twilio:30500`). */
      readonly detail?: string;
    }
  | { readonly kind: 'absent' }
  | { readonly kind: 'inconclusive'; readonly detail: string };

/** `<idempotency_key>#<attempt>`. */
export function clientReference(idempotencyKey: string, attempt: number): string {
  return `${idempotencyKey}#${attempt}`;
}

/** Reads `<key>#<attempt>` back; undefined when it is not one of ours. */
export function parseClientReference(
  reference: string,
): { readonly idempotencyKey: string; readonly attempt: number } | undefined {
  const hash = reference.lastIndexOf('#');
  if (hash <= 0) return undefined;
  const attempt = reference.slice(hash + 1);
  if (!/^[1-9]\d{0,5}$/.test(attempt)) return undefined;
  // A key no command can have (over the key's length, or naming the table's own items) is
  // refused here, so no receipt path reads the store with it (docs/abuse-limits.md#bad-input).
  const idempotencyKey = reference.slice(0, hash);
  if (!IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) return undefined;
  return { idempotencyKey, attempt: Number(attempt) };
}

/**
 * The domain's own guard on a lookup: `absent` counts only from an adapter that can prove it.
 * An adapter that says `absent` without that capability is read as inconclusive.
 */
export function admissibleLookup(
  lookup: LookupOutcome,
  capabilities: Pick<ProviderCapabilities, 'absenceProof'>,
): LookupOutcome {
  if (lookup.kind === 'absent' && capabilities.absenceProof === AbsenceProof.never) {
    return { kind: 'inconclusive', detail: 'absence_unprovable' };
  }
  return lookup;
}
