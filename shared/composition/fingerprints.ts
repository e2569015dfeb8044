import type { Fingerprinter } from '../domain/fingerprint.js';
import { canonicalPhone } from '../http/phone.js';

/** A number's destination fingerprints, or why its spelling is refused (never echoing it). */
export type NumberFingerprints =
  | { readonly kind: 'fingerprints'; readonly fingerprints: readonly string[] }
  | { readonly kind: 'refused'; readonly message: string };

/**
 * The destination fingerprints of a number as the API takes them: from its canonical E.164 form
 * (any spelling the API accepts), under every key `fingerprinter` holds, the current one first.
 * For operators relating evidence across a key rotation (docs/security.md#fingerprint-key-rotation).
 */
export function destinationFingerprintsOf(
  fingerprinter: Fingerprinter,
  spelling: string,
): NumberFingerprints {
  const phone = canonicalPhone(spelling);
  if (phone.kind === 'refused') return phone;
  return { kind: 'fingerprints', fingerprints: fingerprinter.destinations(phone.e164) };
}
