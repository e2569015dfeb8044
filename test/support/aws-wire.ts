/**
 * Helpers for tests that drive the real AWS SDK clients over HTTP: loopback endpoints with fixed
 * local credentials, and a receiver that collects what a simulator posts.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Client settings pointing an SDK client at a local endpoint. */
export function localClient(endpoint: string) {
  return {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  } as const;
}

/** One request a receiver got. */
export interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** An HTTP server on loopback that records every POST and answers 200 (503 to the first `failFirst`). */
export async function startReceiver(options: { failFirst?: number } = {}): Promise<{
  readonly url: string;
  readonly received: Received[];
  /** Resolves once at least `count` requests arrived (no fixed wait). */
  waitFor(count: number): Promise<Received[]>;
  stop(): Promise<void>;
}> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: (r: Received[]) => void }[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(received.length <= (options.failFirst ?? 0) ? 503 : 200).end();
    for (const waiter of [...waiters]) {
      if (received.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve([...received]);
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/receipts/eum`,
    received,
    waitFor: (count) =>
      received.length >= count
        ? Promise.resolve([...received])
        : new Promise((resolve) => waiters.push({ count, resolve })),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
