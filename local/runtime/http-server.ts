import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { localContext } from './lambda-context.js';
import { loopbackOnly, refuseForeignHost } from './loopback.js';

export type ApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** Extra local-only routes (e.g. the console page), tried before the API handler. */
export type LocalRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

/** Hard cap on what the local server buffers; the handler enforces the API's own 16 KiB limit. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

const TEXT_TYPES = /^(application\/(json|x-www-form-urlencoded|xml)|text\/)/i;

/** Turns a Node request into an API Gateway HTTP API (payload 2.0) event, as API Gateway would. */
export function toApiGatewayEvent(req: IncomingMessage, body: Buffer, url: URL): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (name === 'cookie') cookies.push(...String(value).split(/;\s*/));
    else headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams)
    query[name] = name in query ? `${query[name]},${value}` : value;
  const isText = body.length === 0 || TEXT_TYPES.test(headers['content-type'] ?? '');
  const method = (req.method ?? 'GET').toUpperCase();
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(url.searchParams.size ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: url.host,
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(body.length ? { body: isText ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: !isText,
  };
}

/** The request's body, or `undefined` once it passes `maxBytes`. */
export async function readBody(
  req: IncomingMessage,
  maxBytes = MAX_BUFFERED_BYTES,
): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Starts the local HTTP server in front of the API handler. */
export async function startHttpServer(options: {
  handler: ApiHandler;
  port: number;
  /** A loopback address (default 127.0.0.1); anything else is refused. */
  host?: string;
  routes?: readonly LocalRoute[];
}): Promise<{ server: Server; url: string; port: number; stop(): Promise<void> }> {
  const host = loopbackOnly(options.host);
  const server = createServer(async (req, res) => {
    try {
      if (refuseForeignHost(req, res)) return;
      const url = new URL(req.url ?? '/', `http://${req.headers.host ?? host}`);
      for (const route of options.routes ?? []) if (await route(req, res, url)) return;
      const body = await readBody(req);
      if (!body) {
        res.writeHead(413, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'payload_too_large', message: 'the body is too large' }));
        return;
      }
      const result = await options.handler(toApiGatewayEvent(req, body, url), localContext('api'));
      const payload = result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? '');
      res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>);
      res.end(payload);
    } catch {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'internal_error', message: 'internal error' }));
    }
  });
  server.keepAliveTimeout = 5_000;
  // A deep accept backlog: bursts of concurrent duplicates must queue, not be refused.
  await new Promise<void>((resolve) => server.listen({ port: options.port, host, backlog: 4096 }, resolve));
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
