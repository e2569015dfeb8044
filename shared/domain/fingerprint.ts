import { createHmac } from 'node:crypto';
import { InvalidConfigurationError } from './errors.js';
import type { NotificationRequest } from './notification.js';

/** Version prefix of destination fingerprints, so the key can be rotated without ambiguity. */
export const FINGERPRINT_VERSION = 'fp1';
const FINGERPRINT_HEX_CHARS = 32; // 128 bits: collision-safe for correlation, not reversible without the key.

/** A keyed fingerprint function. The key never leaves this closure. */
export interface Fingerprinter {
  /**
   * `fp1:<hex>` = HMAC-SHA256(key, E.164 number), truncated. Correlates without revealing the
   * number; given the canonical form (`shared/http/phone.ts`), every spelling of a number has one.
   */
  destination(e164: string): string;
  /** HMAC over the canonical payload: same key + different payload = conflict, without storing the payload. */
  payload(request: NotificationRequest): string;
}

/** Builds a {@link Fingerprinter} from a secret of at least 32 bytes. */
export function createFingerprinter(secret: Uint8Array): Fingerprinter {
  if (secret.byteLength < 32) {
    throw new InvalidConfigurationError('the fingerprint key must be at least 32 bytes');
  }
  const key = Buffer.from(secret);
  const hmac = (domain: string, data: string) =>
    createHmac('sha256', key).update(domain).update('\u0000').update(data).digest('hex');
  return {
    destination: (e164) =>
      `${FINGERPRINT_VERSION}:${hmac('destination', e164).slice(0, FINGERPRINT_HEX_CHARS)}`,
    payload: (request) => `pf1:${hmac('payload', canonicalPayload(request))}`,
  };
}

/**
 * The payload as one canonical string: every field that defines "the same command".
 * Keys are sorted so property order in the request body never matters.
 */
export function canonicalPayload(request: NotificationRequest): string {
  return canonicalJson({
    event_id: request.eventId,
    channel: request.channel,
    template: request.template,
    locale: request.locale,
    expires_at: request.expiresAt,
    phone: request.sensitive.phone,
    params: request.sensitive.params,
  });
}

function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
