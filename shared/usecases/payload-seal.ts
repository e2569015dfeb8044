import type { SensitivePayload } from '../domain/notification.js';
import type { Cipher } from '../ports/cipher.js';

/** The encryption context binds a sealed payload to its command: it cannot be swapped onto another key. */
const contextFor = (idempotencyKey: string) => ({ idempotency_key: idempotencyKey, purpose: 'sms-payload' });

/** Encrypts phone and params for storage. */
export async function sealPayload(
  cipher: Cipher,
  idempotencyKey: string,
  payload: SensitivePayload,
): Promise<string> {
  const plaintext = Buffer.from(JSON.stringify({ phone: payload.phone, params: payload.params }), 'utf8');
  return cipher.encrypt(plaintext, contextFor(idempotencyKey));
}

/** Decrypts a stored payload, just before it is needed. */
export async function openPayload(
  cipher: Cipher,
  idempotencyKey: string,
  sealed: string,
): Promise<SensitivePayload> {
  const plaintext = await cipher.decrypt(sealed, contextFor(idempotencyKey));
  return JSON.parse(Buffer.from(plaintext).toString('utf8')) as SensitivePayload;
}
