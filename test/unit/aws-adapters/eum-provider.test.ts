import 'aws-sdk-client-mock-vitest/extend';
import {
  PinpointSMSVoiceV2Client,
  PutMessageFeedbackCommand,
  SendTextMessageCommand,
} from '@aws-sdk/client-pinpoint-sms-voice-v2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import { admissibleLookup } from '../../../shared/domain/provider.js';
import type { LookupRef, SendCommand } from '../../../shared/ports/sms-provider.js';
import {
  classifyEumSendError,
  createEumProvider,
  EUM_CAPABILITIES,
  EUM_CLIENT_CONFIG,
  type EumProviderOptions,
} from '../../../shared/providers/eum/index.js';
import { SINGLE_ATTEMPT_MIDDLEWARE } from '../../../shared/providers/single-attempt.js';
import { ManualClock } from '../../support/manual-clock.js';

const PHONE = '+14155550123';
const CODE = '483920';
const eum = mockClient(PinpointSMSVoiceV2Client);

function provider(clock: ManualClock, overrides: Partial<EumProviderOptions> = {}) {
  return createEumProvider({
    client: new PinpointSMSVoiceV2Client({ region: 'eu-west-1', ...EUM_CLIENT_CONFIG }),
    originationIdentity: 'pool-0123456789abcdef',
    configurationSetName: 'reset-notifier',
    clock,
    ...overrides,
  });
}

function command(clock: ManualClock, overrides: Partial<SendCommand> = {}): SendCommand {
  return {
    idempotencyKey: 'reset-1',
    attempt: 2,
    clientReference: 'reset-1#2',
    to: PHONE,
    body: `Your code is ${CODE}`,
    validityPeriodSeconds: 299.7,
    deadline: clock.now() + 5_000,
    ...overrides,
  };
}

/** An error as the SDK throws it (modelled fields are copied onto the error). */
function sdkError(name: string, fields: Record<string, unknown> = {}, status?: number): Error {
  return Object.assign(new Error(`${name} for ${PHONE}`), {
    name,
    ...fields,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
  });
}

beforeEach(() => eum.reset());

