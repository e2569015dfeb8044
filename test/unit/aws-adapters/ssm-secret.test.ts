import 'aws-sdk-client-mock-vitest/extend';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSsmSecretLoader, decodeSecret } from '../../../shared/adapters/ssm-secret.js';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';

const NAME = '/reset-notifier/fingerprint-key';
const HEX_KEY = 'ab'.repeat(32);

describe('SSM secret loader', () => {
  const ssm = mockClient(SSMClient);
  beforeEach(() => {
    ssm.reset();
    // Powertools' cache reads the wall clock.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2026, 11, 1) });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const loader = (maxAgeSeconds?: number) =>
    createSsmSecretLoader({
      client: new SSMClient({ region: 'eu-west-1' }),
      name: NAME,
      ...(maxAgeSeconds === undefined ? {} : { maxAgeSeconds }),
    });

  it('reads the SecureString with decryption and decodes it', async () => {
    // Prepare
    ssm.on(GetParameterCommand).resolves({ Parameter: { Name: NAME, Value: HEX_KEY } });

    // Act
    const value = await loader()();

    // Assess
    expect(Buffer.from(value).toString('hex')).toBe(HEX_KEY);
    expect(ssm).toHaveReceivedCommandWith(GetParameterCommand, { Name: NAME, WithDecryption: true });
  });

  it('caches per container for the TTL, then reads again', async () => {
    // Prepare
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: HEX_KEY } });
    const load = loader(60);

    // Act
    await Promise.all([load(), load(), load()]);
    vi.advanceTimersByTime(60_000);
    await load();
    const callsBeforeExpiry = ssm.commandCalls(GetParameterCommand).length;
    vi.advanceTimersByTime(1);
    await load();

    // Assess
    expect(callsBeforeExpiry).toBe(1);
    expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 2);
  });

  it('keeps serving the last value when a refresh fails, and fails when there is none', async () => {
    // Prepare
    ssm
      .on(GetParameterCommand)
      .resolvesOnce({ Parameter: { Value: HEX_KEY } })
      .rejects(new Error('ssm down'));
    const load = loader(1);

    // Act
    const first = await load();
    vi.advanceTimersByTime(5_000);
    const stale = await load();

    // Assess: the second read was tried; a loader without a value fails with the SDK's error
    expect(stale).toEqual(first);
    expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 2);
    await expect(loader()()).rejects.toThrow('ssm down');
  });

  it('rejects a parameter without a value', async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Name: NAME } });
    await expect(loader()()).rejects.toBeInstanceOf(InvalidConfigurationError);
  });

  it("surfaces the SDK's error, not Powertools' wrapper", async () => {
    // Prepare
    const missing = new Error('Parameter not found');
    missing.name = 'ParameterNotFound';
    ssm.on(GetParameterCommand).rejects(missing);

    // Act
    const failure = loader()();

    // Assess
    await expect(failure).rejects.toMatchObject({ name: 'ParameterNotFound' });
  });
});

describe('decodeSecret', () => {
  it.each([
    ['bare hex', HEX_KEY, HEX_KEY],
    ['hex: prefix', `hex:${HEX_KEY}`, HEX_KEY],
    ['bare base64', Buffer.from(HEX_KEY, 'hex').toString('base64'), HEX_KEY],
    [
      'base64: prefix with whitespace',
      ` base64:${Buffer.from(HEX_KEY, 'hex').toString('base64')}\n`,
      HEX_KEY,
    ],
  ])('decodes %s', (_name, input, hex) => {
    expect(Buffer.from(decodeSecret(input)).toString('hex')).toBe(hex);
  });

  it('names the source, never the value, when it cannot decode', () => {
    expect(() => decodeSecret('hex:xyz', NAME)).toThrow(`${NAME} is not valid hex`);
    expect(() => decodeSecret('not base64 at all!', NAME)).toThrow(NAME);
    try {
      decodeSecret('hex:zz-secret-zz', NAME);
    } catch (error) {
      expect(String(error)).not.toContain('secret-zz');
    }
  });
});
