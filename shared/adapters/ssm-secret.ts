import { GetParameterError } from '@aws-lambda-powertools/parameters';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { InvalidConfigurationError } from '../domain/errors.js';

/** Default time a loaded secret is reused before SSM is asked again, in seconds. */
const DEFAULT_SECRET_MAX_AGE_SECONDS = 15 * 60;

/** Options of {@link createSsmSecretLoader}. */
export interface SsmSecretLoaderOptions<T = Uint8Array> {
  /** The SDK client Powertools' `SSMProvider` sends with (injected: region, endpoint, test fakes). */
  readonly client: SSMClient;
  /** Name of a SecureString parameter, e.g. `/reset-notifier/fingerprint-key`. */
  readonly name: string;
  /** How long a loaded value is reused (Powertools' `maxAge`, wall-clock seconds). Default 15 minutes. */
  readonly maxAgeSeconds?: number;
  /** Turns the value's text into what callers get (`label` = the parameter name); default {@link decodeSecret}. */
  readonly decode?: (text: string, label: string) => T;
}

/**
 * Loads a secret (the fingerprint key in AWS) from an SSM SecureString parameter with Powertools'
 * `SSMProvider`: one `GetParameter` (with decryption) per `maxAgeSeconds` and container, concurrent
 * callers share it. When a refresh fails and an earlier value exists, the earlier value is returned:
 * the key changes rarely, and admission should not fail because SSM had a bad second. A failure
 * surfaces as the SDK's error (not Powertools' wrapper). The value is decoded by {@link decodeSecret}.
 */
export function createSsmSecretLoader(options: SsmSecretLoaderOptions): () => Promise<Uint8Array>;
export function createSsmSecretLoader<T>(
  options: SsmSecretLoaderOptions<T> & { readonly decode: (text: string, label: string) => T },
): () => Promise<T>;
export function createSsmSecretLoader<T>(options: SsmSecretLoaderOptions<T>): () => Promise<T | Uint8Array> {
  const { name } = options;
  const decode = options.decode ?? decodeSecret;
  const maxAge = options.maxAgeSeconds ?? DEFAULT_SECRET_MAX_AGE_SECONDS;
  const ssm = new SSMProvider({ awsSdkV3Client: options.client });
  let last: { readonly text: string; readonly value: T | Uint8Array } | undefined;
  let pending: Promise<T | Uint8Array> | undefined;

  async function load(): Promise<T | Uint8Array> {
    const text = await ssm.get(name, { decrypt: true, maxAge }).catch((error: unknown) => {
      throw sdkErrorOf(error);
    });
    if (text === undefined || text === '')
      throw new InvalidConfigurationError(`SSM parameter ${name} has no value`);
    // Powertools caches the text; it is decoded once per value read.
    if (last?.text !== text) last = { text, value: decode(text, name) };
    return last.value;
  }

  return async () => {
    pending ??= load().finally(() => {
      pending = undefined;
    });
    try {
      return await pending;
    } catch (error) {
      if (last !== undefined && !(error instanceof InvalidConfigurationError)) return last.value;
      throw error;
    }
  };
}

/** The SDK's error inside Powertools' `GetParameterError` (its name says what AWS refused). */
export function sdkErrorOf(error: unknown): unknown {
  return error instanceof GetParameterError && error.cause !== undefined ? error.cause : error;
}

/**
 * Decodes a secret written as text: `hex:<hex>`, `base64:<base64>`, or bare (hex when it is an
 * even-length string of hex digits, base64 otherwise). Whitespace around the value is ignored.
 * `label` names the source in error messages; the value itself is never included.
 */
export function decodeSecret(text: string, label = 'secret'): Uint8Array {
  const trimmed = text.trim();
  const [explicit, rest] = trimmed.startsWith('hex:')
    ? ['hex', trimmed.slice(4)]
    : trimmed.startsWith('base64:')
      ? ['base64', trimmed.slice(7)]
      : [undefined, trimmed];
  const isHex = /^(?:[0-9a-fA-F]{2})+$/.test(rest);
  const encoding = explicit ?? (isHex ? 'hex' : 'base64');
  if (encoding === 'hex' && !isHex) throw new InvalidConfigurationError(`${label} is not valid hex`);
  if (encoding === 'base64' && !/^[A-Za-z0-9+/_-]+={0,2}$/.test(rest)) {
    throw new InvalidConfigurationError(`${label} is neither hex nor base64`);
  }
  const bytes = Buffer.from(rest, encoding === 'hex' ? 'hex' : 'base64');
  if (bytes.byteLength === 0) throw new InvalidConfigurationError(`${label} is empty`);
  return new Uint8Array(bytes);
}