describe('End User Messaging provider: send', () => {
  it('sends a transactional SMS with TTL = remaining token life, the configuration set and our reference in Context', async () => {
    // Prepare
    const clock = new ManualClock();
    eum.on(SendTextMessageCommand).resolves({ MessageId: 'eum-msg-1' });

    // Act
    const outcome = await provider(clock, { maxPrice: '0.05', protectConfigurationId: 'protect-1' }).send(
      command(clock),
    );

    // Assess
    expect(outcome).toEqual({ kind: 'accepted', messageId: 'eum-msg-1' });
    expect(eum).toHaveReceivedCommandExactlyOnceWith(SendTextMessageCommand, {
      DestinationPhoneNumber: PHONE,
      OriginationIdentity: 'pool-0123456789abcdef',
      ConfigurationSetName: 'reset-notifier',
      MessageBody: `Your code is ${CODE}`,
      MessageType: 'TRANSACTIONAL',
      TimeToLive: 299,
      Context: { client_reference: 'reset-1#2' },
      MaxPrice: '0.05',
      ProtectConfigurationId: 'protect-1',
    });
  });

  it('caps TimeToLive at the API maximum (259200 s) and asks for feedback only when configured', async () => {
    const clock = new ManualClock();
    eum.on(SendTextMessageCommand).resolves({ MessageId: 'eum-msg-1' });
    await provider(clock, { messageFeedback: true }).send(
      command(clock, { validityPeriodSeconds: 10 * 86_400 }),
    );
    const input = eum.commandCalls(SendTextMessageCommand)[0]?.args[0].input;
    expect(input?.TimeToLive).toBe(259_200);
    expect(input?.MessageFeedbackEnabled).toBe(true);
    expect(input).not.toHaveProperty('MaxPrice');
  });

  it('makes no call when under 5 s of token life is left (the API minimum)', async () => {
    const clock = new ManualClock();
    const outcome = await provider(clock).send(command(clock, { validityPeriodSeconds: 4.9 }));
    expect(outcome).toEqual({ kind: 'not_sent_permanent', detail: 'eum:validity_below_minimum' });
    expect(eum).not.toHaveReceivedCommand(SendTextMessageCommand);
  });

  it('puts the single-attempt guard on any client it is given (retries configured or not: single-attempt.test.ts)', () => {
    const client = new PinpointSMSVoiceV2Client({ region: 'eu-west-1' });
    provider(new ManualClock(), { client });
    expect(client.middlewareStack.identify()).toContainEqual(
      expect.stringContaining(SINGLE_ATTEMPT_MIDDLEWARE),
    );
  });

  it('refuses to start without an origination identity or configuration set, or with a malformed price', () => {
    const clock = new ManualClock();
    expect(() => provider(clock, { originationIdentity: ' ' })).toThrow(InvalidConfigurationError);
    expect(() => provider(clock, { configurationSetName: '' })).toThrow(InvalidConfigurationError);
    expect(() => provider(clock, { maxPrice: 'cheap' })).toThrow(InvalidConfigurationError);
  });

  it('does not call once the deadline has passed, and gives up at the deadline when the SDK holds the request', async () => {
    const clock = new ManualClock();
    expect(await provider(clock).send(command(clock, { deadline: clock.now() }))).toEqual({
      kind: 'not_sent_retryable',
      detail: 'eum:deadline_passed',
    });
    // A mocked client never reaches the transport (no middleware runs): the request provably never
    // left. A service that hangs after the request left stays unknown (request-departure.test.ts).
    eum.on(SendTextMessageCommand).callsFake(() => new Promise(() => undefined));
    expect(await provider(clock).send(command(clock, { deadline: clock.now() + 20 }))).toEqual({
      kind: 'not_sent_retryable',
      detail: 'eum:deadline_before_departure',
    });
  });

  it.each([
    [
      'throttling',
      sdkError('ThrottlingException', {}, 400),
      'not_sent_retryable',
      'eum:throttled:ThrottlingException',
    ],
    [
      'a spend quota',
      sdkError('ServiceQuotaExceededException', { Reason: 'MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT' }, 402),
      'not_sent_retryable',
      'eum:quota:ServiceQuotaExceededException:MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT',
    ],
    [
      'a validation error',
      sdkError(
        'ValidationException',
        { Reason: 'INVALID_PARAMETER', Fields: [{ Name: 'x', Message: PHONE }] },
        400,
      ),
      'not_sent_permanent',
      'eum:validation:ValidationException:INVALID_PARAMETER',
    ],
    [
      'a price over MaxPrice',
      sdkError('ValidationException', { Reason: 'PRICE_OVER_THRESHOLD' }, 400),
      'not_sent_permanent',
      'eum:validation:ValidationException:PRICE_OVER_THRESHOLD',
    ],
    [
      'an opted-out destination',
      sdkError('ConflictException', { Reason: 'DESTINATION_PHONE_NUMBER_OPTED_OUT' }, 409),
      'not_sent_permanent',
      'eum:blocked_destination:ConflictException:DESTINATION_PHONE_NUMBER_OPTED_OUT',
    ],
    [
      'a country blocked by the protect configuration',
      sdkError('ConflictException', { Reason: 'DESTINATION_COUNTRY_BLOCKED_BY_PROTECT_CONFIGURATION' }, 409),
      'not_sent_permanent',
      'eum:blocked_destination:ConflictException:DESTINATION_COUNTRY_BLOCKED_BY_PROTECT_CONFIGURATION',
    ],
    [
      'an inactive resource of ours',
      sdkError('ConflictException', { Reason: 'RESOURCE_NOT_ACTIVE', ResourceType: 'phone-number' }, 409),
      'not_sent_retryable',
      'eum:configuration:ConflictException:RESOURCE_NOT_ACTIVE',
    ],
    [
      'a missing configuration set',
      sdkError('ResourceNotFoundException', { ResourceType: 'configuration-set' }, 404),
      'not_sent_retryable',
      'eum:configuration:ResourceNotFoundException',
    ],
    [
      'denied access',
      sdkError('AccessDeniedException', { Reason: 'ACCOUNT_DISABLED' }, 403),
      'not_sent_retryable',
      'eum:access:AccessDeniedException:ACCOUNT_DISABLED',
    ],
    [
      'an internal error',
      sdkError('InternalServerException', {}, 500),
      'unknown',
      'eum:server:InternalServerException',
    ],
    ['an unnamed 503', sdkError('Error', {}, 503), 'unknown', 'eum:server:http_503'],
    [
      'a reset connection',
      Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
      'unknown',
      'eum:transport:ECONNRESET',
    ],
    [
      'a refused connection',
      Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }),
      'not_sent_retryable',
      'eum:transport:ECONNREFUSED',
    ],
    ['something never seen', new Error('???'), 'unknown', 'eum:transport:unrecognised_error'],
  ])('classifies %s', async (_name, error, kind, detail) => {
    // Prepare
    const clock = new ManualClock();
    eum.on(SendTextMessageCommand).rejects(error);

    // Act
    const outcome = await provider(clock).send(command(clock));

    // Assess
    expect(outcome).toMatchObject({ kind, detail });
    expect(JSON.stringify(outcome)).not.toContain('4155550123');
    expect(JSON.stringify(outcome)).not.toContain(CODE);
  });

  it('never puts a message text into a detail, even from an odd error name', () => {
    const odd = Object.assign(new Error('x'), { name: `Bad ${PHONE}`, Reason: 'code 483920 here' });
    expect(classifyEumSendError(odd).detail).toBe('eum:transport:unrecognised_error');
  });
});

