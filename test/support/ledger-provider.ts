/**
 * An in-process provider with a ledger (the messages it accepted: what a real provider would have
 * sent) and a provider kind's real capabilities, for the failover tests (unit and integration):
 * one SMS per command is counted across every provider's ledger. Lookups find its own messages by
 * client reference, else answer `absent` (the domain reads that as inconclusive from a provider
 * that cannot prove absence).
 */
import type { ProviderCapabilities, SendOutcome } from '../../shared/domain/provider.js';
import type { LookupRef, SendCommand, SmsProvider } from '../../shared/ports/sms-provider.js';
import { providerModule } from '../../shared/providers/registry.js';

/** How a ledger provider answers a send. */
export type LedgerMode =
  /** Accepts (the message is in its ledger). */
  | 'up'
  /** Connection refused: nothing sent. */
  | 'down'
  /** Accepts, then the answer never comes back: in its ledger, the sender sees a timeout. */
  | 'timeout_after_accept'
  /** The request never arrived, but the sender cannot tell: a timeout, nothing in its ledger. */
  | 'timeout_before_accept'
  /** Refuses the number itself (Twilio 21211, invalid `To`). */
  | 'refuse_destination'
  /** Refuses the account permanently (Twilio 30002, account suspended): nothing sent, not the number's fault. */
  | 'refuse_account';

export interface LedgerProvider extends SmsProvider {
  mode: LedgerMode;
  readonly ledger: { readonly reference: string; readonly messageId: string }[];
  readonly lookups: LookupRef[];
  readonly calls: SendCommand[];
}

/** A provider of kind `kind` (its capabilities from its module) answering as `mode` says. */
export function ledgerProvider(kind: 'twilio' | 'eum', mode: LedgerMode = 'up'): LedgerProvider {
  const capabilities: ProviderCapabilities = providerModule(kind).capabilities;
  const provider: LedgerProvider = {
    name: kind,
    capabilities,
    mode,
    ledger: [],
    lookups: [],
    calls: [],
    async send(command): Promise<SendOutcome> {
      provider.calls.push(command);
      const messageId = `${kind}-${provider.ledger.length + 1}`;
      switch (provider.mode) {
        case 'up':
          provider.ledger.push({ reference: command.clientReference, messageId });
          return { kind: 'accepted', messageId };
        case 'down':
          return { kind: 'not_sent_retryable', detail: 'connection_refused' };
        case 'timeout_after_accept':
          provider.ledger.push({ reference: command.clientReference, messageId });
          return { kind: 'unknown', detail: 'timeout', timedOut: true };
        case 'timeout_before_accept':
          return { kind: 'unknown', detail: 'timeout', timedOut: true };
        case 'refuse_destination':
          return { kind: 'not_sent_permanent', detail: '21211' };
        case 'refuse_account':
          return { kind: 'not_sent_permanent', detail: '30002' };
      }
    },
    async lookup(ref) {
      provider.lookups.push(ref);
      const found = provider.ledger.find((m) => m.reference.startsWith(`${ref.idempotencyKey}#`));
      if (found === undefined) return { kind: 'absent' };
      const attempt = Number(found.reference.split('#')[1]);
      return { kind: 'found', messageId: found.messageId, status: 'sent', attempt };
    },
  };
  return provider;
}

/** The messages of one command across every ledger: at most one is the promise. */
export function smsFor(key: string, ...providers: readonly LedgerProvider[]): number {
  return providers.reduce((n, p) => n + p.ledger.filter((m) => m.reference.startsWith(`${key}#`)).length, 0);
}
