import { KMSClient } from '@aws-sdk/client-kms';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { createKmsCipher } from '../adapters/kms-cipher.js';
import { createLocalCipher, parseKey } from '../adapters/local-cipher.js';
import { readSecretString } from '../adapters/secrets-manager-secret.js';
import { createSsmSecretLoader, decodeSecret } from '../adapters/ssm-secret.js';
import type { ServiceConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import {
  createFingerprinter,
  type Fingerprinter,
  type FingerprintKey,
  parseFingerprintKeys,
} from '../domain/fingerprint.js';
import type { Cipher } from '../ports/cipher.js';
import { SETTINGS } from '../settings.js';

/**
 * The fingerprinter, with its key from Secrets Manager (AWS, the stack's generated secret), SSM
 * (AWS, a parameter the deployer gave) or the environment (local); read once, with Powertools'
 * providers over the SDK clients built here. Each source holds one key or a ring of versioned
 * keys (`<version>:<key>,...`), of which `FINGERPRINT_KEY_VERSION` is current
 * (docs/security.md#fingerprint-key-rotation). `_clock` is unused: Powertools' cache keeps
 * wall-clock time (the parameter stays for the callers' sake).
 */
export async function fingerprinterFor(
  config: ServiceConfig,
  _clock: Clock,
  secrets: () => SecretsManagerClient = () => new SecretsManagerClient({ region: config.region }),
): Promise<Fingerprinter> {
  const ring = (keys: readonly FingerprintKey[]) =>
    createFingerprinter({ current: config.fingerprintKeyVersion ?? 1, keys });
  if (config.fingerprintKeySecretArn) {
    const text = await readSecretString(secrets(), config.fingerprintKeySecretArn);
    const label = 'the fingerprint key secret';
    return ring(parseFingerprintKeys(text, (key) => decodeSecret(key, label), label));
  }
  if (config.fingerprintKeyParameter) {
    const load = createSsmSecretLoader({
      client: new SSMClient({ region: config.region }),
      name: config.fingerprintKeyParameter,
      decode: (text, name) => parseFingerprintKeys(text, (key) => decodeSecret(key, name), name),
    });
    return ring(await load());
  }
  if (!config.fingerprintKey)
    throw new Error(
      `${SETTINGS.fingerprintKey.env}, ${SETTINGS.fingerprintKeyParameter.env} or ${SETTINGS.fingerprintKeySecret.env} must be set`,
    );
  return inlineFingerprinter(config.fingerprintKey, config.fingerprintKeyVersion);
}

/**
 * The fingerprinter of an inline key value (`FINGERPRINT_KEY`: one key of 32 bytes, hex or base64,
 * or a ring `<version>:<key>,...`) with `version` current: the service locally, and the local
 * simulators, which fingerprint the numbers in their own logs as the service does.
 */
export function inlineFingerprinter(text: string, version = 1): Fingerprinter {
  const keys = parseFingerprintKeys(text, parseKey, SETTINGS.fingerprintKey.env);
  return createFingerprinter({ current: version, keys });
}

/** The cipher for sensitive fields: KMS envelope in AWS, a local AES key otherwise. */
export function cipherFor(config: ServiceConfig, clock: Clock): Cipher {
  if (config.cipher === 'kms') {
    if (!config.kmsKeyId) throw new Error(`${SETTINGS.cipher.env}=kms needs ${SETTINGS.kmsKey.env}`);
    return createKmsCipher({
      client: new KMSClient({ region: config.region }),
      keyId: config.kmsKeyId,
      clock,
    });
  }
  if (!config.localDataKey)
    throw new Error(
      `${SETTINGS.cipher.env}=local needs ${SETTINGS.localDataKey.env} (32 bytes, hex or base64)`,
    );
  return createLocalCipher(parseKey(config.localDataKey));
}
