import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLocalCipher, parseKey, SealedValueError } from '../../../shared/adapters/local-cipher.js';

const context = { idempotency_key: 'k1', purpose: 'sms-payload' };

describe('local AES-256-GCM cipher', () => {
  it('round-trips and never shows the plaintext', async () => {
    const cipher = createLocalCipher(randomBytes(32));
    const sealed = await cipher.encrypt(Buffer.from('+14155550123 483920'), context);
    expect(sealed).toMatch(/^aes1\./);
    expect(sealed).not.toContain('4155550123');
    expect(Buffer.from(await cipher.decrypt(sealed, context)).toString()).toBe('+14155550123 483920');
  });

  it('refuses another context, another key and a tampered value', async () => {
    const key = randomBytes(32);
    const cipher = createLocalCipher(key);
    const sealed = await cipher.encrypt(Buffer.from('secret'), context);
    await expect(cipher.decrypt(sealed, { ...context, idempotency_key: 'k2' })).rejects.toBeInstanceOf(
      SealedValueError,
    );
    await expect(createLocalCipher(randomBytes(32)).decrypt(sealed, context)).rejects.toBeInstanceOf(
      SealedValueError,
    );
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}A`;
    await expect(cipher.decrypt(tampered, context)).rejects.toBeInstanceOf(SealedValueError);
  });

  it('refuses a short tag or an IV that is not 12 bytes, even when they would authenticate', async () => {
    // Prepare: values sealed correctly but with a 4-byte tag, and with a 16-byte IV.
    const key = randomBytes(32);
    const cipher = createLocalCipher(key);
    const aad = Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))));
    const sealWith = (ivBytes: number, tagBytes: number) => {
      const iv = randomBytes(ivBytes);
      const gcm = createCipheriv('aes-256-gcm', key, iv, { authTagLength: tagBytes });
      gcm.setAAD(aad);
      const body = Buffer.concat([gcm.update('secret'), gcm.final(), gcm.getAuthTag()]);
      return `aes1.${iv.toString('base64url')}.${body.toString('base64url')}`;
    };
    // Act / Assess
    await expect(cipher.decrypt(sealWith(12, 16), context)).resolves.toBeDefined();
    await expect(cipher.decrypt(sealWith(12, 4), context)).rejects.toBeInstanceOf(SealedValueError);
    await expect(cipher.decrypt(sealWith(16, 16), context)).rejects.toThrow(/12-byte IV/);
    await expect(cipher.decrypt('aes1.AAAA.AAAA', context)).rejects.toBeInstanceOf(SealedValueError);
  });

  it('parses 32-byte keys in hex or base64 only', () => {
    expect(parseKey('ab'.repeat(32))).toHaveLength(32);
    expect(parseKey(randomBytes(32).toString('base64'))).toHaveLength(32);
    expect(() => parseKey('abcd')).toThrow(SealedValueError);
  });
});
