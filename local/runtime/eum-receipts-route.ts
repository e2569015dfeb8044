/**
 * The local receipts path of End User Messaging events: `POST /v1/receipts/eum` on the API port,
 * where the AWS simulator posts events as SNS HTTP notifications. In AWS the same events reach the
 * receipts function through its SNS subscription (the subscription is what authenticates them);
 * locally nothing authenticates an SNS HTTP post, so the path answers only loopback peers that
 * name a loopback host, and only notifications from the configured topic are believed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type EumReceiptDeps,
  type EumReceiptReport,
  ingestEumNotification,
} from '../../shared/providers/eum/index.js';
import type { LocalRoute } from './http-server.js';

export const EUM_RECEIPTS_PATH = '/v1/receipts/eum';
const MAX_BYTES = 64 * 1024;
const LOOPBACK_ADDRESS = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;
const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;

/** True when both the peer and the Host header are loopback. */
export function isLoopbackRequest(req: IncomingMessage): boolean {
  return LOOPBACK_ADDRESS.test(req.socket.remoteAddress ?? '') && LOOPBACK_HOST.test(req.headers.host ?? '');
}

function answer(res: ServerResponse, status: number, body: Record<string, unknown>): true {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
  return true;
}

/** The route; `deps` undefined means the receipts use case is not available in this build (503). */
export function eumReceiptsRoute(
  deps: EumReceiptDeps | undefined,
  onReport?: (report: EumReceiptReport) => void,
): LocalRoute {
  return async (req, res, url) => {
    if (url.pathname !== EUM_RECEIPTS_PATH) return false;
    if (!isLoopbackRequest(req)) return answer(res, 403, { code: 'forbidden', message: 'loopback only' });
    if (req.method !== 'POST') return answer(res, 405, { code: 'method_not_allowed', message: 'POST only' });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BYTES) return answer(res, 413, { code: 'payload_too_large', message: 'too large' });
      chunks.push(chunk as Buffer);
    }
    if (deps === undefined)
      return answer(res, 503, { code: 'unavailable', message: 'receipts use case missing' });
    let notification: unknown;
    try {
      notification = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return answer(res, 400, { code: 'invalid_notification', message: 'not JSON' });
    }
    if (typeof notification !== 'object' || notification === null) {
      return answer(res, 400, { code: 'invalid_notification', message: 'not an object' });
    }
    // A store failure throws: 500, and SNS would redeliver (the use case is idempotent).
    const report = await ingestEumNotification(deps, notification);
    onReport?.(report);
    if (report.kind === 'rejected') {
      return answer(res, report.why === 'wrong_topic' ? 403 : 400, { code: report.why });
    }
    return answer(res, 200, { result: report.result.kind });
  };
}