describe('End User Messaging provider: lookup and feedback', () => {
  const ref: LookupRef = {
    messageId: 'eum-msg-1',
    idempotencyKey: 'reset-1',
    attempt: 1,
    clientReference: 'reset-1#1',
    to: PHONE,
    secret: CODE,
    attemptStartedAt: 0,
    callDeadline: 5_000,
  };

  it('declares find-by-reference through events and no absence proof; lookups read nothing', async () => {
    const { messageId: _returnedId, ...withoutId } = ref;
    const outcome = await provider(new ManualClock()).lookup(withoutId);
    expect(EUM_CAPABILITIES).toEqual({ findBy: ['id', 'reference'], absenceProof: 'never', receipts: true });
    expect(outcome).toEqual({ kind: 'inconclusive', detail: 'eum:events_only' });
    // An id it returned proves acceptance, nothing more (read without any call).
    expect(await provider(new ManualClock()).lookup(ref)).toEqual({
      kind: 'found',
      messageId: 'eum-msg-1',
      status: 'sent',
    });
    expect(admissibleLookup({ kind: 'absent' }, EUM_CAPABILITIES).kind).toBe('inconclusive');
    expect(eum.calls()).toHaveLength(0);
  });

  it('records a confirmation with PutMessageFeedback RECEIVED, and reports a failure without throwing', async () => {
    eum
      .on(PutMessageFeedbackCommand)
      .resolvesOnce({ MessageId: 'eum-msg-1', MessageFeedbackStatus: 'RECEIVED' })
      .rejects(sdkError('ResourceNotFoundException', {}, 404));
    const subject = provider(new ManualClock());
    expect(await subject.confirm('eum-msg-1')).toEqual({ kind: 'recorded' });
    expect(await subject.confirm('eum-msg-2')).toEqual({
      kind: 'failed',
      detail: 'eum:configuration:ResourceNotFoundException',
    });
    expect(eum).toHaveReceivedCommandWith(PutMessageFeedbackCommand, {
      MessageId: 'eum-msg-1',
      MessageFeedbackStatus: 'RECEIVED',
    });
  });
});
