/**
 * A hot number under a burst: admissions whose transaction meets another on the number's counter
 * item (`TransactionConflict`) read the item and are refused at once when it is full, instead of
 * retrying their transaction against every other request to that number until the tries run out
 * (a 503 for what is a 429).
 */
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { counterItemKey } from '../../../shared/adapters/dynamodb/item-mapping.js';
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

  it('retries its transaction when the counter it read still has room', async () => {
    // Prepare: the first try meets a conflict, the counter has room, the second try commits.
    ddb.on(TransactWriteCommand).rejectsOnce(conflictOnCounter()).resolves({});
    ddb
      .on(GetCommand, { Key: counterItemKey(`LIMIT#dst#${FINGERPRINT}`) })
      .resolves({ Item: { [ADMISSION_LOG_ATTRIBUTE]: [NOW - MINUTE] } });
    const { next, evidence } = anAdmission();
    // Act
    const pending = store().admit(next, evidence, 'sealed', counters);
    await vi.runAllTimersAsync();
    const result = await pending;
    // Assess
    expect(result.kind).toBe('admitted');
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });
});
