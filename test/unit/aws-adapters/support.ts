/** Fixture factories for the tests that drive the AWS adapters over the wire against the AWS simulator. */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { PinpointSMSVoiceV2Client } from '@aws-sdk/client-pinpoint-sms-voice-v2';
import { SNSClient } from '@aws-sdk/client-sns';
import type { RunningAwsSimulator } from '../../../local/simulator/aws/server.js';
import { systemClock } from '../../../shared/domain/clock.js';
import type { LookupRef, SendCommand } from '../../../shared/ports/sms-provider.js';
import {
  createEumProvider,
  EUM_CLIENT_CONFIG,
  type EumProviderOptions,
} from '../../../shared/providers/eum/index.js';
import { createSnsProvider, SNS_CLIENT_CONFIG } from '../../../shared/providers/sns/index.js';
import { localClient } from '../../support/aws-wire.js';

export const PHONE = '+14155550123';
export const CODE = '483920';

/**
 * Zero delays: outcomes and log lines exist at acceptance, so no test waits on a clock; and each
 * event once and in order (the simulator's default reorders and
 * duplicates events as SNS may: test/unit/aws-adapters/aws-simulator-honesty.test.ts covers that).
 */
export const AT_ONCE = {
  statusDelaysMs: { sent: 0, delivered: 0 },
  logLagMs: 0,
  eventReorderMs: 0,
  eventDuplicateShare: 0,
} as const;

/** A send of {@link CODE} to {@link PHONE}, attempt 1 of `reset-1`, with a 2 s call deadline. */
export function aSendCommand(overrides: Partial<SendCommand> = {}): SendCommand {
  return {
    idempotencyKey: 'reset-1',
    attempt: 1,
    clientReference: 'reset-1#1',
    to: PHONE,
    body: `Your code is ${CODE}`,
    validityPeriodSeconds: 300,
    deadline: Date.now() + 2_000,
    ...overrides,
  };
}

/** The lookup reference of {@link aSendCommand}'s attempt, read after its call deadline. */
export function aLookupRef(messageId?: string): LookupRef {
  return {
    ...(messageId === undefined ? {} : { messageId }),
    idempotencyKey: 'reset-1',
    attempt: 1,
    clientReference: 'reset-1#1',
    to: PHONE,
    secret: CODE,
    attemptStartedAt: Date.now() - 1_000,
    callDeadline: Date.now(),
  };
}

/** The SNS adapter through the real SDK clients, pointed at `sim`, reading its delivery-status logs. */
export function snsProvider(sim: RunningAwsSimulator) {
  return createSnsProvider({
    sns: new SNSClient({ ...localClient(sim.url), ...SNS_CLIENT_CONFIG }),
    logs: new CloudWatchLogsClient(localClient(sim.url)),
    deliveryLogGroups: [sim.logGroups.success, sim.logGroups.failure],
    clock: systemClock,
    batchWindowMs: 0,
  });
}

/** The End User Messaging adapter through the real SDK client, pointed at `sim`, as the stack configures it. */
export function eumProvider(sim: RunningAwsSimulator, overrides: Partial<EumProviderOptions> = {}) {
  return createEumProvider({
    client: new PinpointSMSVoiceV2Client({ ...localClient(sim.url), ...EUM_CLIENT_CONFIG }),
    originationIdentity: 'pool-local',
    configurationSetName: 'reset-notifier',
    clock: systemClock,
    ...overrides,
  });
}
