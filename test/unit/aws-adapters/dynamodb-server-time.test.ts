import { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HttpResponse } from '@smithy/protocol-http';
import { describe, expect, it } from 'vitest';
import { DynamoNotificationStore } from '../../../shared/adapters/dynamodb/store.js';
import { ManualClock } from '../../support/manual-clock.js';

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: unknown;
  /** How long the answer takes, on the manual clock. */
  readonly takesMs?: number;
}

/** A store whose client talks to `answers` (one per request, in order) instead of DynamoDB. */
function aStoreAnswering(clock: ManualClock, answers: Answer[], sampling = true) {
  const client = new DynamoDBClient({
    region: 'eu-west-1',
    maxAttempts: 1,
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    requestHandler: {
      handle: async () => {
        const answer = answers.shift();
        if (!answer) throw new Error('no answer left');
        clock.advance(answer.takesMs ?? 0);
        const response = new HttpResponse({
          statusCode: answer.status,
          headers: { 'content-type': 'application/x-amz-json-1.0', ...answer.headers },
          body: Readable.from([Buffer.from(JSON.stringify(answer.body))]),
        });
        return { response };
      },
    },
  });
  return new DynamoNotificationStore({
    client,
    tableName: 't',
    evidenceRetentionDays: 400,
    ...(sampling ? { serverTimeClock: clock } : {}),
  });
}

const dateOf = (ms: number) => new Date(ms).toUTCString();

describe('DynamoNotificationStore: the server time of its answers (the Date header)', () => {
  it('samples the Date of an answer with our clock when the request left and when it came back', async () => {
    // Prepare
    const clock = new ManualClock(T0);
    const store = aStoreAnswering(clock, [
      { status: 200, headers: { Date: dateOf(T0 + 15_400) }, body: {}, takesMs: 30 },
    ]);
    // Act
    await store.get('k-1');
    // Assess
    expect(store.latestServerTime()).toEqual({ serverDate: T0 + 15_000, sentAt: T0, receivedAt: T0 + 30 });
  });

  it('samples an error answer too (a refused condition is the server speaking)', async () => {
    // Prepare
    const clock = new ManualClock(T0);
    const store = aStoreAnswering(clock, [
      {
        status: 400,
        headers: { date: dateOf(T0 - 20_000) },
        body: { __type: 'com.amazonaws.dynamodb.v20120810#ValidationException', message: 'bad' },
      },
    ]);
    // Act
    await store.get('k-1').catch(() => undefined);
    // Assess
    expect(store.latestServerTime()?.serverDate).toBe(T0 - 20_000);
  });

  it('keeps the last sample when an answer has no Date or an unreadable one', async () => {
    // Prepare
    const clock = new ManualClock(T0);
    const store = aStoreAnswering(clock, [
      { status: 200, headers: { date: dateOf(T0) }, body: {} },
      { status: 200, headers: {}, body: {} },
      { status: 200, headers: { date: 'yesterday' }, body: {} },
    ]);
    // Act
    for (let i = 0; i < 3; i++) await store.get('k-1');
    // Assess
    expect(store.latestServerTime()).toEqual({ serverDate: T0, sentAt: T0, receivedAt: T0 });
  });

  it('keeps a quick answer over a later slow one: a slow round trip bounds the clock loosely', async () => {
    // Prepare: the second answer took 3 s (a loaded store) and was stamped as it left
    const clock = new ManualClock(T0);
    const store = aStoreAnswering(clock, [
      { status: 200, headers: { date: dateOf(T0) }, body: {}, takesMs: 10 },
      { status: 200, headers: { date: dateOf(T0 + 3_000) }, body: {}, takesMs: 3_000 },
    ]);
    // Act
    await store.get('k-1');
    await store.get('k-1');
    // Assess
    expect(store.latestServerTime()).toEqual({ serverDate: T0, sentAt: T0, receivedAt: T0 + 10 });
  });

  it('samples nothing without a clock (the check is off)', async () => {
    // Prepare
    const clock = new ManualClock(T0);
    const store = aStoreAnswering(clock, [{ status: 200, headers: { date: dateOf(T0) }, body: {} }], false);
    // Act
    await store.get('k-1');
    // Assess
    expect(store.latestServerTime()).toBeUndefined();
  });
});
