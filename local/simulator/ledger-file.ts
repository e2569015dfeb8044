/**
 * The simulators' messages on disk (`--data-dir`): kept across restarts as a real provider keeps
 * them, bodies and numbers included, since Twilio's API returns both and a restarted provider that
 * forgot them would look like Message Redaction (a blank body) to the service. The AWS simulator
 * keeps its messages the same way (numbers sealed: SNS's delivery-status logs and End User
 * Messaging's events carry them).
 *
 * One JSON line per write of a message (acceptance, redaction, cancel, delete); the last line of a
 * sid wins. Everything a read derives from (sid, dates, status timeline with its error codes,
 * schedule, faults, deleted) is written as it is. The number and the body are personal data and
 * the secret (a reset code or URL): they are never written in clear, only sealed with AES-256-GCM
 * (`sealed`: `aes1.<iv>.<ciphertext+tag>`, base64url), bound to the message's sid as additional
 * data. The key is derived (HKDF-SHA256) from the local stack's data key, or, for a simulator run
 * on its own, from a random key kept next to the file (`<file>.key`, mode 0600).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { StoredMessage } from './messages.js';

const FORMAT = 'aes1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Domain separation: this key seals nothing but the simulator's ledger. */
const HKDF_INFO = 'reset-notifier/simulator-ledger/v1';

/** Thrown at start when the file cannot be read back (another key, tampered, malformed). */
export class LedgerFileError extends Error {
  readonly code = 'simulator_ledger_unreadable';
}

/** The simulator's ledger file of messages of type `T`. */
export interface LedgerFile<T = StoredMessage> {
  /** Every message the file holds, in the order first written (the last line of an id wins). */
  load(): T[];
  /** Writes the message's current state (one line). */
  append(message: T): void;
  /** Empties the file (`POST /_sim/reset`). */
  clear(): void;
}

/** How one kind of message is written: its id (bound to the seal) and the fields sealed. */
export interface LedgerFormat<T> {
  readonly id: (message: T) => string;
  /** Fields written only sealed; a line stores them blank (`''`) in clear. */
  readonly sealed: readonly (keyof T & string)[];
}

/** The Twilio simulator's messages: the number and the body are sealed. */
const TWILIO_FORMAT: LedgerFormat<StoredMessage> = { id: (m) => m.sid, sealed: ['to', 'body'] };

/**
 * Opens (without reading) the Twilio simulator's ledger at `file`. `keyMaterial` is the local
 * stack's data key; when absent, a key file next to the ledger is used, created on first use.
 */
export function openLedgerFile(file: string, keyMaterial?: Uint8Array): LedgerFile {
  return openSealedLedger(file, TWILIO_FORMAT, keyMaterial);
}

/** {@link openLedgerFile} for any message shape. */
export function openSealedLedger<T>(
  file: string,
  format: LedgerFormat<T>,
  keyMaterial?: Uint8Array,
): LedgerFile<T> {
  const key = deriveKey(keyMaterial ?? keyFileMaterial(`${file}.key`));
  return {
    load: () => load(file, key, format),
    append(message) {
      const record = { ...message } as Record<string, unknown>;
      const secret: Record<string, unknown> = {};
      for (const field of format.sealed) {
        secret[field] = record[field];
        record[field] = '';
      }
      record.sealed = seal(key, format.id(message), secret);
      appendFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    },
    clear() {
      writeFileSync(file, '', { mode: 0o600 });
    },
  };
}

function deriveKey(material: Uint8Array): Buffer {
  if (material.byteLength < 32)
    throw new LedgerFileError('the ledger key material must be at least 32 bytes');
  return Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), HKDF_INFO, 32));
}

function keyFileMaterial(keyFile: string): Uint8Array {
  if (existsSync(keyFile)) return Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'hex');
  const fresh = randomBytes(32);
  writeFileSync(keyFile, fresh.toString('hex'), { mode: 0o600, flag: 'wx' });
  return fresh;
}

function seal(key: Buffer, sid: string, fields: Record<string, unknown>): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(sid, 'utf8'));
  const plaintext = Buffer.from(JSON.stringify(fields), 'utf8');
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `${FORMAT}.${iv.toString('base64url')}.${body.toString('base64url')}`;
}

function unseal(key: Buffer, sid: string, sealed: string): Record<string, unknown> {
  const [format, ivText, bodyText] = sealed.split('.');
  if (format !== FORMAT || !ivText || !bodyText)
    throw new LedgerFileError(`message ${sid}: not an aes1 value`);
  const iv = Buffer.from(ivText, 'base64url');
  const body = Buffer.from(bodyText, 'base64url');
  if (iv.byteLength !== IV_BYTES || body.byteLength < TAG_BYTES)
    throw new LedgerFileError(`message ${sid}: malformed sealed value`);
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(sid, 'utf8'));
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  let plaintext: Buffer;
  try {
    plaintext = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]);
  } catch (error) {
    throw new LedgerFileError(`message ${sid}: sealed with another key, or altered`, { cause: error });
  }
  return JSON.parse(plaintext.toString('utf8')) as Record<string, unknown>;
}

function load<T>(file: string, key: Buffer, format: LedgerFormat<T>): T[] {
  if (!existsSync(file)) return [];
  // A Map keeps the order of first insertion: acceptance order.
  const byId = new Map<string, T>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const { sealed, ...stored } = JSON.parse(line) as Record<string, unknown>;
    const id = format.id(stored as T);
    // A line of an older simulator (no `sealed`) kept neither number nor body: it reloads blank.
    const fields = typeof sealed === 'string' ? unseal(key, id, sealed) : {};
    const secret = Object.fromEntries(format.sealed.map((field) => [field, String(fields[field] ?? '')]));
    byId.set(id, { ...stored, ...secret } as T);
  }
  return [...byId.values()];
}
