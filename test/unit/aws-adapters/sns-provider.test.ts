import 'aws-sdk-client-mock-vitest/extend';
import {
  CloudWatchLogsClient,
  FilterLogEventsCommand,
  type FilterLogEventsCommandInput,
} from '@aws-sdk/client-cloudwatch-logs';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/domain/clock.js';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import type { LookupRef, SendCommand } from '../../../shared/domain/provider.js';
import { createSnsProvider, SNS_CLIENT_CONFIG } from '../../../shared/providers/sns/index.js';

const PHONE = '+14155550123';
const OTHER_PHONE = '+14155550999';
const SUCCESS_GROUP = 'sns/eu-west-1/111111111111/DirectPublishToPhoneNumber';
const FAILURE_GROUP = `${SUCCESS_GROUP}/Failure`;
const fingerprinter = createFingerprinter(new Uint8Array(32).fill(7));

const sns = mockClient(SNSClient);
const logs = mockClient(CloudWatchLogsClient);

function provider(clock: ManualClock, options: { senderId?: string; snsClient?: SNSClient } = {}) {
  return createSnsProvider({
    sns: options.snsClient ?? new SNSClient({ region: 'eu-west-1', ...SNS_CLIENT_CONFIG }),
    logs: new CloudWatchLogsClient({ region: 'eu-west-1' }),
    deliveryLogGroups: [SUCCESS_GROUP, FAILURE_GROUP],
    fingerprint: (e164) => fingerprinter.destination(e164),
    clock,
    ...(options.senderId === undefined ? {} : { senderId: options.senderId }),
  });
}

function command(clock: ManualClock, overrides: Partial<SendCommand> = {}): SendCommand {
  return {
    idempotencyKey: 'reset-1',
    attempt: 1,
    clientReference: 'reset-1#1',
    to: PHONE,
    body: 'Your code is 483920',
    validityPeriodSeconds: 300,
    deadline: clock.now() + 5_000,
    ...overrides,
  };
}

/** An error as the SDK throws it. */
function sdkError(name: string, status?: number, code?: string): Error {
  return Object.assign(new Error(`${name} happened`), {
    name,
    ...(code === undefined ? {} : { code }),
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
  });
}

/** A delivery-status log line as SNS writes it. */
function logLine(
  messageId: string,
  destination: string,
  status: 'SUCCESS' | 'FAILURE',
  publishedAt: number,
): string {
  const timestamp = new Date(publishedAt).toISOString().replace('T', ' ').replace('Z', '');
  return JSON.stringify({
    notification: { messageId, timestamp },
    delivery: {
      destination,
      smsType: 'Transactional',
      providerResponse: 'Message has been accepted by phone carrier',
    },
    status,
  });
}

beforeEach(() => {
  sns.reset();
  logs.reset();
});

