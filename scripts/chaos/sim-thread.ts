/**
 * Runs the provider simulator in a worker thread. In one process hosting the whole stack, an
 * in-process simulator shares the event loop with the API, the pollers and the chaos client, and
 * under load accepts connections seconds late: requests would then reach the "provider" long after
 * the sender gave up, which measures the test rig rather than the service.
 */
import { Worker } from 'node:worker_threads';

export interface SimulatorThread {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts the simulator thread; resolves with its URL once it listens. */
export async function startSimulatorThread(
  statusDelaysMs: {
    sent: number;
    delivered: number;
  },
  /** `aws`: the AWS simulator (SNS, End User Messaging, CloudWatch Logs) instead of Twilio's. */
  kind: 'twilio' | 'aws' = 'twilio',
): Promise<SimulatorThread> {
  const entry = new URL('./sim-worker.ts', import.meta.url).href;
  // An eval entry registers tsx in the worker, so the TypeScript entry loads under tsx and vitest alike.
  const worker = new Worker(
    `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`,
    { eval: true, workerData: { statusDelaysMs, kind } },
  );
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('message', (message: { url: string }) => resolve(message.url));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`simulator thread exited (${code}) before it listened`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.postMessage('stop');
        // A thread that does not wind down on its own is terminated.
        setTimeout(() => void worker.terminate(), 5_000).unref();
      }),
  };
}
