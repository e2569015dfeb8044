import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../../bin/reset-notifier.mjs', import.meta.url));

/** Runs the real launcher, as `npx reset-notifier` would. */
async function cli(args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { timeout: 30_000 });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

describe('the reset-notifier bin', () => {
  it('prints help for the program and lists every command', async () => {
    // Act
    const { stdout, code } = await cli(['--help']);
    // Assess
    expect(code).toBe(0);
    for (const command of ['status', 'evidence', 'dlq', 'reconcile', '--aws', '--data-dir']) {
      expect(stdout).toContain(command);
    }
  });

  it.each([
    [
      ['status', '--help'],
      ['--event-id', '--json'],
    ],
    [
      ['evidence', 'export', '--help'],
      ['--from', '--to', '--format', '--out', '--state', '--event-id'],
    ],
    [
      ['dlq', 'list', '--help'],
      ['--json', '--max'],
    ],
    [['dlq', 'redrive', '--help'], ['--dry-run']],
    [['reconcile', '--help'], ['--now']],
  ])('prints help for %j', async (args, options) => {
    const { stdout, code } = await cli(args);
    expect(code).toBe(0);
    for (const option of options) expect(stdout).toContain(option);
  });

  it('rejects a bad option with a usage error and a non-zero exit code', async () => {
    const { stderr, code } = await cli([
      'evidence',
      'export',
      '--from',
      'x',
      '--to',
      'y',
      '--format',
      'xml',
      '--out',
      '/tmp/x',
    ]);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/--format/);
  });
});
