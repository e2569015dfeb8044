/**
 * Twilio status callbacks: parsing for the receipts endpoint, and Twilio's request signature.
 * The client reference comes from the callback URL's query (we put it there when sending), the
 * rest from the form body Twilio posts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ProviderStatus } from '../domain/provider.js';
import { MESSAGE_SID, normaliseStatus, statusDetail } from '../providers/twilio/classification.js';

/** One parsed status callback. */
export interface StatusCallback {
  readonly messageSid: string;
  /** Normalised status. */
  readonly status: ProviderStatus;
  /** Twilio's own status word, for evidence. */
  readonly providerStatus: string;
  /** From the callback URL's `client_reference` query parameter; null when absent. */
  readonly clientReference: string | null;
  readonly errorCode: number | null;
  /** The final status's code in the `reason_detail` grammar (`twilio:30500`); absent while pending. */
  readonly detail?: string;
}

export type StatusCallbackParse =
  | { readonly ok: true; readonly value: StatusCallback }
  | { readonly ok: false; readonly reason: 'missing_message_sid' | 'invalid_message_sid' | 'missing_status' };

/**
 * Parses a callback: `body` is the form-encoded request body, `query` the request URL's query
 * string (or its parsed parameters).
 */
export function parseStatusCallback(input: {
  readonly body: string;
  readonly query?: string | URLSearchParams;
}): StatusCallbackParse {
  const form = new URLSearchParams(input.body);
  const query = input.query instanceof URLSearchParams ? input.query : new URLSearchParams(input.query ?? '');
  const messageSid = form.get('MessageSid') ?? form.get('SmsSid');
  const providerStatus = form.get('MessageStatus') ?? form.get('SmsStatus');
  if (messageSid === null || messageSid === '') return { ok: false, reason: 'missing_message_sid' };
  if (!MESSAGE_SID.test(messageSid)) return { ok: false, reason: 'invalid_message_sid' };
  if (providerStatus === null || providerStatus === '') return { ok: false, reason: 'missing_status' };
  const errorCode = form.get('ErrorCode');
  const detail = statusDetail(providerStatus, errorCode);
  return {
    ok: true,
    value: {
      messageSid,
      // `failed` with a never-handed-to-a-carrier code reads as `not_sent` or `not_sent_permanent`
      // (TWILIO_FAILED_CODES); any other `failed` as `undelivered`.
      status: normaliseStatus(providerStatus, errorCode),
      providerStatus,
      clientReference: query.get('client_reference'),
      errorCode: errorCode !== null && /^\d+$/.test(errorCode) ? Number(errorCode) : null,
      ...(detail === undefined ? {} : { detail }),
    },
  };
}

/**
 * The callback's `AccountSid`: "the 34 character id of the Account this message is associated
 * with" (Twilio, messaging webhook request parameters; a status callback carries a subset of them,
 * docs/receipts.md#who-is-believed). Null when absent.
 */
export function callbackAccountSid(form: URLSearchParams): string | null {
  return form.get('AccountSid');
}

/**
 * Twilio's `X-Twilio-Signature`: base64 HMAC-SHA1, keyed with the auth token, of the full callback
 * URL followed by every POST parameter as name+value, sorted by name.
 */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const pairs = [...params.entries()].sort(([a, av], [b, bv]) =>
    a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1,
  );
  return createHmac('sha1', authToken)
    .update(url + pairs.map(([name, value]) => name + value).join(''), 'utf8')
    .digest('base64');
}

/** Constant-time check of a callback's `X-Twilio-Signature`. */
export function verifyTwilioSignature(
  authToken: string,
  url: string,
  params: URLSearchParams,
  signature: string | null | undefined,
): boolean {
  if (typeof signature !== 'string' || signature === '') return false;
  const expected = Buffer.from(twilioSignature(authToken, url, params));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
