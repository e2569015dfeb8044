/**
 * The receipts-only listener: a second local HTTP server that serves `POST /v1/receipts/twilio`
 * and nothing else (404), for real Twilio's status callbacks through a tunnel. A tunnel in front of
 * the API port either breaks every callback (the loopback `Host` check answers `421`) or, when it
 * rewrites `Host`, publishes the unauthenticated API and the console; in front of this port it can
 * reach only the signed receipts route (docs/local.md#receipts-listener).
 *
 * It binds loopback like every local server but accepts any `Host`: a tunnel forwards the public
 * name, and the route believes a callback only for its `X-Twilio-Signature` (over the configured
 * public callback URL), never for where it came from.
 */
import { createServer, type Server } from 'node:http';
import { TWILIO_RECEIPTS_PATH } from '../../shared/handlers/receipts-handler.js';
import { type Env, LOCAL_RECEIPTS_PORT, SETTINGS, settingsReader } from '../../shared/settings.js';
import { type ApiHandler, readBody, toApiGatewayEvent } from './http-server.js';
import { localContext } from './lambda-context.js';
import { loopbackOnly } from './loopback.js';

/** Twilio's callbacks are a few hundred bytes of form fields; anything far larger is not one. */
const MAX_RECEIPT_BYTES = 64 * 1024;

/**
 * The port of the receipts-only listener, or `undefined` for none: `RECEIPTS_PORT` when set (any
 * provider), else {@link LOCAL_RECEIPTS_PORT} when the stack talks to real Twilio, whose callbacks
 * can only come through a tunnel.
 */
export function receiptsListenerPort(env: Env): number | undefined {
  const read = settingsReader(env);
  return read(SETTINGS.receiptsPort) ?? (talksToTwilio(env) ? LOCAL_RECEIPTS_PORT : undefined);
}

/** True when the local stack sends through a Twilio(-compatible) endpoint rather than its simulator. */
export function talksToTwilio(env: Env): boolean {
  const read = settingsReader(env);
  return read(SETTINGS.provider) === 'twilio' && Boolean(read(SETTINGS.twilioBaseUrl));
}

const json = (status: number, code: string, message: string) => ({
  status,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  body: JSON.stringify({ code, message }),
});

/** Starts the receipts-only listener in front of `handler` (the receipts handler, nothing else). */
export async function startReceiptsListener(options: {
  handler: ApiHandler;
  port: number;
  /** A loopback address (default 127.0.0.1): the tunnel client runs on this machine. */
  host?: string;
}): Promise<{ server: Server; url: string; port: number; stop(): Promise<void> }> {
  const host = loopbackOnly(options.host);
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', `http://${host}`);
      if (req.method !== 'POST' || url.pathname !== TWILIO_RECEIPTS_PATH) {
        const answer = json(404, 'route_not_found', 'this listener serves only POST /v1/receipts/twilio');
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
        return;
      }
      const body = await readBody(req, MAX_RECEIPT_BYTES);
      if (!body) {
        const answer = json(413, 'payload_too_large', 'the body is too large');
        res.writeHead(answer.status, { ...answer.headers, connection: 'close' });
        res.end(answer.body);
        return;
      }
      // The event's domain name is the Host the tunnel forwarded: the handler tries the configured
      // public base first, then that name over https, as behind API Gateway.
      const event = toApiGatewayEvent(
        req,
        body,
        new URL(req.url ?? '/', `http://${req.headers.host ?? host}`),
      );
      const result = await options.handler(event, localContext('receipts'));
      res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>);
      res.end(result.body ?? '');
    } catch {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'internal_error', message: 'internal error' }));
    }
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    server,
    port,
    url: `http://${host}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
