/**
 * The simulator's messages on disk (`--data-dir`): kept across restarts as a real provider keeps
 * them, bodies and numbers included, since Twilio's API returns both and a restarted provider that
 * forgot them would look like Message Redaction (a blank body) to the service.
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

/** What is sealed: the fields a real provider keeps that must not be on disk in clear. */
interface SealedFields {
  readonly to: string;
  readonly body: string;
}

/** The simulator's ledger file. */
export interface LedgerFile {
  /** Every message the file holds, in acceptance order (the last line of a sid wins). */
  load(): StoredMessage[];
  /** Writes the message's current state (one line). */
  append(message: StoredMessage): void;
  /** Empties the file (`POST /_sim/reset`). */
  clear(): void;
}

/**
 * Opens (without reading) the ledger at `file`. `keyMaterial` is the local stack's data key; when
 * absent, a key file next to the ledger is used, created on first use.
 */
export function openLedgerFile(file: string, keyMaterial?: Uint8Array): LedgerFile {
  const key = deriveKey(keyMaterial ?? keyFileMaterial(`${file}.key`));
  return {
    load: () => load(file, key),
    append(message) {
      const { to, body, ...rest } = message;
      const sealed = seal(key, message.sid, { to, body });
      appendFileSync(file, `${JSON.stringify({ ...rest, to: '', body: '', sealed })}\n`, { mode: 0o600 });
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

function seal(key: Buffer, sid: string, fields: SealedFields): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(sid, 'utf8'));
  const plaintext = Buffer.from(JSON.stringify(fields), 'utf8');
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `${FORMAT}.${iv.toString('base64url')}.${body.toString('base64url')}`;
}

function unseal(key: Buffer, sid: string, sealed: string): SealedFields {
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
  const fields = JSON.parse(plaintext.toString('utf8')) as Partial<SealedFields>;
  return { to: String(fields.to ?? ''), body: String(fields.body ?? '') };
}

function load(file: string, key: Buffer): StoredMessage[] {
  if (!existsSync(file)) return [];
  const bySid = new Map<string, StoredMessage>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const { sealed, ...stored } = JSON.parse(line) as StoredMessage & { sealed?: string };
    // A line of an older simulator (no `sealed`) kept neither number nor body: it reloads blank.
    const fields = typeof sealed === 'string' ? unseal(key, stored.sid, sealed) : {};
    bySid.set(stored.sid, { ...stored, ...fields });
  }
  return [...bySid.values()].sort((a, b) => a.seq - b.seq);
}
