import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { eumReceiptsRoute } from '../../../local/runtime/eum-receipts-route.js';
import { startHttpServer } from '../../../local/runtime/http-server.js';
import type { EumReceiptDeps } from '../../../shared/providers/eum/index.js';
import type { ReceiptInput } from '../../../shared/usecases/ingest-receipt.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';
import { aPolicy } from '../domain/fixtures.js';

const TOPIC = 'arn:aws:sns:us-east-1:000000000000:reset-notifier-eum-events';
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function aServer(deps: EumReceiptDeps | undefined) {
  const server = await startHttpServer({
    handler: async () => ({ statusCode: 404, body: '' }),
    port: 0,
    routes: [eumReceiptsRoute(deps)],
  });
  stops.push(server.stop);
  return server;
}

/** A raw POST (fetch cannot set Host), answering the status code. */
function post(url: string, body: string, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/receipts/eum`,
      { method: 'POST', headers: { 'content-type': 'text/plain', ...(host ? { host } : {}) } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const notification = (topicArn: string) =>
  JSON.stringify({
    Type: 'Notification',
    MessageId: 'n-1',
    TopicArn: topicArn,
    Message: JSON.stringify({
      eventType: 'TEXT_DELIVERED',
      messageId: 'eum-1',
      destinationPhoneNumber: '+14155550123',
      context: { client_reference: 'reset-1#1' },
    }),
  });

describe('local End User Messaging receipts path', () => {
  function deps(seen: ReceiptInput[]): EumReceiptDeps {
    return {
      ingest: async (_d, input) => {
        seen.push(input);
        return { kind: 'applied', to: 'delivered' };
      },
      topicArn: TOPIC,
      store: new MemoryNotificationStore(),
      clock: new ManualClock(),
      policy: aPolicy(),
    };
  }

  it('ingests a notification from the configured topic', async () => {
    const seen: ReceiptInput[] = [];
    const server = await aServer(deps(seen));
    expect(await post(server.url, notification(TOPIC))).toBe(200);
    expect(seen).toMatchObject([{ provider: 'eum', clientReference: 'reset-1#1', status: 'delivered' }]);
  });

  it('refuses another topic, a non-loopback Host, and answers 503 without the use case', async () => {
    const seen: ReceiptInput[] = [];
    const server = await aServer(deps(seen));
    expect(await post(server.url, notification(`${TOPIC}-other`))).toBe(403);
    // The local HTTP server itself refuses a foreign Host (421) before any route runs.
    expect(await post(server.url, notification(TOPIC), 'receipts.example.com')).toBe(421);
    expect(await post(server.url, 'not json')).toBe(400);
    expect(seen).toEqual([]);
    const bare = await aServer(undefined);
    expect(await post(bare.url, notification(TOPIC))).toBe(503);
  });
});
