import { createHmac } from 'node:crypto';
import { InvalidConfigurationError } from './errors.js';
import type { NotificationRequest } from './notification.js';

const FINGERPRINT_HEX_CHARS = 32; // 128 bits: collision-safe for correlation, not reversible without the key.

/** One fingerprint key and the version that names it in every fingerprint (`fp<version>:`). */
export interface FingerprintKey {
  readonly version: number;
  readonly secret: Uint8Array;
}

/**
 * The fingerprint keys a deployment holds (docs/security.md#fingerprint-key-rotation): `current`
 * fingerprints new commands; every key, current or not, answers replays of the commands it
 * fingerprinted and counts budgets, so neither breaks when the current key changes.
 */
export interface FingerprintKeyRing {
  readonly current: number;
  readonly keys: readonly FingerprintKey[];
}

/** A keyed fingerprint function. The keys never leave this closure. */
export interface Fingerprinter {
  /** The version of the key new fingerprints are taken under. */
  readonly version: number;
  /**
   * `fp<version>:<hex>` = HMAC-SHA256(current key, E.164 number), truncated. Correlates without
   * revealing the number; given the canonical form (`shared/http/phone.ts`), every spelling of a
   * number has one per key.
   */
  destination(e164: string): string;
  /**
   * The number's fingerprint under every key held, the current one first: a budget counts under
   * each, so a number's budget carries across a change of the current key.
   */
  destinations(e164: string): readonly string[];
  /**
   * `pf<version>:<hex>`: HMAC over the canonical payload: same key + different payload = conflict,
   * without storing the payload.
   */
  payload(request: NotificationRequest): string;
  /**
   * Whether `stored` (a payload fingerprint taken under any key this ring holds) is `request`'s:
   * computed under the key its version names. `undefined` when that key is not held here.
   */
  payloadMatches(stored: string, request: NotificationRequest): boolean | undefined;
}

/** The key version a destination or payload fingerprint names (`fp2:...` = 2), if it names one. */
export function fingerprintVersion(fingerprint: string): number | undefined {
  const match = /^(?:fp|pf)([1-9]\d*):/.exec(fingerprint);
  return match ? Number(match[1]) : undefined;
}

/**
 * Builds a {@link Fingerprinter} from one secret of at least 32 bytes (version 1) or a key ring
 * whose `current` version it holds.
 */
export function createFingerprinter(keys: Uint8Array | FingerprintKeyRing): Fingerprinter {
  const ring: FingerprintKeyRing =
    keys instanceof Uint8Array ? { current: 1, keys: [{ version: 1, secret: keys }] } : keys;
  const hmacs = new Map(ring.keys.map((k) => [k.version, keyedHmac(k)] as const));
  if (hmacs.size !== ring.keys.length) {
    throw new InvalidConfigurationError('the fingerprint keys name one version twice');
  }
  const current = hmacs.get(ring.current);
  if (current === undefined) {
    throw new InvalidConfigurationError(
      `the fingerprint key version ${ring.current} is not among the keys (${[...hmacs.keys()].join(', ')})`,
    );
  }
  const others = [...hmacs].filter(([version]) => version !== ring.current);
  const destination = (version: number, hmac: Hmac, e164: string) =>
    `fp${version}:${hmac('destination', e164).slice(0, FINGERPRINT_HEX_CHARS)}`;
  const payload = (version: number, hmac: Hmac, request: NotificationRequest) =>
    `pf${version}:${hmac('payload', canonicalPayload(request))}`;
  return {
    version: ring.current,
    destination: (e164) => destination(ring.current, current, e164),
    destinations: (e164) => [
      destination(ring.current, current, e164),
      ...others.map(([version, hmac]) => destination(version, hmac, e164)),
    ],
    payload: (request) => payload(ring.current, current, request),
    payloadMatches: (stored, request) => {
      const version = fingerprintVersion(stored);
      const hmac = version === undefined ? undefined : hmacs.get(version);
      if (version === undefined || hmac === undefined) return undefined;
      return stored === payload(version, hmac, request);
    },
  };
}

type Hmac = (domain: string, data: string) => string;

function keyedHmac({ version, secret }: FingerprintKey): Hmac {
  if (!Number.isInteger(version) || version < 1) {
    throw new InvalidConfigurationError(
      `a fingerprint key version must be a whole number from 1 (got ${version})`,
    );
  }
  if (secret.byteLength < 32) {
    throw new InvalidConfigurationError('the fingerprint key must be at least 32 bytes');
  }
  const key = Buffer.from(secret);
  return (domain, data) =>
    createHmac('sha256', key).update(domain).update('\u0000').update(data).digest('hex');
}

/**
 * The keys of a fingerprint key value: one key (version 1, what every deployment started with) or
 * a ring `<version>:<key>,<version>:<key>` (docs/security.md#fingerprint-key-rotation). `decode`
 * turns one key's text into bytes (hex or base64, as the source writes it); `label` names the
 * source in errors, which never include the value.
 */
export function parseFingerprintKeys(
  text: string,
  decode: (keyText: string) => Uint8Array,
  label: string,
): FingerprintKey[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new InvalidConfigurationError(`${label} is empty`);
  const versioned = entries.map((entry) => /^(\d+):(.+)$/.exec(entry));
  if (entries.length === 1 && versioned[0] === null) {
    return [{ version: 1, secret: decode(entries[0] as string) }];
  }
  return versioned.map((match, i) => {
    if (match === null) {
      throw new InvalidConfigurationError(
        `${label}: entry ${i + 1} is not <version>:<key> (a ring of several keys names each key's version)`,
      );
    }
    return { version: Number(match[1]), secret: decode(match[2] as string) };
  });
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
