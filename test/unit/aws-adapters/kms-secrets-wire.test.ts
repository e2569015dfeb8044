/** The KMS cipher and the Secrets Manager loader through the real SDK clients, over HTTP, against wire-level fakes. */
import { KMSClient } from '@aws-sdk/client-kms';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterEach, describe, expect, it } from 'vitest';
import { createKmsCipher, KMS_ENCRYPTION_CONTEXT } from '../../../shared/adapters/kms-cipher.js';
import { readSecretString } from '../../../shared/adapters/secrets-manager-secret.js';
import { startKmsFake, startSecretsManagerFake } from '../../support/aws-json-fakes.js';
import { localClient } from '../../support/aws-wire.js';
import { ManualClock } from '../../support/manual-clock.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('KMS cipher over the wire (real KMSClient)', () => {
  it('seals and opens with one GenerateDataKey for several values, bound to the encryption context', async () => {
    // Prepare
    const kms = await startKmsFake('alias/reset-notifier');
    stops.push(kms.stop);
    const cipher = createKmsCipher({
      client: new KMSClient(localClient(kms.url)),
      keyId: 'alias/reset-notifier',
      clock: new ManualClock(),
    });
    const context = { idempotency_key: 'reset-1' };

    // Act
    const sealed = await Promise.all(
      ['+14155550123', '483920', 'https://id.example/reset?t=1'].map((text) =>
        cipher.encrypt(new TextEncoder().encode(text), context),
      ),
    );
    const opened = await Promise.all(sealed.map((value) => cipher.decrypt(value, context)));

    // Assess
    expect(opened.map((bytes) => new TextDecoder().decode(bytes))).toEqual([
      '+14155550123',
      '483920',
      'https://id.example/reset?t=1',
    ]);
    expect(kms.calls.filter((c) => c.operation === 'GenerateDataKey')).toHaveLength(1);
    expect(kms.calls[0]?.input).toMatchObject({
      KeySpec: 'AES_256',
      EncryptionContext: KMS_ENCRYPTION_CONTEXT,
    });
    for (const value of sealed) expect(value).not.toContain('483920');
  });

  it('opens a value sealed by another container (a fresh cipher calls Decrypt), and refuses a moved value', async () => {
    const kms = await startKmsFake();
    stops.push(kms.stop);
    const make = () =>
      createKmsCipher({
        client: new KMSClient(localClient(kms.url)),
        keyId: 'alias/reset-notifier',
        clock: new ManualClock(),
      });
    const sealed = await make().encrypt(new TextEncoder().encode('483920'), { idempotency_key: 'reset-1' });

    const reader = make();
    const opened = await reader.decrypt(sealed, { idempotency_key: 'reset-1' });

    expect(new TextDecoder().decode(opened)).toBe('483920');
    expect(kms.calls.map((c) => c.operation)).toEqual(['GenerateDataKey', 'Decrypt']);
    await expect(reader.decrypt(sealed, { idempotency_key: 'reset-2' })).rejects.toThrow();
  });

  it('surfaces a KMS refusal (unknown key) as an error, never a value', async () => {
    const kms = await startKmsFake('alias/other');
    stops.push(kms.stop);
    const cipher = createKmsCipher({
      client: new KMSClient({ ...localClient(kms.url), maxAttempts: 1 }),
      keyId: 'alias/reset-notifier',
      clock: new ManualClock(),
    });
    await expect(cipher.encrypt(new Uint8Array([1]), {})).rejects.toMatchObject({
      name: 'NotFoundException',
    });
  });
});

describe('Secrets Manager loader over the wire (real SecretsManagerClient)', () => {
  it('reads a string secret', async () => {
    const sm = await startSecretsManagerFake({ 'reset-notifier/twilio-auth-token': 'tok_live_abc' });
    stops.push(sm.stop);
    const value = await readSecretString(
      new SecretsManagerClient(localClient(sm.url)),
      'reset-notifier/twilio-auth-token',
    );
    expect(value).toBe('tok_live_abc');
    expect(sm.calls).toEqual([
      { operation: 'GetSecretValue', input: { SecretId: 'reset-notifier/twilio-auth-token' } },
    ]);
  });

  it('fails on a missing secret and on a binary-only secret, without echoing any value', async () => {
    const sm = await startSecretsManagerFake({ binary: Buffer.from('tok_binary') });
    stops.push(sm.stop);
    const client = new SecretsManagerClient({ ...localClient(sm.url), maxAttempts: 1 });
    await expect(readSecretString(client, 'missing')).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    const binary = readSecretString(client, 'binary');
    await expect(binary).rejects.toThrow('has no string value');
    await expect(binary).rejects.not.toThrow('tok_binary');
  });
});
