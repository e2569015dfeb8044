import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/**
 * Reads a Secrets Manager secret once per container (a provider auth token). The value is kept
 * in memory only and never logged.
 */
export async function readSecretString(client: SecretsManagerClient, secretId: string): Promise<string> {
  const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  if (!out.SecretString) throw new Error(`secret ${secretId} has no string value`);
  return out.SecretString;
}
