import { describe, expect, it } from 'vitest';
import {
  createEumReceiptsHandler,
  EUM_EVENT_STATUS,
  parseEumNotification,
  type SnsNotification,
} from '../../../shared/providers/eum/index.js';
import type { IngestReceipt, ReceiptInput } from '../../../shared/usecases/ingest-receipt.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';
import { aPolicy } from '../domain/fixtures.js';

const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:reset-notifier-eum-events';
const PHONE = '+14155550123';

/** An End User Messaging SMS event as the event destination publishes it (fields per the user guide's example). */
function anEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventType: 'TEXT_DELIVERED',
    eventVersion: '1.0',
    eventTimestamp: 1_764_590_400_000,
    isFinal: true,
    originationPhoneNumber: '+12065550152',
    destinationPhoneNumber: PHONE,
    isInternationalSend: false,
    mcc: '310',
    mnc: '800',
    messageId: 'eum-msg-1',
    messageRequestTimestamp: 1_764_590_399_000,
    messageEncoding: 'GSM',
    messageType: 'TRANSACTIONAL',
    messageStatus: 'DELIVERED',
    messageStatusDescription: 'Message has been accepted by phone',
    context: { client_reference: 'sms:password_reset:evt-1#2' },
    totalMessageParts: 1,
    totalMessagePrice: 0.00581,
    totalCarrierFee: 0.00302,
    ...overrides,
  };
}

function aNotification(
  event: Record<string, unknown>,
  overrides: Partial<SnsNotification> = {},
): SnsNotification {
  return {
    Type: 'Notification',
    MessageId: '9b7a3c1e-0000-4000-8000-000000000001',
    TopicArn: TOPIC,
    Message: JSON.stringify(event),
    ...overrides,
  };
}

describe('End User Messaging events', () => {
  it.each([
    ['TEXT_QUEUED', 'sent'],
    ['TEXT_PENDING', 'sent'],
    ['TEXT_SUCCESSFUL', 'sent'],
    ['TEXT_DELIVERED', 'delivered'],
    ['TEXT_TTL_EXPIRED', 'not_sent'],
    ['TEXT_PROTECT_BLOCKED', 'not_sent'],
    ['TEXT_CARRIER_UNREACHABLE', 'undelivered'],
    ['TEXT_BLOCKED', 'undelivered'],
    ['TEXT_SPAM', 'undelivered'],
    // "We do not know what happened to that message": the message exists, nothing more is known.
    ['TEXT_UNKNOWN', 'sent'],
  ])('maps %s to %s', (eventType, status) => {
    const parsed = parseEumNotification(aNotification(anEvent({ eventType })), TOPIC);
    expect(parsed).toMatchObject({ kind: 'event', event: { status, eventType } });
    expect(EUM_EVENT_STATUS[eventType]).toBe(status);
  });

  it('reads the message id and our client reference, and never returns the destination number', () => {
    const parsed = parseEumNotification(aNotification(anEvent()), TOPIC);
    expect(parsed).toEqual({
      kind: 'event',
      event: {
        eventType: 'TEXT_DELIVERED',
        messageId: 'eum-msg-1',
        clientReference: 'sms:password_reset:evt-1#2',
        status: 'delivered',
        final: true,
        monitor: false,
        notificationId: '9b7a3c1e-0000-4000-8000-000000000001',
        eventTimestamp: 1_764_590_400_000,
      },
    });
    expect(JSON.stringify(parsed)).not.toContain('4155550123');
  });

  it.each([
    ['another topic', aNotification(anEvent(), { TopicArn: `${TOPIC}-other` }), 'wrong_topic'],
    [
      'a subscription confirmation',
      aNotification(anEvent(), { Type: 'SubscriptionConfirmation' }),
      'not_a_notification',
    ],
    ['a body that is not JSON', aNotification(anEvent(), { Message: 'nope' }), 'unreadable_event'],
    ['a voice event', aNotification(anEvent({ eventType: 'VOICE_COMPLETED' })), 'not_a_text_event'],
    [
      'an event type never documented',
      aNotification(anEvent({ eventType: 'TEXT_TELEPORTED' })),
      'unmapped_event_type',
    ],
    [
      'an event without our context',
      aNotification(anEvent({ context: { account: 'bar' } })),
      'no_client_reference',
    ],
    [
      'a context that is not ours',
      aNotification(anEvent({ context: { client_reference: 'campaign-7' } })),
      'foreign_client_reference',
    ],
    [
      'a reference whose key no command can have (over 255 characters: was a store read that DynamoDB refuses)',
      aNotification(anEvent({ context: { client_reference: `${'k'.repeat(2100)}#1` } })),
      'foreign_client_reference',
    ],
    [
      "a reference naming the table's own items",
      aNotification(anEvent({ context: { client_reference: '_control#reconciler#1' } })),
      'foreign_client_reference',
    ],
  ])('rejects %s', (_name, notification, why) => {
    expect(parseEumNotification(notification, TOPIC)).toMatchObject({ kind: 'rejected', why });
  });

  it.each([['TEXT_CARRIER_UNREACHABLE'], ['TEXT_DELIVERED'], ['TEXT_PROTECT_BLOCKED']])(
    'reads a non-final %s (isFinal: false) as sent: only a final event settles',
    (eventType) => {
      const parsed = parseEumNotification(aNotification(anEvent({ eventType, isFinal: false })), TOPIC);
      expect(parsed).toMatchObject({ kind: 'event', event: { eventType, status: 'sent', final: false } });
    },
  );

  it('reads an event without isFinal as final', () => {
    const { isFinal: _omitted, ...event } = anEvent({ eventType: 'TEXT_CARRIER_UNREACHABLE' });
    expect(parseEumNotification(aNotification(event), TOPIC)).toMatchObject({
      kind: 'event',
      event: { status: 'undelivered', final: true },
    });
  });

  it('hands each event to the receipts use case with a dedupe token, and rejected ones not at all', async () => {
    // Prepare
    const seen: ReceiptInput[] = [];
    const ingest: IngestReceipt = async (_deps, input) => {
      seen.push(input);
      return { kind: 'applied', to: 'delivered' };
    };
    const handler = createEumReceiptsHandler({
      ingest,
      topicArn: TOPIC,
      store: new MemoryNotificationStore(),
      clock: new ManualClock(),
      policy: aPolicy(),
    });

    // Act
    const { reports } = await handler({
      Records: [
        { Sns: aNotification(anEvent({ eventType: 'TEXT_SUCCESSFUL' })) },
        { Sns: aNotification(anEvent(), { TopicArn: 'arn:aws:sns:eu-west-1:222222222222:elsewhere' }) },
      ],
    });

    // Assess
    expect(seen).toEqual([
      {
        provider: 'eum',
        clientReference: 'sms:password_reset:evt-1#2',
        messageId: 'eum-msg-1',
        status: 'sent',
        providerStatus: 'TEXT_SUCCESSFUL',
        detail: 'eum:event:TEXT_SUCCESSFUL',
        dedupeToken: 'sns:9b7a3c1e-0000-4000-8000-000000000001',
      },
    ]);
    expect(reports.map((r) => r.kind)).toEqual(['ingested', 'rejected']);
    expect(JSON.stringify(reports)).not.toContain('4155550123');
  });
});
