import type { EvidenceRecord, NotificationRecord } from '../domain/notification.js';
import { type WaitingFor, waitingFor } from '../domain/waiting-for.js';

/** The public view of a command (docs/design.md#http-api). Never the phone number, params, token or URL. */
export interface NotificationView {
  readonly idempotency_key: string;
  readonly event_id: string;
  readonly channel: string;
  readonly template: string;
  readonly state: string;
  readonly attempts: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly expires_at: string;
  readonly destination_fingerprint: string;
  readonly provider: { readonly name: string; readonly message_id?: string };
  readonly last_reason?: string;
  /** The last transition's machine-readable why (`twilio:21211`, `absence_pending:<why>`); never personal data. */
  readonly reason_detail?: string;
  /** For a command that is not final: what the service waits for, and until when. */
  readonly waiting_for?: WaitingForView;
}

/** What a non-final command waits for (`shared/domain/waiting-for.ts`). */
export interface WaitingForView {
  readonly what: string;
  readonly until: string;
  /** The wait ends at `expires_at`: the command expires then instead. */
  readonly bounded_by_expiry: boolean;
}

/** The public shape of one evidence record (docs/design.md#evidence). */
export interface EvidenceView {
  readonly idempotency_key: string;
  readonly event_id: string;
  readonly seq: number;
  readonly at: string;
  readonly from_state: string | null;
  readonly to_state: string;
  readonly attempt: number;
  readonly reason: string;
  readonly reason_detail?: string;
  readonly actor: string;
  readonly provider?: string;
  readonly provider_message_id?: string;
  readonly destination_fingerprint: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function toView(record: NotificationRecord): NotificationView {
  const waiting = waitingFor(record);
  return {
    idempotency_key: record.idempotencyKey,
    event_id: record.eventId,
    channel: record.channel,
    template: record.template,
    state: record.state,
    attempts: record.attempts,
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
    expires_at: iso(record.expiresAt),
    destination_fingerprint: record.destinationFingerprint,
    provider: {
      name: record.provider.name,
      ...(record.provider.messageId === undefined ? {} : { message_id: record.provider.messageId }),
    },
    last_reason: record.lastReason,
    ...(record.reasonDetail === undefined ? {} : { reason_detail: record.reasonDetail }),
    ...(waiting === undefined ? {} : { waiting_for: toWaitingView(waiting) }),
  };
}

/** The public shape of {@link waitingFor}'s answer. */
export function toWaitingView(waiting: WaitingFor): WaitingForView {
  return { what: waiting.kind, until: iso(waiting.until), bounded_by_expiry: waiting.boundedByExpiry };
}

export function toEvidenceView(evidence: EvidenceRecord): EvidenceView {
  return {
    idempotency_key: evidence.idempotencyKey,
    event_id: evidence.eventId,
    seq: evidence.seq,
    at: iso(evidence.at),
    from_state: evidence.fromState,
    to_state: evidence.toState,
    attempt: evidence.attempt,
    reason: evidence.reason,
    ...(evidence.reasonDetail === undefined ? {} : { reason_detail: evidence.reasonDetail }),
    actor: evidence.actor,
    ...(evidence.provider === undefined ? {} : { provider: evidence.provider }),
    ...(evidence.providerMessageId === undefined ? {} : { provider_message_id: evidence.providerMessageId }),
    destination_fingerprint: evidence.destinationFingerprint,
  };
}
