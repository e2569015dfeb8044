import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('the operator CLI binary', () => {
  it('runs as plain JavaScript, with no TypeScript loader at run time', { timeout: 60_000 }, async () => {
    // Prepare: the bundle `npm ci` builds through `prepare`
    await run('npm', ['run', '-s', 'build:cli']);
    // Act: node alone, no tsx and no loader options inherited
    const { stdout } = await run(process.execPath, ['bin/reset-notifier.mjs', '--help'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    // Assess
    expect(stdout).toContain('Usage: reset-notifier');
    expect(stdout).toMatch(/\bstatus\b/);
  });
});
