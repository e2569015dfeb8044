import 'aws-sdk-client-mock-vitest/extend';
import {
  CloudWatchLogsClient,
  FilterLogEventsCommand,
  type FilterLogEventsCommandInput,
} from '@aws-sdk/client-cloudwatch-logs';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { applyLookup } from '../../../shared/domain/dispatch.js';
import { AbsenceProof } from '../../../shared/domain/provider.js';
import type { LookupRef, SendCommand } from '../../../shared/ports/sms-provider.js';
import { SINGLE_ATTEMPT_MIDDLEWARE } from '../../../shared/providers/single-attempt.js';
import {
  chunkForPatterns,
  createSnsProvider,
  MAX_FILTER_PATTERN_CHARS,
  messageIdPattern,
  SNS_CARRIER_ACCEPTED_DETAIL,
  SNS_CLIENT_CONFIG,
} from '../../../shared/providers/sns/index.js';
import { ManualClock } from '../../support/manual-clock.js';
import { anUnknownRecord, aPolicy, aSentRecord, MINUTE, T0 } from '../domain/fixtures.js';

const PHONE = '+14155550123';
const OTHER_PHONE = '+14155550999';
const SUCCESS_GROUP = 'sns/eu-west-1/111111111111/DirectPublishToPhoneNumber';
const FAILURE_GROUP = `${SUCCESS_GROUP}/Failure`;

const sns = mockClient(SNSClient);
const logs = mockClient(CloudWatchLogsClient);

