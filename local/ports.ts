import { createServer } from 'node:net';

/** A fixed local port and the environment variable that moves it. */
export interface NamedPort {
  readonly port: number;
  readonly variable: string;
}

/** Resolves true when nothing listens on `port` at 127.0.0.1 (a listener on any interface counts). */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * The first of `ports` that is taken, as the one line `npm start` prints, or undefined when all
 * are free. Checked before anything starts, so a busy port never leaves half a stack running.
 */
export async function busyPortMessage(ports: readonly NamedPort[]): Promise<string | undefined> {
  for (const { port, variable } of ports) {
    if (!(await isPortFree(port))) {
      return `port ${port} (${variable}) is already in use: stop what listens there, or start with ${variable}=<another port>`;
    }
  }
  return undefined;
}
