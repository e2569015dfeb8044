/**
 * Rules on what goes into an SMS body (docs/design.md#abuse-limits): a safe reset URL, and a rendered body
 * of bounded cost. Pure; the HTTP layer turns a problem into a field error.
 */

/** Longest `reset_url` accepted. */
const MAX_RESET_URL_LENGTH = 512;

/** What `MAX_SMS_SEGMENTS` defaults to. */
export const DEFAULT_MAX_SMS_SEGMENTS = 3;

// Whitespace, control, format (bidi overrides, zero-width) and line/paragraph separator characters.
const UNSAFE_CHARACTER = /[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Why `raw` is not an acceptable reset URL, or undefined when it is: https only, no userinfo,
 * nothing invisible or direction-changing (it would mislead the reader of the SMS), at most
 * {@link MAX_RESET_URL_LENGTH} characters, and, when `allowedHosts` is not empty, one of those hosts.
 * The message never echoes the value.
 */
export function resetUrlProblem(raw: string, allowedHosts: readonly string[] = []): string | undefined {
  if (raw.length > MAX_RESET_URL_LENGTH) return `must be at most ${MAX_RESET_URL_LENGTH} characters`;
  if (UNSAFE_CHARACTER.test(raw)) return 'must not contain whitespace, control or bidi characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an https URL';
  }
  if (url.protocol !== 'https:' || !/^https:\/\//i.test(raw) || url.hostname === '') {
    return 'must be an https URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  if (allowedHosts.length > 0 && !allowedHosts.includes(url.hostname))
    return 'has a host that is not allowed';
  return undefined;
}

/** Parses `RESET_URL_HOSTS` (comma-separated host names; empty = any host). */
export function parseHosts(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
    .map((host) => new URL(`https://${host}`).hostname);
}

// GSM 03.38 default alphabet (without ESC) and its extension table (each costs two septets).
const GSM_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM_EXTENSION = new Set('^{}\\[~]|€\f');

/** How a body is encoded and how many segments it takes. */
export interface SegmentCount {
  readonly encoding: 'GSM-7' | 'UCS-2';
  /** Septets (GSM-7) or UTF-16 code units (UCS-2). */
  readonly units: number;
  readonly segments: number;
}

/**
 * Segments of an SMS body: GSM-7 when every character is in the default alphabet or its extension
 * (extension characters count double), 160 septets in one segment or 153 per part when
 * concatenated; UCS-2 otherwise, 70 code units or 67 per part (a character outside the BMP counts 2).
 */
export function countSegments(body: string): SegmentCount {
  let septets = 0;
  let gsm = true;
  for (const char of body) {
    if (GSM_BASIC.has(char)) septets += 1;
    else if (GSM_EXTENSION.has(char)) septets += 2;
    else {
      gsm = false;
      break;
    }
  }
  if (gsm) {
    return { encoding: 'GSM-7', units: septets, segments: septets <= 160 ? 1 : Math.ceil(septets / 153) };
  }
  const units = body.length;
  return { encoding: 'UCS-2', units, segments: units <= 70 ? 1 : Math.ceil(units / 67) };
}
