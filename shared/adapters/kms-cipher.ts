import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  DecryptCommand,
  GenerateDataKeyCommand,
  type GenerateDataKeyCommandOutput,
  type KMSClient,
} from '@aws-sdk/client-kms';
import type { Clock } from '../domain/clock.js';
import { CodedError } from '../domain/errors.js';
import type { Cipher } from '../ports/cipher.js';
import { TransientFault } from '../ports/faults.js';
import { isTransientAwsError } from './aws-faults.js';

/**
 * Envelope encryption of the sensitive fields with AWS KMS (docs/design.md#data).
 *
 * Sealed format (four dot-separated parts, base64url without padding):
 *
 * ```
 * kms1.<encrypted data key>.<12-byte iv>.<ciphertext || 16-byte GCM tag>
 * ```
 *
 * - The data key is an AES-256 key from `GenerateDataKey`, reused by one container for at most
 *   `maxDataKeyAgeMs` and `maxDataKeyUses` encryptions, so admission usually pays no KMS round trip.
 * - Its KMS-encrypted copy travels inside the sealed string; decryption calls `kms:Decrypt` on it
 *   (results cached by that ciphertext, bounded in count and age).
 * - KMS encryption context: {@link KMS_ENCRYPTION_CONTEXT}, fixed, so one data key can serve many
 *   items and IAM policies can require it (`kms:EncryptionContext:*` conditions).
 * - AES-GCM additional authenticated data: the format version, the KMS context and the caller's
 *   per-item context (canonical JSON). A sealed value moved to another item, or tampered with,
 *   fails to decrypt.
 */
const KMS_SEALED_PREFIX = 'kms1';

/** The encryption context bound to every KMS call of this cipher (and required by the IAM policies). */
export const KMS_ENCRYPTION_CONTEXT: Readonly<Record<string, string>> = Object.freeze({
  service: 'reset-notifier',
  purpose: 'sensitive-fields',
});

/** Defaults: a data key is reused for at most 5 minutes and 1,000 encryptions. */
const DEFAULT_MAX_DATA_KEY_AGE_MS = 5 * 60_000;
const DEFAULT_MAX_DATA_KEY_USES = 1_000;
/** At most this many decrypted data keys are kept per container. */
const MAX_CACHED_DECRYPTION_KEYS = 64;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** Options of {@link createKmsCipher}. */
export interface KmsCipherOptions {
  readonly client: KMSClient;
  /** Key id, ARN or alias of the symmetric KMS key that wraps the data keys. */
  readonly keyId: string;
  readonly clock: Clock;
  /** How long one data key may be used for encryption. Default 5 minutes. */
  readonly maxDataKeyAgeMs?: number;
  /** How many encryptions one data key may perform. Default 1,000. */
  readonly maxDataKeyUses?: number;
}

/** The sealed value is malformed, was tampered with, or belongs to another context. */
/** KMS throttled or failed transiently while sealing: nothing was stored, a retry is safe. */
export class CipherUnavailableError extends TransientFault {
  readonly code = 'cipher_unavailable';
}

export class SealedValueError extends CodedError {
  readonly code = 'sealed_value_invalid';
  // Kept by name: the class name does not survive the minified Lambda bundle.
  override readonly name = 'SealedValueError';
}

interface DataKey {
  readonly plaintext: Buffer;
  readonly encrypted: Buffer;
  readonly createdAt: number;
  uses: number;
}

interface CachedKey {
  readonly plaintext: Buffer;
  readonly cachedAt: number;
}

