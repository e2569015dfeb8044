/**
 * The AWS wire formats the AWS simulator (./server.ts) answers in: the SNS Query protocol's XML
 * documents, the awsJson error documents, the CloudWatch Logs filter patterns it understands, and
 * the services' documented limits. Pure: no state.
 */

import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export const MAX_REQUEST_BYTES = 256 * 1024;
export const E164 = /^\+[1-9]\d{6,14}$/;
export const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;
export const EUM_MIN_TTL = 5;
export const EUM_MAX_TTL = 259_200;
export const EUM_MAX_BODY = 1600;
export const LOG_PAGE_SIZE = 100;
export const POST_TIMEOUT_MS = 5_000;
export const EVENT_RETRIES = 3;
const TERM = /^\(?\s*\$\.notification\.messageId\s*=\s*("(?:[^"\\]|\\.)*")\s*\)?$/;

export function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
) {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': type, 'x-amzn-requestid': randomUUID(), ...headers });
  res.end(body);
}

export const sendJson = (res: ServerResponse, status: number, body: unknown, type = 'application/json') =>
  send(res, status, type, JSON.stringify(body));

const xmlEscape = (text: string) =>
  text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c,
  );

/** The SNS Query protocol's error document. */
export function snsError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
) {
  const type = status >= 500 ? 'Receiver' : 'Sender';
  send(
    res,
    status,
    'text/xml',
    `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>${type}</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
    headers,
  );
}

/** The awsJson error document: `__type` names the modelled exception. */
export function jsonError(
  res: ServerResponse,
  namespace: string,
  status: number,
  name: string,
  message: string,
  fields: Record<string, unknown> = {},
  type = 'application/x-amz-json-1.0',
) {
  send(res, status, type, JSON.stringify({ __type: `${namespace}#${name}`, Message: message, ...fields }), {
    'x-amzn-errortype': name,
  });
}

/** The message ids a supported filter pattern names; an empty set for no pattern; null = unsupported. */
export function parsePattern(pattern: string): Set<string> | null {
  const trimmed = pattern.trim();
  if (trimmed === '') return new Set();
  const inner = /^\{(.*)\}$/s.exec(trimmed)?.[1];
  if (inner === undefined) return null;
  const ids = new Set<string>();
  for (const term of inner.split('||')) {
    const quoted = TERM.exec(term.trim())?.[1];
    if (quoted === undefined) return null;
    ids.add(JSON.parse(quoted) as string);
  }
  return ids;
}
