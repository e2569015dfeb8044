/**
 * The client as a package (issue 25 item 10): built JavaScript with declarations, imported by
 * `reset-notifier/client` from plain Node (no TypeScript loader), against `npm start`; once from
 * this checkout (package self-reference) and once installed from the `npm pack` tarball in a
 * project outside it.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PHONE, uniqueName } from '../support/fixtures.js';
import { type NpmStartStack, startNpmStack } from '../support/npm-start.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLE = join(ROOT, 'scripts/examples/send-reset.mjs');
/** The calls' budget: this test is about the package, not latency on a 2-core machine shared with the suite. */
const SLOW_MACHINE_BUDGET = ['--budget-ms', '30000'];

/** A TypeScript caller of the installed package: its declarations must check without skipLibCheck. */
const CONSUMER_TS = `
import { type AdmitOutcome, CredentialsError, createResetNotifierClient } from 'reset-notifier/client';
const client = createResetNotifierClient({ baseUrl: 'http://127.0.0.1:3000', signing: false, timeBudgetMs: 1_000 });
export async function kinds(): Promise<string> {
  try {
    const admitted: AdmitOutcome = await client.admit({
      event_id: 'e-1', channel: 'sms', template: 'password_reset', destination: { phone: '+14155550123' },
      params: { code: '483920' }, expires_at: new Date().toISOString(),
    });
    const confirmed = await client.confirm('k-1');
    return admitted.kind === 'unavailable' ? String(admitted.retryAfterSeconds) : admitted.kind + confirmed.kind;
  } catch (error) {
    if (error instanceof CredentialsError) return error.code;
    throw error;
  }
}
`;
const CONSUMER_TSCONFIG = {
  compilerOptions: {
    strict: true,
    exactOptionalPropertyTypes: true,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2023',
    lib: ['es2023'],
    types: ['node'],
    skipLibCheck: false,
    noEmit: true,
  },
  files: ['consumer.ts'],
};

let stack: NpmStartStack;
let scratch: string;

/** Plain `node` with only PATH and HOME: no tsx, no loader options, no AWS credentials. */
async function plainNode(cwd: string, script: string, args: string[]) {
  const env = { PATH: process.env.PATH ?? '', HOME: scratch, AWS_EC2_METADATA_DISABLED: 'true' };
  try {
    const { stdout, stderr } = await run(process.execPath, [script, ...args], { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'reset-notifier-client-'));
  // The build `npm ci` and `npm pack` run through `prepare`, fresh: never a stale dist/.
  await run('npm', ['run', '-s', 'build:client'], { cwd: ROOT });
  stack = await startNpmStack();
});
afterAll(async () => {
  await stack?.kill();
  await rm(scratch, { recursive: true, force: true });
});

describe('the client package from plain Node against npm start', () => {
  it('admits, replays and confirms through reset-notifier/client in this checkout', async () => {
    // Prepare
    const url = `http://127.0.0.1:${stack.ports.PORT}`;
    const expiresAt = new Date(Date.now() + 10 * 60_000).toISOString();
    const args = ['--local', '--url', url, '--phone', TEST_PHONE, '--event', uniqueName('plain')];
    args.push('--expires-at', expiresAt, ...SLOW_MACHINE_BUDGET);

    // Act
    const first = await plainNode(ROOT, EXAMPLE, args);
    const again = await plainNode(ROOT, EXAMPLE, [...args, '--confirm']);

    // Assess
    // `replayed` when a first attempt timed out on the cold stack and its retry found the command.
    const [admitted] = lines(first.stdout);
    expect(admitted).toMatchObject({ call: 'admit', kind: expect.stringMatching(/^(admitted|replayed)$/) });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(lines(again.stdout)).toEqual([
      expect.objectContaining({ call: 'admit', kind: 'replayed', key: admitted?.key }),
      // `already_confirmed` when the confirmation's first request outlasted the client's attempt on a
      // loaded machine and its retry found the confirmation it had made (the documented outcome).
      { call: 'confirm', kind: expect.stringMatching(/^(confirmed|already_confirmed)$/) },
    ]);
    expect(first.stdout + again.stdout).not.toContain(TEST_PHONE);
  });

  it('reports missing credentials as such, with nothing sent, instead of an unavailable service', async () => {
    // Prepare: SigV4 on, and no credentials anywhere in the environment.
    const url = `http://127.0.0.1:${stack.ports.PORT}`;

    // Act
    const result = await plainNode(ROOT, EXAMPLE, ['--url', url, '--phone', TEST_PHONE]);

    // Assess
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('credentials_unavailable');
    expect(result.stderr).toContain('nothing was sent');
    expect(result.stdout).toBe('');
  });

  it('works installed from the npm pack tarball, in a project outside this checkout, types included', async () => {
    // Prepare: the tarball unpacked where npm would install it; its dependencies linked from
    // this checkout's node_modules (an offline stand-in for `npm install <tarball>`). Without
    // scripts: dist/client is fresh from beforeAll, and `prepare` would rebuild dist/cli.mjs
    // under the CLI's own test.
    const pack = ['pack', '--silent', '--ignore-scripts', '--pack-destination', scratch];
    const { stdout } = await run('npm', pack, { cwd: ROOT });
    const tarball = join(scratch, stdout.trim().split('\n').at(-1) ?? '');
    const project = join(scratch, 'auth-service');
    const installed = join(project, 'node_modules', 'reset-notifier');
    await mkdir(installed, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    for (const name of await readdir(join(ROOT, 'node_modules'))) {
      if (name.startsWith('.')) continue;
      await symlink(join(ROOT, 'node_modules', name), join(project, 'node_modules', name));
    }
    await copyFile(EXAMPLE, join(project, 'send-reset.mjs'));
    await writeFile(join(project, 'consumer.ts'), CONSUMER_TS);
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(CONSUMER_TSCONFIG));
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'));
    const url = `http://127.0.0.1:${stack.ports.PORT}`;

    // Act
    const typecheck = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', project]).then(
      () => 'clean',
      (error: { stdout: string }) => error.stdout,
    );
    const result = await plainNode(project, 'send-reset.mjs', [
      '--local',
      '--url',
      url,
      '--phone',
      TEST_PHONE,
      '--event',
      uniqueName('packed'),
      ...SLOW_MACHINE_BUDGET,
    ]);

    // Assess
    expect(manifest.exports['./client']).toEqual({
      types: './dist/client/client/index.d.ts',
      import: './dist/client/client/index.js',
    });
    expect((await readdir(join(installed, 'dist/client/client'))).sort()).toEqual(
      expect.arrayContaining(['index.d.ts', 'index.js', 'client.d.ts', 'client.js']),
    );
    expect(typecheck).toBe('clean');
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)).toEqual([
      expect.objectContaining({ call: 'admit', kind: expect.stringMatching(/^(admitted|replayed)$/) }),
    ]);
  });
});