/** Creates a {@link Cipher} that seals with AES-256-GCM under KMS-wrapped data keys. */
export function createKmsCipher(options: KmsCipherOptions): Cipher {
  const { client, keyId, clock } = options;
  const maxAgeMs = options.maxDataKeyAgeMs ?? DEFAULT_MAX_DATA_KEY_AGE_MS;
  const maxUses = options.maxDataKeyUses ?? DEFAULT_MAX_DATA_KEY_USES;
  if (!(maxAgeMs > 0) || !(maxUses >= 1))
    throw new RangeError('maxDataKeyAgeMs and maxDataKeyUses must be positive');

  let current: DataKey | undefined;
  let pendingKey: Promise<DataKey> | undefined;
  // Map iteration order is insertion order: re-inserting on hit makes it an LRU.
  const decrypted = new Map<string, CachedKey>();
  const pendingDecrypts = new Map<string, Promise<Buffer>>();

  const usable = (key: DataKey | undefined): key is DataKey =>
    key !== undefined && key.uses < maxUses && clock.now() - key.createdAt < maxAgeMs;

  async function generate(): Promise<DataKey> {
    let out: GenerateDataKeyCommandOutput;
    try {
      out = await client.send(
        new GenerateDataKeyCommand({
          KeyId: keyId,
          KeySpec: 'AES_256',
          EncryptionContext: { ...KMS_ENCRYPTION_CONTEXT },
        }),
      );
    } catch (error) {
      // Throttling (KMS request quotas) and transient faults: admission may be retried (503).
      if (!isTransientAwsError(error)) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new CipherUnavailableError(`KMS GenerateDataKey temporarily unavailable: ${reason}`, {
        cause: error,
      });
    }
    if (out.Plaintext?.byteLength !== KEY_BYTES || out.CiphertextBlob === undefined) {
      throw new Error('KMS GenerateDataKey returned no usable data key');
    }
    return {
      plaintext: Buffer.from(out.Plaintext),
      encrypted: Buffer.from(out.CiphertextBlob),
      createdAt: clock.now(),
      uses: 0,
    };
  }

  /** A data key with one use reserved for the caller; concurrent callers share one KMS call. */
  async function reserveDataKey(): Promise<DataKey> {
    for (;;) {
      if (usable(current)) {
        current.uses += 1;
        return current;
      }
      // The new key becomes `current` before any waiter resumes, so one KMS call serves them all.
      pendingKey ??= generate()
        .then((key) => {
          current = key;
          return key;
        })
        .finally(() => {
          pendingKey = undefined;
        });
      await pendingKey;
    }
  }

  async function unwrap(encrypted: Buffer): Promise<Buffer> {
    const cacheKey = encrypted.toString('base64');
    const hit = decrypted.get(cacheKey);
    if (hit !== undefined && clock.now() - hit.cachedAt < maxAgeMs) {
      decrypted.delete(cacheKey);
      decrypted.set(cacheKey, hit);
      return hit.plaintext;
    }
    decrypted.delete(cacheKey);
    let pending = pendingDecrypts.get(cacheKey);
    if (pending === undefined) {
      pending = (async () => {
        const out = await client.send(
          new DecryptCommand({
            KeyId: keyId,
            CiphertextBlob: encrypted,
            EncryptionContext: { ...KMS_ENCRYPTION_CONTEXT },
          }),
        );
        if (out.Plaintext?.byteLength !== KEY_BYTES)
          throw new Error('KMS Decrypt returned no usable data key');
        const plaintext = Buffer.from(out.Plaintext);
        decrypted.set(cacheKey, { plaintext, cachedAt: clock.now() });
        while (decrypted.size > MAX_CACHED_DECRYPTION_KEYS) {
          const oldest = decrypted.keys().next().value;
          if (oldest === undefined) break;
          decrypted.delete(oldest);
        }
        return plaintext;
      })().finally(() => pendingDecrypts.delete(cacheKey));
      pendingDecrypts.set(cacheKey, pending);
    }
    return pending;
  }

  return {
    async encrypt(plaintext, context) {
      const key = await reserveDataKey();
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key.plaintext, iv);
      cipher.setAAD(additionalData(context));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return [KMS_SEALED_PREFIX, b64(key.encrypted), b64(iv), b64(body)].join('.');
    },

    async decrypt(sealed, context) {
      const { encryptedKey, iv, body } = parseSealed(sealed);
      const key = await unwrap(encryptedKey);
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(additionalData(context));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      try {
        return new Uint8Array(
          Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]),
        );
      } catch (error) {
        throw new SealedValueError('sealed value failed authentication (tampered, or a different context)', {
          cause: error,
        });
      }
    },
  };
}

function parseSealed(sealed: string): { encryptedKey: Buffer; iv: Buffer; body: Buffer } {
  const parts = sealed.split('.');
  const [prefix, encryptedKey, iv, body] = parts;
  if (parts.length !== 4 || prefix !== KMS_SEALED_PREFIX || !encryptedKey || !iv || !body) {
    throw new SealedValueError(`not a ${KMS_SEALED_PREFIX} sealed value`);
  }
  const decoded = { encryptedKey: unb64(encryptedKey), iv: unb64(iv), body: unb64(body) };
  if (
    decoded.iv.length !== IV_BYTES ||
    decoded.body.length < TAG_BYTES ||
    decoded.encryptedKey.length === 0
  ) {
    throw new SealedValueError(`malformed ${KMS_SEALED_PREFIX} sealed value`);
  }
  return decoded;
}

/** Version, KMS context and caller context, with sorted keys so property order never matters. */
function additionalData(context: Readonly<Record<string, string>>): Buffer {
  const sorted = (record: Readonly<Record<string, string>>) =>
    Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Buffer.from(
    JSON.stringify([KMS_SEALED_PREFIX, sorted(KMS_ENCRYPTION_CONTEXT), sorted(context)]),
    'utf8',
  );
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

function unb64(text: string): Buffer {
  if (!/^[A-Za-z0-9_-]+$/.test(text))
    throw new SealedValueError(`malformed ${KMS_SEALED_PREFIX} sealed value`);
  return Buffer.from(text, 'base64url');
}
