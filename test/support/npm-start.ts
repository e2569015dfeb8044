/**
 * `npm start` as an operator runs it, for the end-to-end tests: the whole local stack in a child
 * process, on ports that were free a moment ago.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../../local/dynamodb-local.js';
import { eventually } from './eventually.js';

/** The line `npm start` prints once the whole stack answers. */
const READY_LINE = 'Ctrl-C stops everything';

/** A running `npm start`. */
export interface NpmStartStack {
  /** The npm process; detached, so a signal to it reaches npm only, as `kill <pid>` would. */
  readonly child: ChildProcess;
  /** The ports it was given, by the environment variable that moves each. */
  readonly ports: {
    readonly PORT: number;
    readonly SIM_PORT: number;
    readonly DYNAMODB_PORT: number;
    readonly SQS_PORT: number;
  };
  /** What it has printed on stdout so far. */
  output(): string;
  /** Kills it (SIGKILL) unless it has exited, and waits for its exit. */
  kill(): Promise<void>;
}

/**
 * Starts `npm start --silent` on free ports and resolves once it printed its ready line; when
 * that line does not come within `readyTimeoutMs`, kills it and rejects.
 */
export async function startNpmStack({ readyTimeoutMs = 90_000 } = {}): Promise<NpmStartStack> {
  const ports = {
    PORT: await freePort(),
    SIM_PORT: await freePort(),
    DYNAMODB_PORT: await freePort(),
    SQS_PORT: await freePort(),
  };
  const env = {
    ...process.env,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
  };
  const child = spawn('npm', ['start', '--silent'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const stack: NpmStartStack = {
    child,
    ports,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    },
  };
  try {
    await eventually(
      () => {
        if (!output.includes(READY_LINE)) throw new Error(`npm start: not ready within ${readyTimeoutMs} ms`);
      },
      { timeoutMs: readyTimeoutMs, intervalMs: 200 },
    );
  } catch (error) {
    await stack.kill();
    throw error;
  }
  return stack;
}
