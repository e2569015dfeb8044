/**
 * A hot number under a burst: admissions whose transaction meets another on the number's counter
 * item (`TransactionConflict`) read the item and are refused at once when it is full, instead of
 * retrying their transaction against every other request to that number until the tries run out
 * (a 503 for what is a 429).
 */
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  InternalServerError,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { commandItem, counterItemKey } from '../../../shared/adapters/dynamodb/item-mapping.js';
import { DynamoNotificationStore } from '../../../shared/adapters/dynamodb/store.js';
import {
  ADMISSION_LOG_ATTRIBUTE,
  budgetCounters,
  parseDestinationLimits,
} from '../../../shared/domain/budgets.js';
import { admit } from '../../../shared/domain/notification.js';

const NOW = Date.UTC(2026, 11, 2, 12);
const MINUTE = 60_000;
const FINGERPRINT = 'fp1:hot';
const counters = budgetCounters(
  { destination: parseDestinationLimits('3/15m'), country: [] },
  FINGERPRINT,
  undefined,
  NOW,
);

function anAdmission() {
  return admit({
    request: {
      idempotencyKey: 'k-hot',
      eventId: 'evt-hot',
      channel: 'sms',
      template: 'password_reset',
      locale: 'en',
      expiresAt: NOW + 600_000,
      sensitive: { phone: '+14155550123', params: { code: '483920' } },
    },
    destinationFingerprint: FINGERPRINT,
    payloadFingerprint: 'pf',
    providerName: 'simulator',
    now: NOW,
    safetyNetAt: NOW + 300_000,
  });
}

const COUNTER_KEY = counterItemKey(`LIMIT#dst#${FINGERPRINT}`);

/** A slot write's condition failed: the counter as it is (ALL_OLD) holds `log`. */
const fullCounter = (log: number[]) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    Item: marshall({ ...COUNTER_KEY, [ADMISSION_LOG_ATTRIBUTE]: log }),
  });

/** The transaction was cancelled because another one held the counter item (the third item). */
const conflictOnCounter = () =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: [{ Code: 'None' }, { Code: 'None' }, { Code: 'TransactionConflict' }],
  });

