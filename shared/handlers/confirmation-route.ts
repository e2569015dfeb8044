/**
 * `POST /v1/notifications/{idempotency_key}/confirmation`: the auth service says the code or link
 * was used (docs/design.md#http-api). `Content-Type: application/json` always, the body optional:
 * `{ "confirmed_at"?: ISO 8601 date-time }`. 200 with the view (header `Idempotent-Replayed: true`
 * for a repeat), 403 `cross_site_request` for a browser's cross-site request, 404 unknown key, 409
 * `not_sent` for a command that was never sent, 415 without the JSON type (an empty body too), 503
 * when it kept losing write races.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import * as z from 'zod';
import type { Clock } from '../domain/clock.js';
import { fieldErrors } from '../http/request-schema.js';
import { json, problem } from '../http/responses.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import type { NotificationStore } from '../ports/store.js';
import { ConfirmationContendedError, confirmDelivery } from '../usecases/confirm-delivery.js';

/** The optional body. `confirmed_at` is checked, not stored: evidence carries the service's own clock. */
export const ConfirmationRequestBody = z.strictObject({
  confirmed_at: z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone' })
    .optional(),
});

const MAX_CONFIRMATION_BYTES = 1024;

/**
 * True for a request a browser sent from another origin. A page can make a browser POST here with
 * no body and no preflight (a form, `fetch` in `no-cors` mode): `Sec-Fetch-Site` says the request
 * is not `same-origin` (or user-initiated, `none`), or `Origin` is `null` or names another host
 * than `Host`. The auth service calls from a server and sends neither header.
 */
export function isCrossSite(headers: Readonly<Record<string, string | undefined>>): boolean {
  const site = headers['sec-fetch-site']?.trim().toLowerCase();
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const origin = headers.origin?.trim();
  if (origin === undefined) return false;
  if (!URL.canParse(origin)) return true;
  return new URL(origin).host !== (headers.host ?? '').trim().toLowerCase();
}

export interface ConfirmationRouteDeps {
  readonly store: NotificationStore;
  readonly clock: Clock;
  /** The provider's feedback API, when it has one. */
  readonly feedback?: Pick<SmsProvider, 'confirm'>;
  /** With more than one provider: the feedback API of the provider a message went through. */
  readonly feedbackOf?: (provider: string) => Pick<SmsProvider, 'confirm'> | undefined;
  /** Logs a forward that did not work (key and detail only). */
  readonly onFeedbackFailure?: (detail: { readonly idempotencyKey: string; readonly detail: string }) => void;
}

export async function postConfirmation(
  deps: ConfirmationRouteDeps,
  event: APIGatewayProxyEventV2,
  key: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  if (isCrossSite(event.headers)) {
    return problem(403, 'cross_site_request', 'a cross-site request cannot confirm a notification');
  }
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.byteLength > MAX_CONFIRMATION_BYTES) {
    return problem(413, 'payload_too_large', `the body must be at most ${MAX_CONFIRMATION_BYTES} bytes`);
  }
  // JSON only, an empty body too: a browser sends `application/json` cross-site only after a CORS
  // preflight, which nothing here answers; the other types (and none) it sends without asking.
  const contentType = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') {
    return problem(415, 'unsupported_media_type', 'Content-Type must be application/json');
  }
  if (bytes.byteLength > 0) {
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString('utf8'));
    } catch {
      return problem(400, 'malformed_json', 'the body is not valid JSON');
    }
    const parsed = ConfirmationRequestBody.safeParse(body);
    if (!parsed.success) {
      return problem(422, 'validation_failed', 'the request has invalid fields', fieldErrors(parsed.error));
    }
  }
  if (!key) return problem(404, 'not_found', 'no notification with this idempotency key');
  try {
    const result = await confirmDelivery(deps, key);
    switch (result.kind) {
      case 'confirmed':
        return json(200, result.view);
      case 'already_confirmed':
        return json(200, result.view, { 'idempotent-replayed': 'true' });
      case 'not_found':
        return problem(404, 'not_found', 'no notification with this idempotency key');
      case 'never_sent':
        return problem(409, 'not_sent', 'this notification was never sent, so it cannot have been used');
    }
  } catch (error) {
    if (!(error instanceof ConfirmationContendedError)) throw error;
    const busy = problem(503, 'temporarily_unavailable', 'the notification is busy; retrying is safe');
    return { ...busy, headers: { ...busy.headers, 'retry-after': '1' } };
  }
}
