import 'aws-sdk-client-mock-vitest/extend';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { fingerprinterFor } from '../../../shared/composition/secrets.js';
import { loadConfig } from '../../../shared/config.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import { ManualClock } from '../../support/manual-clock.js';

const ARN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:fp-AbCdEf';
/** What the stack's generated secret looks like: 64 characters of [A-Za-z0-9]. */
const GENERATED = 'Qm9vdHN0cmFwS2V5Rm9yVGVzdHNPbmx5MDEyMzQ1Njc4OUFCQ0RFRkdISUpLTE1O';

describe('fingerprint key from Secrets Manager (FINGERPRINT_KEY_SECRET_ARN)', () => {
  const secrets = mockClient(SecretsManagerClient);
  beforeEach(() => {
    secrets.reset();
  });

  it('reads the generated secret once and decodes it as base64 (48 bytes)', async () => {
    // Prepare
    secrets.on(GetSecretValueCommand).resolves({ SecretString: GENERATED });
    const config = loadConfig({ FINGERPRINT_KEY_SECRET_ARN: ARN, AWS_REGION: 'eu-west-1' });

    // Act
    const fingerprinter = await fingerprinterFor(config, new ManualClock());

    // Assess
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
    expect(secrets).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: ARN });
    const expected = createFingerprinter(new Uint8Array(Buffer.from(GENERATED, 'base64')));
    expect(fingerprinter.destination('+14155550123')).toBe(expected.destination('+14155550123'));
    expect(Buffer.from(GENERATED, 'base64').byteLength).toBe(48);
  });

  it('fails at start-up, naming the source but not the value, when the secret is too short', async () => {
    // Prepare
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'abcd' });
    const config = loadConfig({ FINGERPRINT_KEY_SECRET_ARN: ARN });

    // Act
    const failure = await fingerprinterFor(config, new ManualClock()).catch((error: unknown) => error);

    // Assess
    expect(String(failure)).toMatch(/at least 32 bytes/);
    expect(String(failure)).not.toContain('abcd');
  });
});
