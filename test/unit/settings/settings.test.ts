import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/config.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';
import { readNumber, renderConfigurationDoc, SETTINGS } from '../../../shared/settings.js';

describe('the settings table', () => {
  it('docs/configuration.md is the one generated from it (run `npm run docs:config` after a change)', async () => {
    // Act
    const onDisk = await readFile('docs/configuration.md', 'utf8');
    // Assess
    expect(onDisk).toBe(renderConfigurationDoc());
  });

  it('names every variable loadConfig reads, and nothing twice', async () => {
    // Prepare: the variables named in the config reader's source
    const source = await readFile('shared/config.ts', 'utf8');
    const read = new Set([...source.matchAll(/env\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]));
    const named = Object.values(SETTINGS).flatMap((s) => s.env.split(', '));
    // Assess
    for (const name of read) expect(named, `${name} is read but not in shared/settings.ts`).toContain(name);
    expect(new Set(named).size).toBe(named.length);
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
