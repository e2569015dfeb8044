/**
 * A send client cannot retry, by construction (issue 24 item 7): whatever the SDK client was built
 * with, one lost response is exactly one request at the provider. Real SDK clients against a
 * loopback server that takes each request and drops the connection without answering (a lost
 * response, which every retry strategy counts as transient).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { PinpointSMSVoiceV2Client } from '@aws-sdk/client-pinpoint-sms-voice-v2';
import { SNSClient } from '@aws-sdk/client-sns';
import type { RetryErrorInfo, RetryStrategyV2, RetryToken } from '@smithy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../shared/domain/clock.js';
import type { SendOutcome } from '../../../shared/domain/provider.js';
import type { SendCommand } from '../../../shared/ports/sms-provider.js';
import { createEumProvider } from '../../../shared/providers/eum/index.js';
import {
  firstAttemptError,
  RetryRefusedError,
  refuseRetries,
} from '../../../shared/providers/single-attempt.js';
import { createSnsProvider } from '../../../shared/providers/sns/index.js';

/** A provider endpoint that takes every request and drops the connection unanswered; it counts them. */
interface LosingEndpoint {
  readonly url: string;
  readonly arrived: () => number;
  stop(): Promise<void>;
}

async function startLosingEndpoint(): Promise<LosingEndpoint> {
  let arrived = 0;
  const server: Server = createServer((request) => {
    arrived++;
    request.resume();
    request.on('end', () => request.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrived: () => arrived,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A strategy (SDK interface v2) that retries any error, without delay, up to `attempts` in all. */
function retryEverything(attempts: number): RetryStrategyV2 {
  const token = (count: number): RetryToken => ({ getRetryCount: () => count, getRetryDelay: () => 0 });
  return {
    acquireInitialRetryToken: async () => token(0),
    refreshRetryTokenForRetry: async (previous: RetryToken, _info: RetryErrorInfo) => {
      if (previous.getRetryCount() + 1 >= attempts) throw new Error('out of attempts');
      return token(previous.getRetryCount() + 1);
    },
    recordSuccess: () => undefined,
  };
}

/** A custom strategy of the SDK's older interface (`retry(next, args)`): it loops on any error. */
function legacyLoop(attempts: number) {
  return {
    mode: 'custom',
    retry: async <T>(next: (args: unknown) => Promise<T>, args: unknown): Promise<T> => {
      let last: unknown;
      for (let i = 0; i < attempts; i++) {
        try {
          return await next(args);
        } catch (error) {
          last = error;
        }
      }
      throw last;
    },
  };
}

const credentials = async () => ({ accessKeyId: 'local', secretAccessKey: 'local' });

/** Every way the composition or a caller could build the send client. */
const CLIENT_BUILDS: Record<string, Record<string, unknown>> = {
  'maxAttempts: 1 and a retryStrategy': { maxAttempts: 1, retryStrategy: retryEverything(3) },
  'a custom retryStrategy (v2 interface)': { retryStrategy: retryEverything(5) },
  'a custom retryStrategy (legacy retry loop)': { retryStrategy: legacyLoop(5) },
  'maxAttempts: 5': { maxAttempts: 5 },
  'the default (standard, 3 attempts)': {},
  'maxAttempts: 1 (the composition)': { maxAttempts: 1 },
};

const PROVIDERS: Record<
  string,
  (endpoint: string, build: Record<string, unknown>) => (c: SendCommand) => Promise<SendOutcome>
> = {
  eum: (endpoint, build) => {
    const provider = createEumProvider({
      client: new PinpointSMSVoiceV2Client({ endpoint, region: 'us-east-1', credentials, ...build }),
      originationIdentity: '+15005550006',
      configurationSetName: 'reset-notifier',
      clock: systemClock,
    });
    return (c) => provider.send(c);
  },
  sns: (endpoint, build) => {
    const provider = createSnsProvider({
      sns: new SNSClient({ endpoint, region: 'us-east-1', credentials, ...build }),
      logs: new CloudWatchLogsClient({ endpoint, region: 'us-east-1', credentials }),
      deliveryLogGroups: ['sns/us-east-1/111111111111/DirectPublishToPhoneNumber'],
      clock: systemClock,
    });
    return (c) => provider.send(c);
  },
};

function aCommand(): SendCommand {
  return {
    idempotencyKey: 'reset-1',
    attempt: 1,
    clientReference: 'reset-1#1',
    to: '+14155550123',
    body: 'Your code is 483920',
    validityPeriodSeconds: 300,
    // Far off: the outcome must come from the lost response, never from the deadline.
    deadline: systemClock.now() + 60_000,
  };
}

describe.each(Object.keys(PROVIDERS))(
  '%s: one lost response is one request, however the client is built',
  (name) => {
    let endpoint: LosingEndpoint;
    beforeEach(async () => {
      endpoint = await startLosingEndpoint();
    });
    afterEach(async () => {
      await endpoint.stop();
    });

    it.each(Object.keys(CLIENT_BUILDS))('%s', async (build) => {
      // Prepare
      const send = PROVIDERS[name]?.(endpoint.url, CLIENT_BUILDS[build] ?? {});

      // Act
      const outcome = await send?.(aCommand());

      // Assess: no second request ever left, and the first attempt's error is what is classified
      // (the SDK names a dropped socket TimeoutError; the message may exist): never the refusal.
      expect(endpoint.arrived()).toBe(1);
      expect(outcome).toMatchObject({ kind: 'unknown', detail: expect.stringMatching(/TimeoutError$/) });
    });
  },
);

describe('single-attempt guard', () => {
  it('is installed once however often a provider is built on the same client', () => {
    // Prepare
    const client = new SNSClient({ region: 'us-east-1', credentials });

    // Act
    refuseRetries(client);
    refuseRetries(client);

    // Assess
    expect(
      client.middlewareStack.identify().filter((entry) => entry.startsWith('resetNotifierSingleAttempt')),
    ).toHaveLength(1);
  });

  it('hands the first attempt error to classification, and the refusal itself when there was none', () => {
    // Prepare
    const lost = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

    // Act / Assess
    expect(firstAttemptError(new RetryRefusedError(lost))).toBe(lost);
    const bare = new RetryRefusedError(undefined);
    expect(firstAttemptError(bare)).toBe(bare);
    expect(bare.code).toBe('retry_refused');
  });
});
