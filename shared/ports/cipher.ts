/** Encrypts the sensitive fields of a command. Locally AES-256-GCM; in AWS a KMS envelope. */
export interface Cipher {
  /** Returns an opaque, self-describing string (algorithm, key reference, iv, ciphertext). */
  encrypt(plaintext: Uint8Array, context: Readonly<Record<string, string>>): Promise<string>;
  /** Inverse of {@link encrypt}; the same context must be passed (it is authenticated). */
  decrypt(sealed: string, context: Readonly<Record<string, string>>): Promise<Uint8Array>;
}
