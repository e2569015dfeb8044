/**
 * The local servers we start listen on loopback only and answer only loopback `Host` headers
 * (DNS rebinding), and DynamoDB Local is started without telemetry.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { DYNAMODB_LOCAL_FLAGS } from '../../local/dynamodb-local.js';
import { startLocalFauxqs } from '../../local/fauxqs.js';
import { startHttpServer } from '../../local/runtime/http-server.js';
import { isLoopbackHostHeader, loopbackOnly } from '../../local/runtime/loopback.js';
import { startSimulator } from '../../local/simulator/server.js';

/** A GET with an explicit Host header (fetch does not let a caller choose it). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('loopback Host check', () => {
  it.each([
    ['127.0.0.1:3000', true],
    ['127.0.0.1', true],
    ['localhost:4010', true],
    ['LOCALHOST', true],
    ['[::1]:3000', true],
    ['127.1.2.3:80', true],
    ['sqs.us-east-1.localhost:4566', true],
    ['evil.example', false],
    ['evil.example:3000', false],
    ['127.0.0.1.evil.example', false],
    ['localhost.evil.example:3000', false],
    ['0.0.0.0:3000', false],
    ['192.168.1.10:3000', false],
    ['', false],
  ])('%j -> %s', (host, loopback) => {
    expect(isLoopbackHostHeader(host)).toBe(loopback);
  });

  it('refuses to bind anything but loopback', () => {
    expect(loopbackOnly(undefined)).toBe('127.0.0.1');
    expect(() => loopbackOnly('0.0.0.0')).toThrow(/loopback only/);
    expect(() => loopbackOnly('sqs.localhost')).toThrow(/loopback only/);
  });
});

describe.each<[string, () => Promise<{ url: string; stop(): Promise<void> }>]>([
  [
    'API http server',
    () =>
      startHttpServer({
        handler: async () => ({ statusCode: 200, body: '{}' }),
        port: 0,
      }),
  ],
  ['provider simulator', () => startSimulator({ port: 0 })],
  [
    'fauxqs',
    async () => {
      const f = await startLocalFauxqs();
      return { url: f.address, stop: f.stop };
    },
  ],
])('%s', (_name, start) => {
  it('listens on 127.0.0.1 and answers a foreign Host with 421, a loopback one normally', async () => {
    // Prepare
    const server = await start();
    try {
      // Act
      const foreign = await getWithHost(`${server.url}/_sim/messages`, 'rebind.evil.example');
      const port = new URL(server.url).port;
      const local = await getWithHost(`${server.url}/_sim/messages`, `localhost:${port}`);
      // Assess
      expect(new URL(server.url).hostname).toBe('127.0.0.1');
      expect(foreign).toBe(421);
      expect(local).not.toBe(421);
    } finally {
      await server.stop();
    }
  });
});

it('starts DynamoDB Local with telemetry disabled', () => {
  expect(DYNAMODB_LOCAL_FLAGS).toContain('-disableTelemetry');
});
