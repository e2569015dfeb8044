import * as z from 'zod';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency-key.js';
import { resetUrlShapeProblem } from '../domain/sms-body.js';
import { LOCALES, TEMPLATES } from '../domain/templates.js';
import { canonicalPhone, MAX_PHONE_CHARS, PHONE_FORM_MESSAGE } from './phone.js';

/**
 * A number in international form, parsed to its canonical E.164 form ({@link canonicalPhone}):
 * the handler, the budgets, the fingerprints and the provider only ever see the canonical string.
 */
const e164Phone = z
  .string()
  .max(MAX_PHONE_CHARS, PHONE_FORM_MESSAGE)
  .describe(
    'An international number: + and the country code, then digits; E.123 separators and a national trunk prefix are removed (+33 06 12 34 56 78 is +33612345678)',
  )
  .transform((value, ctx) => {
    const phone = canonicalPhone(value);
    if (phone.kind === 'canonical') return phone.e164;
    ctx.addIssue({ code: 'custom', message: phone.message });
    return z.NEVER;
  });

/**
 * The static rules of a reset URL (https, no userinfo, no port, no invisible characters, no label
 * mixing scripts, <= 512 chars); the deployment's host allow-list (and whether an internationalized
 * host is on it) is checked by the handler, which knows the configuration.
 */
const resetUrl = z.string().superRefine((value, ctx) => {
  const problem = resetUrlShapeProblem(value);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** Exactly one secret: a numeric code or a reset URL. Unknown keys are rejected (no stray PII). */
const params = z.union([
  z.strictObject({ code: z.string().regex(/^\d{4,10}$/, 'must be 4 to 10 digits') }),
  z.strictObject({ reset_url: resetUrl }),
]);

/** The body of `POST /v1/notifications` (docs/design.md#http-api). */
export const NotificationRequestBody = z.strictObject({
  event_id: z.string().regex(IDEMPOTENCY_KEY_PATTERN, 'must be 1-255 characters of [A-Za-z0-9._:-]'),
  channel: z.literal('sms'),
  template: z.enum(TEMPLATES),
  locale: z.enum(LOCALES).default('en'),
  destination: z.strictObject({ phone: e164Phone }),
  expires_at: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone' }),
  params,
});
export type NotificationRequestBody = z.infer<typeof NotificationRequestBody>;

/** The optional `Idempotency-Key` header; also the `{idempotency_key}` of every path that names a command. */
export const IdempotencyKeyHeader = z
  .string()
  .regex(IDEMPOTENCY_KEY_PATTERN, 'must be 1-255 characters of [A-Za-z0-9._:-]');

/** The `event_id` query of `GET /v1/notifications`: what an admitted body's `event_id` may be. */
export const EventIdQuery = NotificationRequestBody.shape.event_id;

/** One field error as the API returns it. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/** Flattens zod issues to `{ path, message }` with dotted paths. Never echoes the rejected value. */
export function fieldErrors(error: z.ZodError, prefix?: string): FieldError[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return { path: [prefix, path].filter(Boolean).join('.') || '(body)', message: issue.message };
  });
}
