import { GetParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import type { Clock } from '../domain/clock.js';
import { InvalidConfigurationError } from '../domain/errors.js';

/** Default time a loaded secret is reused before SSM is asked again. */
export const DEFAULT_SECRET_TTL_MS = 15 * 60_000;

/** Options of {@link createSsmSecretLoader}. */
export interface SsmSecretLoaderOptions {
  readonly client: SSMClient;
  /** Name of a SecureString parameter, e.g. `/reset-notifier/fingerprint-key`. */
  readonly name: string;
  readonly clock: Clock;
  /** How long a loaded value is reused. Default 15 minutes. */
  readonly ttlMs?: number;
}

/**
 * Loads a secret (the fingerprint key in AWS) from an SSM SecureString parameter, cached per
 * container: one `GetParameter` (with decryption) per `ttlMs`, concurrent callers share it. When a
 * refresh fails and an earlier value exists, the earlier value is returned: the key changes rarely,
 * and admission should not fail because SSM had a bad second. The value is decoded by
 * {@link decodeSecret}.
 */
export function createSsmSecretLoader(options: SsmSecretLoaderOptions): () => Promise<Uint8Array> {
  const { client, name, clock } = options;
  const ttlMs = options.ttlMs ?? DEFAULT_SECRET_TTL_MS;
  let cached: { readonly value: Uint8Array; readonly loadedAt: number } | undefined;
  let pending: Promise<Uint8Array> | undefined;

  async function load(): Promise<Uint8Array> {
    const out = await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
    const text = out.Parameter?.Value;
    if (text === undefined || text === '')
      throw new InvalidConfigurationError(`SSM parameter ${name} has no value`);
    const value = decodeSecret(text, name);
    cached = { value, loadedAt: clock.now() };
    return value;
  }

  return async () => {
    if (cached !== undefined && clock.now() - cached.loadedAt < ttlMs) return cached.value;
    pending ??= load().finally(() => {
      pending = undefined;
    });
    try {
      return await pending;
    } catch (error) {
      if (cached !== undefined && !(error instanceof InvalidConfigurationError)) return cached.value;
      throw error;
    }
  };
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
