import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { readSecretString } from '../adapters/secrets-manager-secret.js';
import type { ServiceConfig } from '../config.js';
import { SETTINGS } from '../settings.js';

/**
 * Auth tokens anyone can read in this repository: the simulator's, the settings table's local
 * default. The receipts handler refuses to verify with one outside the local stack.
 */
export const WELL_KNOWN_TWILIO_AUTH_TOKENS: readonly string[] = [String(SETTINGS.twilioAuthToken.local)];

/**
 * The Twilio auth token that keys status-callback signatures: from the Twilio secret in AWS (read on
 * first use, once per container; a failed read is retried by the next request), inline locally.
 */
export function twilioAuthTokenFor(config: ServiceConfig): () => Promise<string> {
  const arn = config.providerAuthTokenSecretArn;
  if (arn === undefined) return async () => config.providerAuthToken;
  let token: Promise<string> | undefined;
  return () => {
    token ??= readSecretString(new SecretsManagerClient({ region: config.region }), arn).catch(
      (error: unknown) => {
        token = undefined;
        throw error;
      },
    );
    return token;
  };
}
