import { randomBytes } from 'node:crypto';
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

  it('parses 32-byte keys in hex or base64 only', () => {
    expect(parseKey('ab'.repeat(32))).toHaveLength(32);
    expect(parseKey(randomBytes(32).toString('base64'))).toHaveLength(32);
    expect(() => parseKey('abcd')).toThrow(SealedValueError);
  });
});
