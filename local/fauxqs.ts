import { buildApp } from 'fauxqs';
import { isLoopbackHostHeader, LOOPBACK_HOST } from './runtime/loopback.js';

/** A running fauxqs (SQS emulator). */
export interface LocalFauxqs {
  /** `http://127.0.0.1:<port>`: the SQS endpoint. */
  readonly address: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Starts fauxqs on 127.0.0.1 only. Its `startFauxqs` always listens on 0.0.0.0 (its `host`
 * option only names the host in queue URLs), so the app is built and listened here, with the
 * same loopback `Host` check as our own servers.
 */
export async function startLocalFauxqs(options: { port?: number } = {}): Promise<LocalFauxqs> {
  const app = buildApp({ logger: false });
  app.addHook('onRequest', async (request, reply) => {
    if (!isLoopbackHostHeader(request.headers.host)) {
      await reply
        .code(421)
        .header('connection', 'close')
        .send({ code: 'misdirected_request', message: 'this local server answers loopback hosts only' });
    }
  });
  await app.listen({ port: options.port ?? 0, host: LOOPBACK_HOST });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  return { address: `http://${LOOPBACK_HOST}:${port}`, port, stop: () => app.close() };
}