describe('SNS provider: send', () => {
  it('publishes to the phone number as a transactional SMS and returns the message id', async () => {
    // Prepare
    const clock = new ManualClock();
    sns.on(PublishCommand).resolves({ MessageId: 'msg-1' });

    // Act
    const outcome = await provider(clock, { senderId: 'ResetCode' }).send(command(clock));

    // Assess
    expect(outcome).toEqual({ kind: 'accepted', messageId: 'msg-1' });
    expect(sns).toHaveReceivedCommandExactlyOnceWith(PublishCommand, {
      PhoneNumber: PHONE,
      Message: 'Your code is 483920',
      MessageAttributes: {
        'AWS.SNS.SMS.SMSType': { DataType: 'String', StringValue: 'Transactional' },
        'AWS.SNS.SMS.SenderID': { DataType: 'String', StringValue: 'ResetCode' },
      },
    });
  });

  it('refuses a client that retries by itself (a retry after a lost response sends twice)', async () => {
    const clock = new ManualClock();
    const retrying = provider(clock, { snsClient: new SNSClient({ region: 'eu-west-1' }) });
    await expect(retrying.send(command(clock))).rejects.toBeInstanceOf(InvalidConfigurationError);
    expect(sns).not.toHaveReceivedCommand(PublishCommand);
  });

  it('does not call SNS once the deadline has passed', async () => {
    const clock = new ManualClock();
    const outcome = await provider(clock).send(command(clock, { deadline: clock.now() }));
    expect(outcome).toEqual({ kind: 'not_sent_retryable', detail: 'sns:deadline_passed' });
    expect(sns).not.toHaveReceivedCommand(PublishCommand);
  });

  it('gives up at the deadline with an unknown, timed-out outcome when SNS does not answer', async () => {
    // Prepare: SNS hangs; the deadline is 30 ms away.
    const clock = new ManualClock();
    sns.on(PublishCommand).callsFake(() => new Promise(() => undefined));

    // Act
    const started = Date.now();
    const outcome = await provider(clock).send(command(clock, { deadline: clock.now() + 30 }));

    // Assess
    expect(outcome).toEqual({ kind: 'unknown', detail: 'sns:deadline_reached', timedOut: true });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it.each([
    ['throttling', sdkError('ThrottledException', 400), 'not_sent_retryable'],
    ['an invalid phone number', sdkError('InvalidParameterException', 400), 'not_sent_permanent'],
    ['an opted-out number', sdkError('OptedOutException', 400), 'not_sent_permanent'],
    ['missing permission', sdkError('AuthorizationErrorException', 403), 'not_sent_retryable'],
    ['an internal error', sdkError('InternalErrorException', 500), 'unknown'],
    ['a connection reset mid-request', sdkError('Error', undefined, 'ECONNRESET'), 'unknown'],
    ['a refused connection', sdkError('Error', undefined, 'ECONNREFUSED'), 'not_sent_retryable'],
    ['an unnamed 503', sdkError('Error', 503), 'unknown'],
    ['an unnamed 429', sdkError('Error', 429), 'not_sent_retryable'],
    ['an SDK timeout', sdkError('TimeoutError'), 'unknown'],
    ['something never seen before', new Error('???'), 'unknown'],
  ])('classifies %s', async (_name, error, kind) => {
    // Prepare
    const clock = new ManualClock();
    sns.on(PublishCommand).rejects(error);

    // Act
    const outcome = await provider(clock).send(command(clock));

    // Assess
    expect(outcome.kind).toBe(kind);
    expect(JSON.stringify(outcome)).not.toContain('4155550123');
    expect(JSON.stringify(outcome)).not.toContain('483920');
  });

  it('reports SDK timeouts as timed out', async () => {
    const clock = new ManualClock();
    sns.on(PublishCommand).rejects(sdkError('TimeoutError'));
    expect(await provider(clock).send(command(clock))).toEqual({
      kind: 'unknown',
      detail: 'sns:TimeoutError',
      timedOut: true,
    });
  });

  it('treats an answer without a message id as unknown', async () => {
    const clock = new ManualClock();
    sns.on(PublishCommand).resolves({});
    expect((await provider(clock).send(command(clock))).kind).toBe('unknown');
  });
});

describe('SNS provider: lookup in the delivery-status logs', () => {
  let clock: ManualClock;
  let notBefore: number;
  beforeEach(() => {
    clock = new ManualClock();
    notBefore = clock.now();
  });
  const ref = (overrides: Partial<LookupRef> = {}): LookupRef => ({
    idempotencyKey: 'reset-1',
    attempt: 1,
    clientReference: 'reset-1#1',
    to: PHONE,
    secret: '123456',
    attemptStartedAt: notBefore,
    callDeadline: notBefore + 5_000,
    ...overrides,
  });
  const eventsIn = (group: string, ...messages: string[]) =>
    logs
      .on(FilterLogEventsCommand, { logGroupName: group })
      .resolves({ events: messages.map((message) => ({ message })) });
  const requests = () =>
    logs.commandCalls(FilterLogEventsCommand).map((c) => c.args[0].input as FilterLogEventsCommandInput);

  describe('by message id', () => {
    it('finds a delivered message', async () => {
      // Prepare
      eventsIn(SUCCESS_GROUP, logLine('msg-1', PHONE, 'SUCCESS', notBefore + 1_000));
      eventsIn(FAILURE_GROUP);
      clock.advance(60_000);

      // Act
      const outcome = await provider(clock).lookup(ref({ messageId: 'msg-1' }));

      // Assess
      expect(outcome).toEqual({ kind: 'found', messageId: 'msg-1', status: 'delivered' });
      expect(requests()[0]).toMatchObject({
        logGroupName: SUCCESS_GROUP,
        filterPattern: '{ $.notification.messageId = "msg-1" }',
        startTime: notBefore - 60_000,
      });
    });

    it('finds an undelivered message in the failure group', async () => {
      eventsIn(SUCCESS_GROUP);
      eventsIn(FAILURE_GROUP, logLine('msg-1', PHONE, 'FAILURE', notBefore + 1_000));
      expect(await provider(clock).lookup(ref({ messageId: 'msg-1' }))).toEqual({
        kind: 'found',
        messageId: 'msg-1',
        status: 'undelivered',
      });
    });

    it('reports a message SNS accepted but has not logged yet as sent (it exists)', async () => {
      eventsIn(SUCCESS_GROUP);
      logs
        .on(FilterLogEventsCommand, { logGroupName: FAILURE_GROUP })
        .rejects(sdkError('ResourceNotFoundException', 400));
      expect(await provider(clock).lookup(ref({ messageId: 'msg-1' }))).toEqual({
        kind: 'found',
        messageId: 'msg-1',
        status: 'sent',
      });
    });
  });

  describe('by destination and time window (no id came back)', () => {
    it('matches on the fingerprint of the destination, never sending the number to CloudWatch Logs', async () => {
      // Prepare
      eventsIn(
        SUCCESS_GROUP,
        logLine('msg-other', OTHER_PHONE, 'SUCCESS', notBefore + 500),
        logLine('msg-ours', PHONE, 'SUCCESS', notBefore + 1_000),
      );
      eventsIn(FAILURE_GROUP);
      clock.advance(60_000);

      // Act
      const outcome = await provider(clock).lookup(ref());

      // Assess
      expect(outcome).toEqual({ kind: 'found', messageId: 'msg-ours', status: 'delivered' });
      expect(requests().map((r) => r.logGroupName)).toEqual([SUCCESS_GROUP, FAILURE_GROUP]);
      expect(JSON.stringify(requests())).not.toContain('4155550123');
      expect(JSON.stringify(outcome)).not.toContain('4155550123');
    });

    it('ignores messages to the same number from before the attempt', async () => {
      eventsIn(SUCCESS_GROUP, logLine('msg-old', PHONE, 'SUCCESS', notBefore - 10 * 60_000));
      eventsIn(FAILURE_GROUP);
      clock.advance(20 * 60_000);
      expect(await provider(clock).lookup(ref())).toEqual({ kind: 'absent' });
    });

    it('is inconclusive when two messages to the number fall in the window', async () => {
      eventsIn(SUCCESS_GROUP, logLine('msg-a', PHONE, 'SUCCESS', notBefore + 1_000));
      eventsIn(FAILURE_GROUP, logLine('msg-b', PHONE, 'FAILURE', notBefore + 2_000));
      clock.advance(20 * 60_000);
      expect(await provider(clock).lookup(ref())).toEqual({
        kind: 'inconclusive',
        detail: 'sns:ambiguous_destination_match',
      });
    });

    it('reports absent only after the logs had time to settle', async () => {
      // Prepare
      eventsIn(SUCCESS_GROUP);
      eventsIn(FAILURE_GROUP);
      const subject = provider(clock);

      // Act
      clock.advance(9 * 60_000);
      const early = await subject.lookup(ref());
      clock.advance(60_000);
      const settled = await subject.lookup(ref());

      // Assess
      expect(early).toEqual({ kind: 'inconclusive', detail: 'sns:delivery_logs_settling' });
      expect(settled).toEqual({ kind: 'absent' });
    });

    it('takes a missing failure group as "no failures yet", a missing success group as "cannot tell"', async () => {
      // Prepare
      clock.advance(20 * 60_000);
      eventsIn(SUCCESS_GROUP);
      logs
        .on(FilterLogEventsCommand, { logGroupName: FAILURE_GROUP })
        .rejects(sdkError('ResourceNotFoundException', 400));

      // Act
      const failureGroupMissing = await provider(clock).lookup(ref());
      logs.reset();
      logs
        .on(FilterLogEventsCommand, { logGroupName: SUCCESS_GROUP })
        .rejects(sdkError('ResourceNotFoundException', 400));
      eventsIn(FAILURE_GROUP);
      const successGroupMissing = await provider(clock).lookup(ref());

      // Assess
      expect(failureGroupMissing).toEqual({ kind: 'absent' });
      expect(successGroupMissing).toEqual({ kind: 'inconclusive', detail: 'sns:delivery_log_group_missing' });
    });

    it('follows pages, and is inconclusive when CloudWatch Logs fails', async () => {
      // Prepare
      clock.advance(20 * 60_000);
      logs
        .on(FilterLogEventsCommand, { logGroupName: SUCCESS_GROUP })
        .resolvesOnce({ events: [{ message: 'not json' }], nextToken: 'page-2' })
        .resolves({ events: [{ message: logLine('msg-ours', PHONE, 'SUCCESS', notBefore + 1_000) }] });
      eventsIn(FAILURE_GROUP);

      // Act
      const paged = await provider(clock).lookup(ref());
      logs.reset();
      logs.on(FilterLogEventsCommand).rejects(sdkError('ThrottlingException', 400));
      const throttled = await provider(clock).lookup(ref());

      // Assess
      expect(paged).toEqual({ kind: 'found', messageId: 'msg-ours', status: 'delivered' });
      expect(throttled).toEqual({ kind: 'inconclusive', detail: 'sns:logs_ThrottlingException' });
    });
  });
});
