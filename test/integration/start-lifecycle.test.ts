import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isPortFree } from '../../local/ports.js';

/** A port that was free a moment ago. */
async function aFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Waits until `predicate` holds, polling; fails after `timeoutMs`. */
async function eventually(predicate: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('npm start lifecycle', () => {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the npm process alone stops every child and frees every port',
    async (signal) => {
      // Prepare
      const ports = {
        PORT: await aFreePort(),
        SIM_PORT: await aFreePort(),
        DYNAMODB_PORT: await aFreePort(),
        SQS_PORT: await aFreePort(),
      };
      const env = {
        ...process.env,
        ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      };
      // detached: the signal reaches npm only, not a process group, as `kill <pid>` would.
      child = spawn('npm', ['start', '--silent'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      await eventually(async () => output.includes('Ctrl-C stops everything'), 90_000);

      // Act
      child.kill(signal);

      // Assess
      for (const port of Object.values(ports)) {
        await eventually(() => isPortFree(port), 20_000);
      }
      expect(output).toContain(`Operator console    http://127.0.0.1:${ports.PORT}/console`);
    },
  );
});
