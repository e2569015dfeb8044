/**
 * A send whose deadline fires while the request is still inside the SDK (a cold-start credentials
 * fetch, signing) provably reached no provider: "not sent", never an unknown outcome that SNS or
 * End User Messaging could never settle. Real SDK clients against a loopback server, no mocks: the
 * departure mark is SDK middleware, which a mocked client would skip.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { PinpointSMSVoiceV2Client } from '@aws-sdk/client-pinpoint-sms-voice-v2';
import { SNSClient } from '@aws-sdk/client-sns';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SendOutcome } from '../../../shared/domain/provider.js';
import type { SendCommand } from '../../../shared/ports/sms-provider.js';
import { createEumProvider, EUM_CLIENT_CONFIG } from '../../../shared/providers/eum/index.js';
import { createSnsProvider, SNS_CLIENT_CONFIG } from '../../../shared/providers/sns/index.js';
import { ManualClock } from '../../support/manual-clock.js';

/** A provider endpoint that takes every request and never answers; it counts what arrived. */
interface SilentEndpoint {
  readonly url: string;
  readonly arrived: () => number;
  stop(): Promise<void>;
}

async function startSilentEndpoint(): Promise<SilentEndpoint> {
  let arrived = 0;
  const server: Server = createServer(() => {
    arrived++;
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

/** Credentials that arrive only when released: a cold-start fetch slower than the send's deadline. */
function slowCredentials() {
  let release: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    release = resolve;
  });
  const provider = async () => {
    await ready;
    return { accessKeyId: 'local', secretAccessKey: 'local' };
  };
  return { provider, release: () => release() };
}

const fastCredentials = async () => ({ accessKeyId: 'local', secretAccessKey: 'local' });

function aCommand(clock: ManualClock): SendCommand {
  return {
    idempotencyKey: 'reset-1',
    attempt: 1,
    clientReference: 'reset-1#1',
    to: '+14155550123',
    body: 'Your code is 483920',
    validityPeriodSeconds: 300,
    deadline: clock.now() + 50,
  };
}

type Credentials = typeof fastCredentials;

const providers: Record<
  string,
  (endpoint: string, credentials: Credentials, clock: ManualClock) => (c: SendCommand) => Promise<SendOutcome>
> = {
  sns: (endpoint, credentials, clock) => {
    const config = { endpoint, region: 'us-east-1', credentials, ...SNS_CLIENT_CONFIG };
    const sns = createSnsProvider({
      sns: new SNSClient(config),
      logs: new CloudWatchLogsClient({ endpoint, region: 'us-east-1', credentials }),
      deliveryLogGroups: ['sns/us-east-1/111111111111/DirectPublishToPhoneNumber'],
      clock,
    });
    return (c) => sns.send(c);
  },
  eum: (endpoint, credentials, clock) => {
    const eum = createEumProvider({
      client: new PinpointSMSVoiceV2Client({
        endpoint,
        region: 'us-east-1',
        credentials,
        ...EUM_CLIENT_CONFIG,
      }),
      originationIdentity: '+15005550006',
      configurationSetName: 'reset-notifier',
      clock,
    });
    return (c) => eum.send(c);
  },
};

describe.each(Object.keys(providers))('%s: a request the deadline caught before it left', (name) => {
  let endpoint: SilentEndpoint;
  beforeEach(async () => {
    endpoint = await startSilentEndpoint();
  });
  afterEach(async () => {
    await endpoint.stop();
  });

  it('is not sent (retryable), and never leaves afterwards', async () => {
    // Prepare: the credentials arrive only after the deadline.
    const clock = new ManualClock();
    const credentials = slowCredentials();
    const send = providers[name]?.(endpoint.url, credentials.provider, clock);

    // Act
    const outcome = await send?.(aCommand(clock));
    credentials.release();
    // Readiness: once a second, fast send has arrived, the first would have too had it left. The
    // probe's deadline is far off, so a loaded machine cannot make it give up before it arrives.
    const probe = providers[name]?.(endpoint.url, fastCredentials, clock);
    const probed = probe?.({ ...aCommand(clock), deadline: clock.now() + 600_000 });
    while (endpoint.arrived() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await endpoint.stop();
    await probed;

    // Assess
    expect(outcome).toEqual({ kind: 'not_sent_retryable', detail: `${name}:deadline_before_departure` });
    expect(endpoint.arrived()).toBe(1);
  });

  it('stays an unknown outcome once the request may have left', async () => {
    // Prepare
    const clock = new ManualClock();
    const send = providers[name]?.(endpoint.url, fastCredentials, clock);

    // Act
    const outcome = await send?.(aCommand(clock));

    // Assess
    expect(outcome).toEqual({ kind: 'unknown', detail: `${name}:deadline_reached`, timedOut: true });
  });
});
