import 'aws-sdk-client-mock-vitest/extend';
import { createCipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createKmsCipher,
  KMS_ENCRYPTION_CONTEXT,
  SealedValueError,
} from '../../../shared/adapters/kms-cipher.js';
import { ManualClock } from '../../support/manual-clock.js';

const KEY_ID = 'arn:aws:kms:eu-west-1:111111111111:key/00000000-0000-0000-0000-000000000000';
const CONTEXT = { idempotency_key: 'reset-1', purpose: 'sms-payload' };
const text = (value: string) => new TextEncoder().encode(value);

/**
 * A fake KMS: GenerateDataKey returns a fresh random key and an "encrypted" blob that is the key
 * XOR-ed with a constant plus a marker, Decrypt reverses it (and checks the encryption context).
 */
function fakeKms(kms: AwsClientStub<KMSClient>) {
  const wrap = (key: Uint8Array) =>
    Buffer.concat([Buffer.from('edk:'), Buffer.from(key.map((b) => b ^ 0x5a))]);
  kms.on(GenerateDataKeyCommand).callsFake(() => {
    const key = randomBytes(32);
    return { Plaintext: new Uint8Array(key), CiphertextBlob: new Uint8Array(wrap(key)), KeyId: KEY_ID };
  });
  kms
    .on(DecryptCommand)
    .callsFake((input: { CiphertextBlob: Uint8Array; EncryptionContext?: Record<string, string> }) => {
      expect(input.EncryptionContext).toEqual(KMS_ENCRYPTION_CONTEXT);
      const blob = Buffer.from(input.CiphertextBlob);
      if (!blob.subarray(0, 4).equals(Buffer.from('edk:')))
        throw Object.assign(new Error('bad blob'), { name: 'InvalidCiphertextException' });
      return { Plaintext: new Uint8Array(blob.subarray(4).map((b) => b ^ 0x5a)), KeyId: KEY_ID };
    });
}