function provider(
  clock: ManualClock,
  options: {
    senderId?: string;
    snsClient?: SNSClient;
    sleep?: (ms: number) => Promise<void>;
    logsCallTimeoutMs?: number;
  } = {},
) {
  return createSnsProvider({
    sns: options.snsClient ?? new SNSClient({ region: 'eu-west-1', ...SNS_CLIENT_CONFIG }),
    logs: new CloudWatchLogsClient({ region: 'eu-west-1' }),
    deliveryLogGroups: [SUCCESS_GROUP, FAILURE_GROUP],
    clock,
    // The batch window closes when the current tick's lookups have queued (no wall-clock wait).
    defer: (run) => queueMicrotask(run),
    sleep: options.sleep ?? (async (ms) => clock.advance(ms)),
    ...(options.senderId === undefined ? {} : { senderId: options.senderId }),
    ...(options.logsCallTimeoutMs === undefined ? {} : { logsCallTimeoutMs: options.logsCallTimeoutMs }),
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

  it('puts the single-attempt guard on any client it is given (a retry after a lost response sends twice: single-attempt.test.ts)', () => {
    const snsClient = new SNSClient({ region: 'eu-west-1' });
    provider(new ManualClock(), { snsClient });
    expect(snsClient.middlewareStack.identify()).toContainEqual(
      expect.stringContaining(SINGLE_ATTEMPT_MIDDLEWARE),
    );
  });

  it('does not call SNS once the deadline has passed', async () => {
    const clock = new ManualClock();
    const outcome = await provider(clock).send(command(clock, { deadline: clock.now() }));
    expect(outcome).toEqual({ kind: 'not_sent_retryable', detail: 'sns:deadline_passed' });
    expect(sns).not.toHaveReceivedCommand(PublishCommand);
  });

  it('gives up at the deadline, not sent, when the SDK never hands the request over', async () => {
    // Prepare: the mocked client never reaches the transport (no middleware runs), so the request
    // provably never left; a service that hangs after it left stays unknown
    // (request-departure.test.ts). The deadline is 30 ms away.
    const clock = new ManualClock();
    sns.on(PublishCommand).callsFake(() => new Promise(() => undefined));

    // Act
    const started = Date.now();
    const outcome = await provider(clock).send(command(clock, { deadline: clock.now() + 30 }));

    // Assess
    expect(outcome).toEqual({ kind: 'not_sent_retryable', detail: 'sns:deadline_before_departure' });
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

describe('SNS provider: lookup in the delivery-status logs (by exact message id only)', () => {
  let clock: ManualClock;
  let startedAt: number;
  beforeEach(() => {
    clock = new ManualClock();
    startedAt = clock.now();
  });
  const ref = (overrides: Partial<LookupRef> = {}): LookupRef => ({
    idempotencyKey: 'reset-1',
    attempt: 1,
    clientReference: 'reset-1#1',
    to: PHONE,
    secret: '123456',
    attemptStartedAt: startedAt,
    callDeadline: startedAt + 5_000,
    ...overrides,
  });
  const eventsIn = (group: string, ...messages: string[]) =>
    logs
      .on(FilterLogEventsCommand, { logGroupName: group })
      .resolves({ events: messages.map((message) => ({ message })) });
  const requests = () =>
    logs.commandCalls(FilterLogEventsCommand).map((c) => c.args[0].input as FilterLogEventsCommandInput);

  it('finds a carrier-accepted message (SUCCESS: sent with its own reason, never delivered) with one exact-id filter per group, never sending the number', async () => {
    // Prepare
    eventsIn(SUCCESS_GROUP, logLine('msg-1', PHONE, 'SUCCESS', startedAt + 1_000));
    eventsIn(FAILURE_GROUP);
    clock.advance(60_000);

    // Act
    const outcome = await provider(clock).lookup(ref({ messageId: 'msg-1' }));

    // Assess
    expect(outcome).toEqual({
      kind: 'found',
      messageId: 'msg-1',
      status: 'sent',
      detail: SNS_CARRIER_ACCEPTED_DETAIL,
    });
    expect(SNS_CARRIER_ACCEPTED_DETAIL).toBe('sns:status:SUCCESS');
    expect(requests()).toHaveLength(2);
    expect(requests()[0]).toMatchObject({
      logGroupName: SUCCESS_GROUP,
      filterPattern: '{ ($.notification.messageId = "msg-1") }',
      startTime: startedAt - 60_000,
    });
    expect(JSON.stringify(requests())).not.toContain('4155550123');
  });

  it('a SUCCESS line makes an unknown outcome sent with its own reason, and leaves a sent record sent (never delivered)', async () => {
    // Prepare
    eventsIn(SUCCESS_GROUP, logLine('msg-1', PHONE, 'SUCCESS', startedAt + 1_000));
    eventsIn(FAILURE_GROUP);
    clock.advance(60_000);
    const found = await provider(clock).lookup(ref({ messageId: 'msg-1' }));
    const capabilities = { absenceProof: AbsenceProof.never };
    const sns = { name: 'sns', messageId: 'msg-1' };

    // Act
    const unknown = applyLookup(
      anUnknownRecord({ provider: sns }),
      found,
      T0 + MINUTE,
      aPolicy(),
      capabilities,
    );
    const sent = applyLookup(aSentRecord({ provider: sns }), found, T0 + MINUTE, aPolicy(), capabilities);

    // Assess
    expect(unknown).toMatchObject({
      to: 'sent',
      reason: 'reconciled_found',
      reasonDetail: 'sns:status:SUCCESS',
    });
    expect(sent).toMatchObject({ kind: 'reschedule' });
  });

  it('finds an undelivered message in the failure group', async () => {
    eventsIn(SUCCESS_GROUP);
    eventsIn(FAILURE_GROUP, logLine('msg-1', PHONE, 'FAILURE', startedAt + 1_000));
    expect(await provider(clock).lookup(ref({ messageId: 'msg-1' }))).toEqual({
      kind: 'found',
      messageId: 'msg-1',
      status: 'undelivered',
    });
  });

  it('reports a message SNS accepted but never logged as sent, however long ago: the id proves it exists', async () => {
    // Prepare: sampled or late logs; the failure group does not exist yet.
    eventsIn(SUCCESS_GROUP);
    logs
      .on(FilterLogEventsCommand, { logGroupName: FAILURE_GROUP })
      .rejects(sdkError('ResourceNotFoundException', 400));
    clock.advance(6 * 3_600_000);

    // Act
    const outcome = await provider(clock).lookup(ref({ messageId: 'msg-1' }));

    // Assess
    expect(outcome).toEqual({ kind: 'found', messageId: 'msg-1', status: 'sent' });
  });

  it('never attributes a line to the message by number or time: without an id it is inconclusive and reads nothing', async () => {
    // Prepare: exactly the misattribution case, one line to this number in the attempt's window.
    eventsIn(SUCCESS_GROUP, logLine('msg-of-another-command', PHONE, 'SUCCESS', startedAt + 1_000));
    eventsIn(FAILURE_GROUP);
    clock.advance(3_600_000);

    // Act
    const outcome = await provider(clock).lookup(ref());

    // Assess
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'sns:no_message_id' });
    expect(requests()).toHaveLength(0);
  });

  it('never counts a line whose id is not the one asked for, even if the service returns it', async () => {
    eventsIn(SUCCESS_GROUP, logLine('msg-2', PHONE, 'SUCCESS', startedAt + 1_000));
    eventsIn(FAILURE_GROUP, logLine('msg-2', PHONE, 'FAILURE', startedAt + 1_000));
    expect(await provider(clock).lookup(ref({ messageId: 'msg-1' }))).toEqual({
      kind: 'found',
      messageId: 'msg-1',
      status: 'sent',
    });
  });

  it('batches the lookups of one pass into one read per group', async () => {
    // Prepare
    eventsIn(
      SUCCESS_GROUP,
      logLine('msg-1', PHONE, 'SUCCESS', startedAt + 1_000),
      logLine('msg-3', OTHER_PHONE, 'SUCCESS', startedAt + 1_000),
    );
    eventsIn(FAILURE_GROUP, logLine('msg-2', OTHER_PHONE, 'FAILURE', startedAt + 1_000));
    const subject = provider(clock);

    // Act
    const outcomes = await Promise.all(
      ['msg-1', 'msg-2', 'msg-3', 'msg-4'].map((messageId) => subject.lookup(ref({ messageId }))),
    );

    // Assess
    expect(outcomes.map((o) => (o.kind === 'found' ? `${o.status} ${o.detail ?? '-'}` : o.kind))).toEqual([
      'sent sns:status:SUCCESS',
      'undelivered -',
      'sent sns:status:SUCCESS',
      'sent -',
    ]);
    expect(requests().map((r) => r.logGroupName)).toEqual([SUCCESS_GROUP, FAILURE_GROUP]);
    expect(requests()[0]?.filterPattern).toBe(messageIdPattern(['msg-1', 'msg-2', 'msg-3', 'msg-4']));
  });

  it('lookups that arrive one by one while a read is in flight share the next read', async () => {
    // Prepare: the first read's answer waits until released.
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    logs.on(FilterLogEventsCommand).callsFake(async () => {
      calls += 1;
      if (calls === 1) await gate;
      return { events: [] };
    });
    const subject = provider(clock);
    const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

    // Act: one lookup starts a read; eight more arrive one tick apart while it is held.
    const first = subject.lookup(ref({ messageId: 'msg-0' }));
    await tick();
    const later: Promise<unknown>[] = [];
    for (let i = 1; i <= 8; i += 1) {
      later.push(subject.lookup(ref({ messageId: `msg-${i}` })));
      await tick();
    }
    release();
    await Promise.all([first, ...later]);

    // Assess: two reads (two groups each), the second carrying all eight ids
    expect(requests()).toHaveLength(4);
    expect(requests()[2]?.filterPattern).toBe(
      messageIdPattern(Array.from({ length: 8 }, (_, i) => `msg-${i + 1}`)),
    );
  });

  it('keeps FilterLogEvents under 5 calls per second per account (4 in any second)', async () => {
    // Prepare: the sleep moves the manual clock, and the call times are recorded on it.
    eventsIn(SUCCESS_GROUP);
    eventsIn(FAILURE_GROUP);
    const callTimes: number[] = [];
    logs.on(FilterLogEventsCommand).callsFake(() => {
      callTimes.push(clock.now());
      return { events: [] };
    });
    const subject = provider(clock, { sleep: async (ms) => clock.advance(ms) });

    // Act: 10 passes back to back, two groups each.
    for (let pass = 0; pass < 10; pass += 1) {
      await subject.lookupMany([ref({ messageId: `msg-${pass}` })]);
    }

    // Assess
    expect(callTimes).toHaveLength(20);
    for (const [index, at] of callTimes.entries()) {
      const inWindow = callTimes.filter((t) => t >= at && t < at + 1_000);
      expect(inWindow.length, `window starting at call ${index}`).toBeLessThanOrEqual(4);
    }
  });

  it('still answers found (never absent) when CloudWatch Logs throttles or fails', async () => {
    logs.on(FilterLogEventsCommand).rejects(sdkError('ThrottlingException', 400));
    expect(await provider(clock).lookup(ref({ messageId: 'msg-1' }))).toEqual({
      kind: 'found',
      messageId: 'msg-1',
      status: 'sent',
    });
  });

  it('gives up on a FilterLogEvents call that is never answered, and still answers found', async () => {
    // Prepare: CloudWatch Logs holds every call (a hung connection); the call deadline is 30 ms.
    logs.on(FilterLogEventsCommand).callsFake(() => new Promise(() => undefined));
    // Act
    const started = Date.now();
    const outcome = await provider(clock, { logsCallTimeoutMs: 30 }).lookup(ref({ messageId: 'msg-1' }));
    // Assess: the id proves the message exists; the hung read costs the deadline, not the worker.
    expect(outcome).toEqual({ kind: 'found', messageId: 'msg-1', status: 'sent' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('follows pages of one read', async () => {
    logs
      .on(FilterLogEventsCommand, { logGroupName: SUCCESS_GROUP })
      .resolvesOnce({ events: [{ message: 'not json' }], nextToken: 'page-2' })
      .resolves({ events: [{ message: logLine('msg-1', PHONE, 'SUCCESS', startedAt + 1_000) }] });
    eventsIn(FAILURE_GROUP);
    expect(await provider(clock).lookup(ref({ messageId: 'msg-1' }))).toEqual({
      kind: 'found',
      messageId: 'msg-1',
      status: 'sent',
      detail: SNS_CARRIER_ACCEPTED_DETAIL,
    });
  });

  it('splits many ids into filter patterns that fit the 1024-character limit', () => {
    const ids = Array.from(
      { length: 100 },
      (_, i) => `0a1b2c3d-${String(i).padStart(4, '0')}-5f6a-7b8c-9d0e1f2a3b4c`,
    );
    const chunks = chunkForPatterns(ids);
    expect(chunks.flat()).toEqual(ids);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks)
      expect(messageIdPattern(chunk).length).toBeLessThanOrEqual(MAX_FILTER_PATTERN_CHARS);
  });
});
