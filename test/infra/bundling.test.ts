import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTION_ENTRIES, PACKAGE_ROOT } from '../../infra/settings.js';
import { ResetNotifierStack } from '../../infra/stack.js';
import { EXAMPLE_ALLOW_LISTS, testApp } from './support.js';

const MiB = 1024 * 1024;
/** Size budgets of the minified bundles (index.mjs): they bound cold starts and catch stray imports. */
const BUDGET_BYTES: Record<string, number> = {
  'HTTP API': 2.5 * MiB,
  'table stream -> dispatch queue': 1.5 * MiB,
  'calls the SMS provider once': 1.5 * MiB,
  'reconciles unknown outcomes': 1.5 * MiB,
  'reconcile worker': 1.5 * MiB,
};

/** Enough configuration for the composition root to build without AWS (see shared/config.ts). */
const LOCAL_ENV = {
  PROVIDER: 'simulator',
  CIPHER: 'local',
  LOCAL_DATA_KEY: '11'.repeat(32),
  FINGERPRINT_KEY: '22'.repeat(32),
  AWS_REGION: 'us-east-1',
};

describe('bundling with the local esbuild (the one test that bundles for real)', () => {
  it('bundles each handler into a minified ESM file with a source map, within its size budget', () => {
    // Prepare: the real entry points must exist (they are the functions team's files).
    const entries = Object.values(FUNCTION_ENTRIES).map((file) => join(PACKAGE_ROOT, 'functions', file));
    const missing = entries.filter((entry) => !existsSync(entry));
    expect(missing, `Lambda entry files missing (each must export "handler"): ${missing.join(', ')}`).toEqual(
      [],
    );
    const app = testApp({ bundle: true, context: { 'aws:cdk:enable-asset-metadata': true } });
    const stack = new ResetNotifierStack(app, 'BundledStack', {
      notifier: { abuseLimits: EXAMPLE_ALLOW_LISTS },
    });

    // Act
    const assembly = app.synth();

    // Assess
    const template = assembly.getStackByName(stack.stackName).template as {
      Resources: Record<
        string,
        { Type: string; Properties: { Description?: string }; Metadata?: Record<string, string> }
      >;
    };
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(5);
    for (const fn of functions) {
      const budget = Object.entries(BUDGET_BYTES).find(([text]) =>
        fn.Properties.Description?.includes(text),
      )?.[1];
      const assetPath = fn.Metadata?.['aws:asset:path'];
      expect(budget, fn.Properties.Description).toBeDefined();
      expect(assetPath, fn.Properties.Description).toBeDefined();
      const bundle = join(assembly.directory, assetPath as string, 'index.mjs');
      const size = statSync(bundle).size;
      expect(size, `${fn.Properties.Description}: ${size} bytes`).toBeLessThanOrEqual(budget as number);
      expect(existsSync(`${bundle}.map`), 'source map').toBe(true);
      const code = readFileSync(bundle, 'utf8');
      expect(code.startsWith("import{createRequire as __cr}from'node:module';"), 'ESM banner').toBe(true);
      // Minified: thousands of characters per line (unminified code has dozens).
      expect(code.length / code.split('\n').length, 'minified').toBeGreaterThan(1_000);
      expect(code, 'exports handler').toMatch(
        /export\s*\{[^}]*\bas handler\b[^}]*\}|export\s*\{[^}]*\bhandler\b/,
      );
      expect(code, 'infrastructure code leaked into a bundle').not.toContain('aws-cdk-lib');
      // The bundle loads as ESM (the `require` banner works) and exports the handler; local
      // settings keep its module-scope initialisation off the network.
      const loaded = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(bundle)}); console.log(typeof m.handler);`,
        ],
        { cwd: tmpdir(), env: { ...process.env, ...LOCAL_ENV }, encoding: 'utf8', timeout: 30_000 },
      );
      expect(loaded.stdout.trim(), `${fn.Properties.Description}: ${loaded.stderr}`).toBe('function');
    }
  }, 120_000);
});
