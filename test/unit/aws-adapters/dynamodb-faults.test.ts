import 'aws-sdk-client-mock-vitest/extend';
import {
  DynamoDBClient,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError, StoreWriteError } from '../../../shared/adapters/dynamodb/errors.js';
import { DynamoNotificationStore } from '../../../shared/adapters/dynamodb/store.js';
import { admit, type NotificationRecord } from '../../../shared/domain/notification.js';
import { transientFaultOf } from '../../../shared/ports/faults.js';

const meta = { $metadata: {} };
const throttled = () =>
  new ProvisionedThroughputExceededException({ message: 'throughput exceeded', ...meta });

/** A fresh command record and its admission evidence. */
function anAdmission() {
  const now = Date.UTC(2026, 10, 29, 12);
  return admit({
    request: {
      idempotencyKey: 'k-1',
      eventId: 'evt-1',
      channel: 'sms',
      template: 'password_reset',
      locale: 'en',
      expiresAt: now + 600_000,
      sensitive: { phone: '+14155550123', params: { code: '483920' } },
    },
    destinationFingerprint: 'fp',
    payloadFingerprint: 'pf',
    providerName: 'simulator',
    now,
    safetyNetAt: now + 300_000,
  });
}

describe('DynamoDB store: transient faults are StoreUnavailableError (HTTP 503), bugs are not', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const store = () =>
    new DynamoNotificationStore({
      client: new DynamoDBClient({ region: 'eu-west-1', maxAttempts: 1 }),
      tableName: 't',
      evidenceRetentionDays: 400,
    });
  beforeEach(() => {
    ddb.reset();
  });

  it.each<[string, () => Error]>([
    ['ProvisionedThroughputExceeded', throttled],
    [
      'ThrottlingException',
      () => Object.assign(new Error('slow down'), { name: 'ThrottlingException', ...meta }),
    ],
    ['RequestLimitExceeded', () => new RequestLimitExceeded({ message: 'account limit', ...meta })],
    ['TransactionConflict', () => new TransactionConflictException({ message: 'in a transaction', ...meta })],
    ['InternalServerError (5xx)', () => new InternalServerError({ message: 'oops', ...meta })],
    [
      'a bare HTTP 503',
      () => Object.assign(new Error('unavailable'), { name: 'Unknown', $metadata: { httpStatusCode: 503 } }),
    ],
    ['a timeout', () => Object.assign(new Error('timed out'), { name: 'TimeoutError' })],
    ['a reset connection', () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
  ])('admission: %s -> StoreUnavailableError with a Retry-After', async (_name, fault) => {
    // Prepare
    // Admission is one transaction (command, event guard, counters); a re-read finds no write of ours.
    ddb.on(TransactWriteCommand).rejects(fault());
    const { next, evidence } = anAdmission();

    // Act
    const failure = await store()
      .admit(next, evidence, 'sealed')
      .catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as StoreUnavailableError).code).toBe('store_unavailable');
    expect((failure as StoreUnavailableError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((failure as Error).cause).toBeDefined();
  });

  it('asks for a longer wait when DynamoDB throttles than after a one-off fault', async () => {
    // Prepare
    const { next, evidence } = anAdmission();
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(throttled())
      .rejectsOnce(new InternalServerError({ message: 'x', ...meta }));

    // Act
    const first = (await store()
      .admit(next, evidence, 's')
      .catch((e: unknown) => e)) as StoreUnavailableError;
    const second = (await store()
      .admit(next, evidence, 's')
      .catch((e: unknown) => e)) as StoreUnavailableError;

    // Assess
    expect(first.retryAfterSeconds).toBe(2);
    expect(second.retryAfterSeconds).toBe(1);
  });

  it('keeps a validation error a StoreWriteError (a bug: generic 500), not retry-safe', async () => {
    // Prepare
    ddb.on(TransactWriteCommand).rejects(
      Object.assign(new Error('bad expression'), {
        name: 'ValidationException',
        $metadata: { httpStatusCode: 400 },
      }),
    );
    const { next, evidence } = anAdmission();

    // Act
    const failure = await store()
      .admit(next, evidence, 'sealed')
      .catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(StoreWriteError);
    expect(transientFaultOf(failure)).toBeUndefined();
  });

  it('still returns a lost admission race as a value, not a fault', async () => {
    // Prepare: the command put lost its guard to another writer; a read finds that writer's command.
    const { next, evidence } = anAdmission();
    ddb.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'Transaction cancelled',
        ...meta,
        CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'ConditionalCheckFailed' }],
      }),
    );

    // Act
    const outcome = await store()
      .admit(next, evidence, 'sealed')
      .catch((error: unknown) => error);

    // Assess: without the old items there is nothing to compare; still not a transient fault.
    expect(transientFaultOf(outcome)).toBeUndefined();
    expect(outcome).not.toMatchObject({ kind: 'admitted' });
  });

  it('maps a transaction cancelled only by throttling to StoreUnavailableError; a failed guard stays stale', async () => {
    // Prepare
    const { next, evidence } = anAdmission();
    const record = next as NotificationRecord;
    const cancelled = (codes: string[]) =>
      new TransactionCanceledException({
        message: 'cancelled',
        ...meta,
        CancellationReasons: codes.map((Code) => ({ Code })),
      });
    const applied = { previous: record, next: { ...record, version: record.version + 1 }, evidence };
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled(['ThrottlingError', 'None']))
      .rejectsOnce(cancelled(['ConditionalCheckFailed', 'None']));

    // Act
    const throttledWrite = await store()
      .transition(applied)
      .catch((error: unknown) => error);
    const lostRace = await store().transition(applied);

    // Assess
    expect(throttledWrite).toBeInstanceOf(StoreUnavailableError);
    expect(lostRace.kind).toBe('stale');
  });

  it('maps throttled reads (get, evidence, by event) to StoreUnavailableError', async () => {
    // Prepare
    ddb.on(GetCommand).rejects(throttled());
    ddb.on(QueryCommand).rejects(throttled());

    // Act
    const failures = await Promise.all([
      store()
        .get('k')
        .catch((e: unknown) => e),
      store()
        .evidence('k')
        .catch((e: unknown) => e),
      store()
        .byEvent('e')
        .catch((e: unknown) => e),
    ]);

    // Assess
    for (const failure of failures) expect(failure).toBeInstanceOf(StoreUnavailableError);
  });
});
