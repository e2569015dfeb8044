import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { transform } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/config.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';
import {
  readNumber,
  renderConfigurationDoc,
  SETTINGS,
  settingsEnv,
  settingsReader,
} from '../../../shared/settings.js';

/** Where code reads and writes settings: none of it may spell a variable of the table. */
const ROOMS = ['shared', 'infra', 'local', 'scripts', 'bench'];

/**
 * Folders not yet moved onto the table, each with its reason. Shrink this list; never grow it.
 * (issue 21: providers and proof tooling are being reshaped in parallel workstreams.)
 */
const NOT_YET: Readonly<Record<string, string>> = {
  'scripts/examples/': "client examples read the SDK's AWS_REGION as any caller would",
  'shared/client/': 'the client package: constants of its own that share a spelling, no settings',
};

/** Every `.ts` file under `dir`. */
async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

describe('the settings table', () => {
  it('docs/configuration.md is the one generated from it (run `npm run docs:config` after a change)', async () => {
    // Act
    const onDisk = await readFile('docs/configuration.md', 'utf8');
    // Assess
    expect(onDisk).toBe(renderConfigurationDoc());
  });

  it('names each variable once, and no code outside it spells one (tests excepted)', async () => {
    // Prepare: each file's code without comments (esbuild drops them), and every name of the table
    const names = Object.values(SETTINGS).flatMap((s) => ('env' in s ? [s.env] : []));
    const spelled = async (file: string) => {
      const { code } = await transform(await readFile(file, 'utf8'), {
        loader: 'ts',
        minifyWhitespace: true,
      });
      return names.filter((name) => new RegExp(`(?<![\\w])${name}(?![\\w])`).test(code));
    };
    const files = (await Promise.all(ROOMS.map(sourcesUnder)))
      .flat()
      .filter((file) => file !== 'shared/settings.ts')
      .filter((file) => !Object.keys(NOT_YET).some((folder) => file.startsWith(folder)));
    // Act
    const offenders = (
      await Promise.all(files.map(async (file) => [file, await spelled(file)] as const))
    ).filter(([, found]) => found.length > 0);
    // Assess
    expect(new Set(names).size).toBe(names.length);
    expect(files.length).toBeGreaterThan(100);
    expect(offenders).toEqual([]);
  });

  it('its local timing defaults are what loadConfig uses with an empty environment', () => {
    // Act
    const config = loadConfig({});
    // Assess
    expect(config.policy).toEqual(DEFAULT_POLICY);
    expect(config.policy.reconcileSettleMs).toBe(Number(SETTINGS.reconcileSettle.local) * 1000);
    expect(config.policy.providerTimeoutMs).toBe(SETTINGS.providerTimeout.local);
  });

  it('reads a value within its constraints and names the variable otherwise', () => {
    expect(readNumber({ MAX_ATTEMPTS: '3' }, SETTINGS.maxAttempts)).toBe(3);
    expect(readNumber({ MAX_ATTEMPTS: ' ' }, SETTINGS.maxAttempts)).toBe(DEFAULT_POLICY.maxAttempts);
    expect(() => readNumber({ MAX_ATTEMPTS: '0' }, SETTINGS.maxAttempts)).toThrow(
      /^MAX_ATTEMPTS must be at least 1/,
    );
    expect(() => readNumber({ MAX_ATTEMPTS: '2.5' }, SETTINGS.maxAttempts)).toThrow(
      /MAX_ATTEMPTS must be a whole number/,
    );
    expect(() => readNumber({ PROVIDER_TIMEOUT_MS: 'soon' }, SETTINGS.providerTimeout)).toThrow(
      /PROVIDER_TIMEOUT_MS must be a number, got "soon"/,
    );
    expect(() => readNumber({ RECONCILE_SETTLE_SECONDS: '-1' }, SETTINGS.reconcileSettle)).toThrow(
      /at least 0/,
    );
  });
});

describe('reading and writing through the table', () => {
  it('writes each value under its variable, lists comma-joined, unset values left out', () => {
    expect(
      settingsEnv({
        providerTimeout: 1000,
        snsDeliveryLogGroups: ['a', 'b'],
        tableName: 't',
        kmsKey: undefined,
      }),
    ).toEqual({ PROVIDER_TIMEOUT_MS: '1000', SNS_DELIVERY_LOG_GROUPS: 'a,b', TABLE_NAME: 't' });
  });

  it('reads back what it wrote, and the local default (parsed by the codec) when unset', () => {
    // Prepare
    const env = settingsEnv({ allowedDestinationPrefixes: ['+1', '+44'], twilioRedaction: 'off' });
    // Act
    const read = settingsReader(env);
    // Assess
    expect(read(SETTINGS.allowedDestinationPrefixes)).toEqual(['+1', '+44']);
    expect(read(SETTINGS.twilioRedaction)).toBe('off');
    expect(read(SETTINGS.cipher)).toBe('local');
    expect(read(SETTINGS.destinationLimits)).toHaveLength(2);
    expect(read(SETTINGS.kmsKey)).toBeUndefined();
    expect(read(SETTINGS.kmsKey, 'k')).toBe('k');
  });

  it('refuses a malformed value of any kind with the variable named', () => {
    expect(() => loadConfig(settingsEnv({ provider: 'pigeon' }))).toThrow(
      /^PROVIDER must be one of simulator, twilio, sns, eum, got "pigeon"/,
    );
    expect(() => loadConfig(settingsEnv({ destinationLimits: '3 per hour' }))).toThrow(/DESTINATION_LIMITS/);
    expect(() => loadConfig(settingsEnv({ maxSmsSegments: 'many' }))).toThrow(
      /^MAX_SMS_SEGMENTS must be a number/,
    );
  });
});
