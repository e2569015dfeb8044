import { GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { CipherUnavailableError, createKmsCipher } from '../../../shared/adapters/kms-cipher.js';
import { transientFaultOf } from '../../../shared/ports/faults.js';
import { ManualClock } from '../../support/manual-clock.js';

describe('KMS cipher: throttling while sealing is retry-safe (HTTP 503), other errors are not', () => {
  const kms = mockClient(KMSClient);
  beforeEach(() => {
    kms.reset();
  });
  const seal = () =>
    createKmsCipher({
      client: new KMSClient({ region: 'eu-west-1', maxAttempts: 1 }),
      keyId: 'k',
      clock: new ManualClock(),
    })
      .encrypt(new Uint8Array([1]), { idempotency_key: 'k1' })
      .catch((error: unknown) => error);

  it('maps ThrottlingException to CipherUnavailableError', async () => {
    // Prepare
    kms
      .on(GenerateDataKeyCommand)
      .rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: {} }));

    // Act
    const failure = await seal();

    // Assess
    expect(failure).toBeInstanceOf(CipherUnavailableError);
    expect(transientFaultOf(failure)?.code).toBe('cipher_unavailable');
  });

  it('keeps an access error a plain fault (a misconfiguration: generic 500)', async () => {
    // Prepare
    kms.on(GenerateDataKeyCommand).rejects(
      Object.assign(new Error('not authorized'), {
        name: 'AccessDeniedException',
        $metadata: { httpStatusCode: 400 },
      }),
    );

    // Act
    const failure = await seal();

    // Assess
    expect(transientFaultOf(failure)).toBeUndefined();
  });
});
