import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { sdkErrorOf } from './ssm-secret.js';

/**
 * Reads a Secrets Manager secret's string (a provider auth token, the fingerprint key) with
 * Powertools' `SecretsProvider` over the given client. It reads on every call; the callers read
 * once per container. The value is kept in memory only and never logged; a failure surfaces as the
 * SDK's error, a binary-only secret as an error that does not echo it.
 */
export async function readSecretString(client: SecretsManagerClient, secretId: string): Promise<string> {
  const secrets = new SecretsProvider({ awsSdkV3Client: client });
  // maxAge 0: nothing is cached here (the provider lives for this one read).
  const value = await secrets.get(secretId, { maxAge: 0 }).catch((error: unknown) => {
    throw sdkErrorOf(error);
  });
  if (typeof value !== 'string' || value === '') throw new Error(`secret ${secretId} has no string value`);
  return value;
}
