import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { CodedError } from '../domain/errors.js';
import type { Cipher } from '../ports/cipher.js';

const FORMAT = 'aes1';
/** GCM's standard nonce size; other lengths are hashed into one and weaken the construction. */
const IV_BYTES = 12;
/** The full tag: Node would otherwise accept a truncated tag (down to 4 bytes) and forgeries get cheap. */
const TAG_BYTES = 16;

/** Thrown when a sealed value is malformed, was made with another key, or was tampered with. */
export class SealedValueError extends CodedError {
  readonly code = 'sealed_value_invalid';
}

/** Parses a 32-byte key given as 64 hex chars or base64. */
export function parseKey(encoded: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(encoded)
    ? Buffer.from(encoded, 'hex')
    : Buffer.from(encoded, 'base64');
  if (key.byteLength !== 32)
    throw new SealedValueError('a local data key must be 32 bytes (64 hex chars or base64)');
  return key;
}

/** Canonical additional authenticated data: binds a ciphertext to its command. */
function contextAad(context: Readonly<Record<string, string>>): Buffer {
  const entries = Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1));
  return Buffer.from(JSON.stringify(entries));
}

/**
 * AES-256-GCM with a local key: `aes1.<iv>.<ciphertext+tag>` (base64url). Used by `npm start` and
 * tests; AWS uses the KMS envelope adapter with the same port.
 */
export function createLocalCipher(key: Uint8Array): Cipher {
  const secret = Buffer.from(key);
  return {
    async encrypt(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', secret, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(contextAad(context));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return `${FORMAT}.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    async decrypt(sealed, context) {
      const [format, ivText, bodyText] = sealed.split('.');
      if (format !== FORMAT || !ivText || !bodyText) throw new SealedValueError('not an aes1 sealed value');
      const iv = Buffer.from(ivText, 'base64url');
      const body = Buffer.from(bodyText, 'base64url');
      if (iv.byteLength !== IV_BYTES || body.byteLength < TAG_BYTES) {
        throw new SealedValueError(`an aes1 value needs a ${IV_BYTES}-byte IV and a ${TAG_BYTES}-byte tag`);
      }
      const decipher = createDecipheriv('aes-256-gcm', secret, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(contextAad(context));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]);
      } catch (error) {
        throw new SealedValueError('sealed value failed authentication', { cause: error });
      }
    },
  };
}
