/**
 * The API's bodies as the client's own types. They restate the zod schemas of shared/http (which
 * the OpenAPI document is generated from) so the package's declarations need neither zod nor the
 * handlers' types; test/unit/client/wire-types.test.ts fails typecheck when the two differ.
 */
import type { NotificationState, ReasonCode } from '../domain/states.js';
import type { Locale, TemplateName } from '../domain/templates.js';
import type { WaitKind } from '../domain/waiting-for.js';

/** A notification as the API shows it (never the phone number, params, token or URL). */
export interface NotificationView {
  idempotency_key: string;
  event_id: string;
  channel: string;
  template: string;
  state: NotificationState;
  attempts: number;
  created_at: string;
  updated_at: string;
  expires_at: string;
  /** HMAC of the destination number (not reversible). */
  destination_fingerprint: string;
  provider: { name: string; message_id?: string | undefined };
  last_reason?: ReasonCode | undefined;
  /** Machine-readable why of the last transition (a provider code, a classification id); never personal data. */
  reason_detail?: string | undefined;
  /** For a command that is not final: what the service waits for, and until when. */
  waiting_for?: { what: WaitKind; until: string; bounded_by_expiry: boolean } | undefined;
}

/** One evidence record: a transition, with its reason and actor. */
export interface EvidenceView {
  idempotency_key: string;
  event_id: string;
  seq: number;
  at: string;
  from_state: NotificationState | null;
  to_state: NotificationState;
  attempt: number;
  reason: ReasonCode;
  reason_detail?: string | undefined;
  actor: string;
  provider?: string | undefined;
  provider_message_id?: string | undefined;
  destination_fingerprint: string;
}

/** The error body the API sends with every deliberate 4xx, 503 and the generic 500. */
export interface ApiErrorBody {
  /** Stable, machine-readable (e.g. `idempotency_key_reused`). */
  code: string;
  message: string;
  errors?: Array<{ path: string; message: string }> | undefined;
}

/**
 * The body of `POST /v1/notifications` (`locale` defaults to `en`): an international number
 * (the service canonicalises it), and exactly one secret, a numeric code or a reset URL.
 */
export type AdmitRequest = {
  event_id: string;
  channel: 'sms';
  template: TemplateName;
  locale?: Locale;
  destination: { phone: string };
  /** ISO 8601 with a time zone; nothing is sent after it. */
  expires_at: string;
  params: { code: string } | { reset_url: string };
};
