import 'aws-sdk-client-mock-vitest/extend';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
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

  it('reads a ring of versioned keys and fingerprints under FINGERPRINT_KEY_VERSION', async () => {
    // Prepare: key 1 is the generated one; key 2 was added by the rotation procedure.
    const second = Buffer.alloc(32, 2).toString('hex');
    secrets.on(GetSecretValueCommand).resolves({ SecretString: `1:${GENERATED},2:${second}` });
    const env = { FINGERPRINT_KEY_SECRET_ARN: ARN, AWS_REGION: 'eu-west-1' };

    // Act
    const step1 = await fingerprinterFor(loadConfig(env), new ManualClock());
    const step2 = await fingerprinterFor(
      loadConfig({ ...env, FINGERPRINT_KEY_VERSION: '2' }),
      new ManualClock(),
    );

    // Assess: unset, version 1 stays current (as the bare key before); every key counts.
    const one = createFingerprinter(new Uint8Array(Buffer.from(GENERATED, 'base64')));
    const two = createFingerprinter({ current: 2, keys: [{ version: 2, secret: Buffer.alloc(32, 2) }] });
    expect(step1.destination('+14155550123')).toBe(one.destination('+14155550123'));
    expect(step2.destination('+14155550123')).toBe(two.destination('+14155550123'));
    expect(step2.destinations('+14155550123')).toEqual([
      two.destination('+14155550123'),
      one.destination('+14155550123'),
    ]);
  });

  it('fails at start-up when FINGERPRINT_KEY_VERSION names a key the secret does not hold', async () => {
    // Prepare
    secrets.on(GetSecretValueCommand).resolves({ SecretString: GENERATED });
    const config = loadConfig({ FINGERPRINT_KEY_SECRET_ARN: ARN, FINGERPRINT_KEY_VERSION: '2' });

    // Act
    const failure = await fingerprinterFor(config, new ManualClock()).catch((error: unknown) => error);

    // Assess
    expect(String(failure)).toMatch(/version 2 is not among the keys \(1\)/);
    expect(String(failure)).not.toContain(GENERATED);
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

describe('fingerprint key inline (FINGERPRINT_KEY)', () => {
  it('reads a ring as the other sources do', async () => {
    // Prepare
    const [one, two] = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const config = loadConfig({
      FINGERPRINT_KEY: `1:${one.toString('hex')},2:${two.toString('base64')}`,
      FINGERPRINT_KEY_VERSION: '2',
    });

    // Act
    const fingerprinter = await fingerprinterFor(config, new ManualClock());

    // Assess
    expect(fingerprinter.version).toBe(2);
    expect(fingerprinter.destinations('+14155550123')).toEqual(
      createFingerprinter({
        current: 2,
        keys: [
          { version: 2, secret: two },
          { version: 1, secret: one },
        ],
      }).destinations('+14155550123'),
    );
  });
});

describe('fingerprint key from SSM (FINGERPRINT_KEY_PARAMETER)', () => {
  const ssm = mockClient(SSMClient);
  beforeEach(() => {
    ssm.reset();
  });

  it('reads a ring as the other sources do', async () => {
    // Prepare
    const [one, two] = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    ssm.on(GetParameterCommand).resolves({
      Parameter: { Value: `2:hex:${two.toString('hex')},1:${one.toString('hex')}` },
    });
    const config = loadConfig({ FINGERPRINT_KEY_PARAMETER: '/rn/fp', FINGERPRINT_KEY_VERSION: '2' });

    // Act
    const fingerprinter = await fingerprinterFor(config, new ManualClock());

    // Assess
    expect(ssm).toHaveReceivedCommandWith(GetParameterCommand, { Name: '/rn/fp', WithDecryption: true });
    expect(fingerprinter.destinations('+14155550123')).toEqual([
      createFingerprinter({ current: 2, keys: [{ version: 2, secret: two }] }).destination('+14155550123'),
      createFingerprinter(one).destination('+14155550123'),
    ]);
  });
});
