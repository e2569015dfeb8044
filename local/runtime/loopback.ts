/**
 * Loopback-only serving for every local server (API, simulator, fauxqs): bind 127.0.0.1 and
 * answer only requests whose `Host` names a loopback address. A web page the developer visits
 * could otherwise reach these servers by DNS rebinding (its own name resolving to 127.0.0.1) and
 * read what they serve: the simulator's ledger holds message bodies, i.e. reset codes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The only interface local servers listen on. */
export const LOOPBACK_HOST = '127.0.0.1';

/** `host` when it is a loopback address (default {@link LOOPBACK_HOST}); throws for anything else. */
export function loopbackOnly(host: string | undefined): string {
  const chosen = host ?? LOOPBACK_HOST;
  if (!isLoopbackAddress(chosen)) {
    throw new Error(`local servers listen on loopback only; refusing to bind ${chosen}`);
  }
  return chosen;
}

/** An address to bind: 127.x.x.x, `::1` or `localhost`. */
function isLoopbackAddress(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

/** A name a request may use: also `*.localhost`, loopback by RFC 6761 (no DNS answer can rebind it; fauxqs names queue URLs so). */
function isLoopbackHostname(hostname: string): boolean {
  return isLoopbackAddress(hostname) || hostname.toLowerCase().endsWith('.localhost');
}

/** True when a `Host` header (`name[:port]`) names loopback: 127.x.x.x, `[::1]`, `localhost` or `*.localhost`. */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  if (host === undefined || host === '') return false;
  const match = /^(\[[^\]]*\]|[^:]+)(?::\d{1,5})?$/.exec(host.trim());
  return match?.[1] !== undefined && isLoopbackHostname(match[1]);
}

/**
 * Answers `421 Misdirected Request` and returns true when the request's `Host` is not loopback;
 * call it first in a request handler and stop when it returns true.
 */
export function refuseForeignHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (isLoopbackHostHeader(req.headers.host)) return false;
  res.writeHead(421, { 'content-type': 'application/json', connection: 'close' });
  res.end(
    JSON.stringify({ code: 'misdirected_request', message: 'this local server answers loopback hosts only' }),
  );
  return true;
}