describe('DynamoDB store: admission to a hot number whose counter another admission holds', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  const store = () =>
    new DynamoNotificationStore({
      client: new DynamoDBClient({ region: 'eu-west-1', maxAttempts: 1 }),
      tableName: 't',
      evidenceRetentionDays: 400,
    });
  beforeEach(() => {
    ddb.reset();
    ddb.on(GetCommand).resolves({});
    // The store backs off (jitter) between tries: on a fake clock.
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is refused at once when the counter it read is full, with the time the number frees up', async () => {
    // Prepare: the number's log holds 3 admissions of the last 5 minutes.
    ddb.on(TransactWriteCommand).rejects(conflictOnCounter());
    const log = [NOW - MINUTE, NOW - 2 * MINUTE, NOW - 5 * MINUTE];
    ddb
      .on(GetCommand, { Key: counterItemKey(`LIMIT#dst#${FINGERPRINT}`) })
      .resolves({ Item: { [ADMISSION_LOG_ATTRIBUTE]: log } });
    const { next, evidence } = anAdmission();
    // Act
    const pending = store().admit(next, evidence, 'sealed', counters);
    await vi.runAllTimersAsync();
    const result = await pending;
    // Assess: one transaction, no retry; refused until the oldest of the three is 15 minutes old.
    expect(result).toEqual({ kind: 'over_budget', scope: 'destination', freesAt: NOW + 10 * MINUTE });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('takes a slot with one conditional update when the counter it read has room, then writes the command and its guard without it', async () => {
    // Prepare: the first try meets a conflict and the counter has room.
    ddb.on(TransactWriteCommand).rejectsOnce(conflictOnCounter()).resolves({});
    ddb
      .on(GetCommand, { Key: COUNTER_KEY })
      .resolves({ Item: { [ADMISSION_LOG_ATTRIBUTE]: [NOW - MINUTE] } });
    const { next, evidence } = anAdmission();
    // Act
    const pending = store().admit(next, evidence, 'sealed', counters);
    await vi.runAllTimersAsync();
    const result = await pending;
    // Assess: the slot on its own (this admission's time in front), then a transaction of two items.
    expect(result.kind).toBe('admitted');
    const [slot] = ddb.commandCalls(UpdateCommand);
    expect(slot?.args[0].input.Key).toEqual(COUNTER_KEY);
    expect(slot?.args[0].input.ExpressionAttributeValues?.[':entry']).toEqual([NOW]);
    const transactions = ddb.commandCalls(TransactWriteCommand);
    expect(transactions).toHaveLength(2);
    expect(transactions[1]?.args[0].input.TransactItems?.map((i) => Object.keys(i))).toEqual([
      ['Put'],
      ['Put'],
    ]);
  });

  it('is refused with the time the number frees up when its slot write finds the counter full, and writes nothing', async () => {
    // Prepare: read with room, but three admissions landed before its own update.
    ddb.on(TransactWriteCommand).rejects(conflictOnCounter());
    ddb.on(GetCommand, { Key: COUNTER_KEY }).resolves({ Item: { [ADMISSION_LOG_ATTRIBUTE]: [] } });
    ddb.on(UpdateCommand).rejects(fullCounter([NOW, NOW - MINUTE, NOW - 5 * MINUTE]));
    const { next, evidence } = anAdmission();
    // Act
    const pending = store().admit(next, evidence, 'sealed', counters);
    await vi.runAllTimersAsync();
    const result = await pending;
    // Assess: one transaction, one slot write, no retry storm (a 429, not a 503).
    expect(result).toEqual({ kind: 'over_budget', scope: 'destination', freesAt: NOW + 10 * MINUTE });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
  });

  it('gives its slot back when the key turns out taken (a replay), and answers the replay', async () => {
    // Prepare: slot taken; the command put then fails: another writer holds the key.
    const { next, evidence } = anAdmission();
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(conflictOnCounter())
      .rejects(
        new TransactionCanceledException({
          message: 'Transaction cancelled',
          $metadata: {},
          CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }],
        }),
      );
    ddb
      .on(GetCommand, { Key: COUNTER_KEY })
      .resolvesOnce({ Item: { [ADMISSION_LOG_ATTRIBUTE]: [] } })
      .resolves({ Item: { [ADMISSION_LOG_ATTRIBUTE]: [NOW + 1, NOW] } });
    ddb
      .on(GetCommand, { Key: { pk: next.idempotencyKey, sk: 'CMD' } })
      .resolves({ Item: commandItem(next, 'sealed', 400) });
    // Act
    const pending = store().admit(next, evidence, 'sealed', counters);
    await vi.runAllTimersAsync();
    const result = await pending;
    // Assess: the replay's answer; its entry (now second, another landed in front) is removed.
    expect(result.kind).toBe('exists');
    const updates = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(updates).toHaveLength(2);
    expect(updates[1]).toMatchObject({
      Key: COUNTER_KEY,
      UpdateExpression: 'REMOVE #log[1]',
      ConditionExpression: '#log[1] = :at',
      ExpressionAttributeValues: { ':at': NOW },
    });
  });

  it('keeps its slot when the command write ends without a verdict: never given back for a command that may exist', async () => {
    // Prepare: slot taken; the transaction of the command and its guard gets no answer.
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(conflictOnCounter())
      .rejects(new InternalServerError({ message: 'internal', $metadata: {} }));
    ddb.on(GetCommand, { Key: COUNTER_KEY }).resolves({ Item: { [ADMISSION_LOG_ATTRIBUTE]: [] } });
    const { next, evidence } = anAdmission();
    // Act
    const pending = store().admit(next, evidence, 'sealed', counters);
    const settled = pending.catch((error: unknown) => error);
    await vi.runAllTimersAsync();
    const error = await settled;
    // Assess: a retry-safe fault, and the one update is the slot itself (nothing given back).
    expect(error).toMatchObject({ code: 'store_unavailable' });
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
  });
});
