import * as z from 'zod';
import { REASON_DETAIL_MAX_LENGTH, REASON_DETAIL_PATTERN } from '../domain/reason-detail.js';
import { ALL_REASONS, ALL_STATES, type NotificationState, type ReasonCode } from '../domain/states.js';
import { WaitKind } from '../domain/waiting-for.js';
import type { EvidenceView, NotificationView } from '../usecases/view.js';
import type { ErrorBody } from './responses.js';

/**
 * Zod schemas of what the API answers (docs/design.md#http-api), for the OpenAPI document and for
 * checking responses in tests and the client. The handlers build these bodies from the use-case
 * views; the compile-time checks at the end keep the schemas and the view types in step.
 */

const isoTime = z.iso.datetime({ offset: true });
const states = z.enum(ALL_STATES as [NotificationState, ...NotificationState[]]);
const reasons = z.enum(ALL_REASONS as [ReasonCode, ...ReasonCode[]]);
const reasonDetail = z
  .string()
  .max(REASON_DETAIL_MAX_LENGTH)
  .regex(REASON_DETAIL_PATTERN)
  .meta({
    description:
      'Machine-readable why of the transition: a provider code or classification id (`twilio:21211`, ' +
      '`eum:validation:PRICE_OVER_THRESHOLD`, `sns:<code>`), why a proof of absence waits ' +
      '(`absence_pending:<why>`, `absence_disabled:<why>`), or why a command expired unsent ' +
      '(`never_claimed`, `backoff_past_deadline:<cause>`, `max_attempts:<cause>`). Never personal data.',
  });
const waitKinds = Object.values(WaitKind) as [WaitKind, ...WaitKind[]];

/** The public view of one notification: never the phone number, params, token or URL. */
export const NotificationViewSchema = z.object({
  idempotency_key: z.string(),
  event_id: z.string(),
  channel: z.string(),
  template: z.string(),
  state: states,
  attempts: z.number().int().nonnegative(),
  created_at: isoTime,
  updated_at: isoTime,
  expires_at: isoTime,
  destination_fingerprint: z
    .string()
    .meta({ description: 'HMAC of the destination number (not reversible)' }),
  provider: z.object({ name: z.string(), message_id: z.string().optional() }),
  last_reason: reasons.optional(),
  reason_detail: reasonDetail.optional(),
  waiting_for: z
    .object({
      what: z.enum(waitKinds),
      until: isoTime,
      bounded_by_expiry: z
        .boolean()
        .meta({ description: 'The wait ends at expires_at: the command expires then' }),
    })
    .optional()
    .meta({ description: 'For a command that is not final: what the service waits for, and until when' }),
});

/** One evidence record (a transition, with its reason and actor). */
export const EvidenceViewSchema = z.object({
  idempotency_key: z.string(),
  event_id: z.string(),
  seq: z.number().int().nonnegative(),
  at: isoTime,
  from_state: states.nullable(),
  to_state: states,
  attempt: z.number().int().nonnegative(),
  reason: reasons,
  reason_detail: reasonDetail.optional(),
  actor: z.string(),
  provider: z.string().optional(),
  provider_message_id: z.string().optional(),
  destination_fingerprint: z.string(),
});

/** `GET /v1/notifications/{key}/evidence`. */
export const EvidenceListSchema = z.object({ transitions: z.array(EvidenceViewSchema) });

/** `GET /v1/notifications?event_id=...`. */
export const NotificationListSchema = z.object({ items: z.array(NotificationViewSchema) });

/** The body of every deliberate 4xx, of `503` and of the generic `500`. */
export const ErrorBodySchema = z.object({
  code: z.string().meta({ description: 'Stable, machine-readable (e.g. idempotency_key_reused)' }),
  message: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

/** A Twilio status callback (form fields; Twilio adds more, which are accepted and ignored). */
export const TwilioStatusCallbackSchema = z.looseObject({
  MessageSid: z.string(),
  MessageStatus: z.string(),
  AccountSid: z.string().optional(),
  ErrorCode: z.string().optional(),
});

/** The schemas' types: what a client receives. */
export type NotificationViewBody = z.output<typeof NotificationViewSchema>;
export type EvidenceViewBody = z.output<typeof EvidenceViewSchema>;
export type ErrorBodyShape = z.output<typeof ErrorBodySchema>;

// Compile-time: the schemas name exactly the fields of the views' types, so the document cannot
// promise a field the handler does not send (nor miss one it does).
type Same<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
const viewKeysMatch: Same<NotificationViewBody, NotificationView> = true;
const evidenceKeysMatch: Same<EvidenceViewBody, EvidenceView> = true;
const errorKeysMatch: Same<ErrorBodyShape, ErrorBody> = true;
void [viewKeysMatch, evidenceKeysMatch, errorKeysMatch];
