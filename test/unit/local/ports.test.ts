import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { busyPortMessage, isPortFree } from '../../../local/ports.js';

/** A listener on a free port, like a stack left over from an earlier run. */
async function aListener(host: string): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ port: 0, host }, resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port };
}

describe('busy ports at npm start', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it.each(['127.0.0.1', '0.0.0.0'])(
    'a port held on %s is reported in one line with its variable',
    async (host) => {
      // Prepare
      const { server, port } = await aListener(host);
      servers.push(server);

      // Act
      const message = await busyPortMessage([{ port, variable: 'SIM_PORT' }]);

      // Assess
      expect(message).toBe(
        `port ${port} (SIM_PORT) is already in use: stop what listens there, or start with SIM_PORT=<another port>`,
      );
    },
  );

  it('free ports give no message, and the probe leaves them free', async () => {
    // Prepare
    const { server, port } = await aListener('127.0.0.1');
    await new Promise((resolve) => server.close(resolve));

    // Act
    const message = await busyPortMessage([{ port, variable: 'PORT' }]);

    // Assess
    expect(message).toBeUndefined();
    expect(await isPortFree(port)).toBe(true);
  });
});
