/**
 * `npm start` as an operator runs it, for the end-to-end tests: the whole local stack in a child
 * process, on ports that were free a moment ago.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../local/dynamodb-local.js';

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
  /** Resolves once the npm process has exited (after a signal: once it stopped its children). */
  exited(): Promise<void>;
  /** Kills it (SIGKILL) unless it has exited, and waits for its exit. */
  kill(): Promise<void>;
}

/**
 * Starts `npm start --silent` on free ports and resolves once it printed its ready line; rejects
 * (with what it printed on stderr) if it exits before. There is no deadline of its own: on a loaded
 * machine the stack may take minutes to start (a chaos run beside `npm test` once made it miss a
 * 90 s budget); a stack that never gets ready fails the calling test at the test's own timeout.
 */
export async function startNpmStack(): Promise<NpmStartStack> {
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
  let errors = '';
  // 'error' too: a spawn that failed emits no 'exit'.
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (error) => {
      errors += String(error);
      resolve();
    });
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(READY_LINE)) resolve();
    });
    void exit.then(() =>
      reject(
        new Error(`npm start exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${errors}`),
      ),
    );
  });
  const stack: NpmStartStack = {
    child,
    ports,
    output: () => output,
    exited: () => exit,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    },
  };
  try {
    await ready;
  } catch (error) {
    await stack.kill();
    throw error;
  }
  return stack;
}