describe('KMS envelope cipher', () => {
  const kms = mockClient(KMSClient);
  let clock: ManualClock;
  beforeEach(() => {
    kms.reset();
    fakeKms(kms);
    clock = new ManualClock();
  });
  const cipher = (options: { maxDataKeyAgeMs?: number; maxDataKeyUses?: number } = {}) =>
    createKmsCipher({ client: new KMSClient({ region: 'eu-west-1' }), keyId: KEY_ID, clock, ...options });

  it('round-trips a payload and documents its format: kms1.<edk>.<iv>.<ct+tag>', async () => {
    // Prepare
    const subject = cipher();

    // Act
    const sealed = await subject.encrypt(text('{"phone":"+14155550123"}'), CONTEXT);
    const opened = await subject.decrypt(sealed, CONTEXT);

    // Assess
    expect(new TextDecoder().decode(opened)).toBe('{"phone":"+14155550123"}');
    const parts = sealed.split('.');
    expect(parts).toHaveLength(4);
    expect(parts[0]).toBe('kms1');
    expect(Buffer.from(parts[2] as string, 'base64url')).toHaveLength(12);
    expect(sealed).not.toContain('4155550123');
  });

  it('asks KMS for an AES-256 data key under the configured key, bound to the fixed encryption context', async () => {
    await cipher().encrypt(text('x'), CONTEXT);
    expect(kms).toHaveReceivedCommandWith(GenerateDataKeyCommand, {
      KeyId: KEY_ID,
      KeySpec: 'AES_256',
      EncryptionContext: { ...KMS_ENCRYPTION_CONTEXT },
    });
  });

  it('reuses one data key per container (admission pays no KMS round trip), then rotates by count', async () => {
    // Prepare
    const subject = cipher({ maxDataKeyUses: 3 });

    // Act
    const sealed = [];
    for (let i = 0; i < 4; i++) sealed.push(await subject.encrypt(text(`payload ${i}`), CONTEXT));

    // Assess
    expect(kms).toHaveReceivedCommandTimes(GenerateDataKeyCommand, 2);
    const edks = sealed.map((s) => s.split('.')[1]);
    expect(new Set(edks.slice(0, 3)).size).toBe(1);
    expect(edks[3]).not.toBe(edks[0]);
  });

  it('rotates the data key after its maximum age', async () => {
    const subject = cipher({ maxDataKeyAgeMs: 60_000 });
    await subject.encrypt(text('a'), CONTEXT);
    clock.advance(59_999);
    await subject.encrypt(text('b'), CONTEXT);
    expect(kms).toHaveReceivedCommandTimes(GenerateDataKeyCommand, 1);
    clock.advance(1);
    await subject.encrypt(text('c'), CONTEXT);
    expect(kms).toHaveReceivedCommandTimes(GenerateDataKeyCommand, 2);
  });

  it('shares one GenerateDataKey call among concurrent encryptions', async () => {
    const subject = cipher();
    await Promise.all(Array.from({ length: 20 }, (_, i) => subject.encrypt(text(`p${i}`), CONTEXT)));
    expect(kms).toHaveReceivedCommandTimes(GenerateDataKeyCommand, 1);
  });

  it('decrypts with kms:Decrypt on the stored encrypted data key, cached by that ciphertext', async () => {
    // Prepare: sealed by another container (the api), opened here (the sender).
    const sealedA = await cipher().encrypt(text('a'), CONTEXT);
    const sealedB = await cipher().encrypt(text('b'), CONTEXT);
    const opener = cipher();

    // Act
    await opener.decrypt(sealedA, CONTEXT);
    await opener.decrypt(sealedA, CONTEXT);
    await opener.decrypt(sealedB, CONTEXT);

    // Assess
    expect(kms).toHaveReceivedCommandTimes(DecryptCommand, 2);
    expect(kms).toHaveReceivedCommandWith(DecryptCommand, {
      KeyId: KEY_ID,
      CiphertextBlob: Buffer.from(sealedA.split('.')[1] as string, 'base64url'),
      EncryptionContext: { ...KMS_ENCRYPTION_CONTEXT },
    });
  });

  it('refuses a payload moved to another command (the context is authenticated)', async () => {
    const subject = cipher();
    const sealed = await subject.encrypt(text('secret'), CONTEXT);
    await expect(subject.decrypt(sealed, { ...CONTEXT, idempotency_key: 'reset-2' })).rejects.toBeInstanceOf(
      SealedValueError,
    );
  });

  it('refuses a tampered ciphertext, and anything that is not a kms1 value', async () => {
    // Prepare
    const subject = cipher();
    const sealed = await subject.encrypt(text('secret'), CONTEXT);
    const [prefix, edk, iv, body] = sealed.split('.') as [string, string, string, string];
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] = (flipped[0] as number) ^ 1;

    // Act / Assess
    await expect(
      subject.decrypt([prefix, edk, iv, flipped.toString('base64url')].join('.'), CONTEXT),
    ).rejects.toThrow(SealedValueError);
    await expect(subject.decrypt('local1.abc.def', CONTEXT)).rejects.toThrow(/not a kms1/);
    await expect(subject.decrypt('kms1.a.b', CONTEXT)).rejects.toThrow(SealedValueError);
  });

  it('binds the fixed KMS context into the AAD too (a value sealed without it does not open)', async () => {
    // Prepare: a value sealed with the same data key but only the caller context as AAD.
    const subject = cipher();
    const sealed = await subject.encrypt(text('x'), CONTEXT);
    const edk = sealed.split('.')[1] as string;
    const key = Buffer.from(edk, 'base64url')
      .subarray(4)
      .map((b) => b ^ 0x5a);
    const iv = randomBytes(12);
    const raw = createCipheriv('aes-256-gcm', key, iv);
    raw.setAAD(Buffer.from(JSON.stringify(CONTEXT)));
    const body = Buffer.concat([raw.update('x'), raw.final(), raw.getAuthTag()]);

    // Act / Assess
    await expect(
      subject.decrypt(['kms1', edk, iv.toString('base64url'), body.toString('base64url')].join('.'), CONTEXT),
    ).rejects.toThrow(SealedValueError);
  });

  it('lets KMS errors through (the caller decides), without caching a failure', async () => {
    // Prepare
    kms
      .on(GenerateDataKeyCommand)
      .rejectsOnce(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    const subject = cipher();

    // Act / Assess
    await expect(subject.encrypt(text('x'), CONTEXT)).rejects.toThrow('throttled');
    kms.on(GenerateDataKeyCommand).callsFake(() => {
      const key = randomBytes(32);
      return {
        Plaintext: new Uint8Array(key),
        CiphertextBlob: new Uint8Array(Buffer.concat([Buffer.from('edk:'), key.map((b) => b ^ 0x5a)])),
      };
    });
    await expect(subject.encrypt(text('x'), CONTEXT)).resolves.toMatch(/^kms1\./);
  });
});
