/**
 * A receipts invocation that fails every attempt leaves a kept copy, without the phone number, that
 * settles the record when re-delivered (issue 24 item 6).
 */
import { describe, expect, it } from 'vitest';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import { NotificationState as S } from '../../../shared/domain/states.js';
import {
  createEumReceiptsHandler,
  isFailedInvocationRecord,
  type KeptReceipt,
  keptReceiptsOf,
  redriveKeptReceipts,
  type SnsNotification,
} from '../../../shared/providers/eum/index.js';
import { ingestReceipt } from '../../../shared/usecases/ingest-receipt.js';
import { aSentRecord, PHONE } from '../domain/fixtures.js';
import { seededStore } from '../usecases/seeded-store.js';

const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:reset-notifier-eum-events';
const KEY = 'sms:password_reset:evt-1';
const ORIGINATION = '+12065550152';

/** A TEXT_DELIVERED of attempt 1's `SM-1`, with both numbers as the service writes them. */
const delivered: SnsNotification & Record<string, unknown> = {
  Type: 'Notification',
  MessageId: '9b7a3c1e-0000-4000-8000-000000000001',
  TopicArn: TOPIC,
  Subject: null,
  Message: JSON.stringify({
    eventType: 'TEXT_DELIVERED',
    eventVersion: '1.0',
    eventTimestamp: 1_764_590_400_000,
    isFinal: true,
    originationPhoneNumber: ORIGINATION,
    destinationPhoneNumber: PHONE,
    messageId: 'SM-1',
    messageStatus: 'DELIVERED',
    messageStatusDescription: `Message delivered to ${PHONE}`,
    context: { client_reference: `${KEY}#1` },
  }),
};

/** What Lambda sends the on-failure destination after the third failed attempt (Lambda developer guide). */
const failedInvocation = {
  version: '1.0',
  timestamp: '2026-12-02T12:03:00.000Z',
  requestContext: {
    requestId: 'e4b46cbf-0000-4000-8000-000000000000',
    functionArn: 'arn:aws:lambda:eu-west-1:111111111111:function:reset-notifier-receipts:$LATEST',
    condition: 'RetriesExhausted',
    approximateInvokeCount: 3,
  },
  requestPayload: { Records: [{ EventSource: 'aws:sns', Sns: delivered }] },
  responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
  responsePayload: { errorType: 'StoreUnavailableError', errorMessage: 'store unavailable' },
};

const sentSM1 = () => aSentRecord({ provider: { name: 'eum', messageId: 'SM-1' } });

describe('kept receipts', () => {
  it('keep no phone number, in any field', () => {
    // Act
    const kept = keptReceiptsOf(failedInvocation);

    // Assess
    expect(isFailedInvocationRecord(failedInvocation)).toBe(true);
    expect(kept).toHaveLength(1);
    const text = JSON.stringify(kept);
    expect(text).not.toContain(PHONE.slice(1));
    expect(text).not.toContain(ORIGINATION.slice(1));
    expect(Object.keys(kept[0] ?? {}).sort()).toEqual(['Message', 'MessageId', 'TopicArn', 'Type']);
  });

  it('an SNS event is not taken for a failed-invocation record', () => {
    expect(isFailedInvocationRecord({ Records: [{ Sns: delivered }] })).toBe(false);
  });

  it('settle the record on redrive as the original would have, after three failed attempts', async () => {
    // Prepare: the store fails every read of the receipts invocation (three attempts), then recovers.
    let storeDown = false;
    const { store, clock, policy } = await seededStore(sentSM1(), {
      beforeOperation: () => {
        if (storeDown) throw new Error('store unavailable');
      },
    });
    storeDown = true;
    const deps = { ingest: ingestReceipt, topicArn: TOPIC, store, clock, policy };
    const handler = createEumReceiptsHandler(deps);
    for (let attempt = 1; attempt <= 3; attempt++) {
      await expect(handler({ Records: [{ Sns: delivered }] })).rejects.toThrow('store unavailable');
    }
    storeDown = false;

    // Act
    const reports = await redriveKeptReceipts(deps, keptReceiptsOf(failedInvocation));

    // Assess
    expect(reports).toMatchObject([{ kind: 'ingested', result: { kind: 'applied', to: S.delivered } }]);
    expect((await store.get(KEY))?.record.state).toBe(S.delivered);
  });

  it('redriven twice, change nothing the second time', async () => {
    // Prepare
    const { store, clock, policy } = await seededStore(sentSM1());
    const deps = { ingest: ingestReceipt, topicArn: TOPIC, store, clock, policy };
    const kept = keptReceiptsOf(failedInvocation);
    await redriveKeptReceipts(deps, kept);

    // Act
    const again = await redriveKeptReceipts(deps, kept);

    // Assess
    expect(again).toMatchObject([{ kind: 'ingested', result: { kind: 'ignored', why: 'final' } }]);
  });
});

describe('the receipts handler as keeper (the on-failure destination)', () => {
  async function aKeeper(keep?: (kept: readonly KeptReceipt[]) => Promise<void>) {
    const { store, clock, policy } = await seededStore(sentSM1());
    const handler = createEumReceiptsHandler({
      ingest: ingestReceipt,
      topicArn: TOPIC,
      store,
      clock,
      policy,
      ...(keep === undefined ? {} : { keep }),
    });
    return { handler, store };
  }

  it('keeps a failed invocation’s events without numbers and ingests nothing', async () => {
    // Prepare
    const kept: KeptReceipt[] = [];
    const { handler, store } = await aKeeper(async (k) => void kept.push(...k));

    // Act
    const result = await handler(failedInvocation);

    // Assess
    expect(result).toEqual({ reports: [], kept: 1 });
    expect(JSON.stringify(kept)).not.toContain(PHONE.slice(1));
    expect((await store.get(KEY))?.record.state).toBe(S.sent);
  });

  it('keeps what SNS could not deliver (the subscription’s dead-letter messages) the same way', async () => {
    // Prepare
    const kept: KeptReceipt[] = [];
    const { handler } = await aKeeper(async (k) => void kept.push(...k));

    // Act
    const result = await handler({ Records: [{ eventSource: 'aws:sqs', body: JSON.stringify(delivered) }] });

    // Assess
    expect(result).toEqual({ reports: [], kept: 1 });
    expect(kept[0]?.MessageId).toBe(delivered.MessageId);
    expect(JSON.stringify(kept)).not.toContain(PHONE.slice(1));
  });

  it('refuses a failed invocation where nothing can keep it (never drops it as handled)', async () => {
    const { handler } = await aKeeper();
    await expect(handler(failedInvocation)).rejects.toThrow(InvalidConfigurationError);
  });
});
