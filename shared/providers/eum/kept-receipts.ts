/**
 * Receipts that failed every attempt are kept, never dropped, and never with a phone number in
 * clear (issue 24 item 6). End User Messaging events are the only evidence that settles a send
 * whose answer was lost, so a receipts invocation that fails three times (Lambda's two
 * asynchronous retries) must leave a copy that can be re-delivered. The copy Lambda hands to an
 * on-failure destination is the whole invocation (`requestPayload`: the SNS event, with the event's
 * `destinationPhoneNumber`); the keeper (the receipts function's on-failure destination) reduces it
 * to {@link KeptReceipt}s before anything is stored. The receipts parser never reads the number, so
 * a kept copy settles a record exactly as the original would have
 * (docs/providers/aws.md#kept-receipts-and-redrive).
 */
import type { SnsNotification } from './events.js';

/** One kept notification: the SNS fields the parser reads, the event without any number. */
export interface KeptReceipt {
  readonly Type: 'Notification';
  readonly MessageId: string;
  readonly TopicArn: string;
  /** The event JSON with `destinationPhoneNumber` removed (and every other E.164-shaped value masked). */
  readonly Message: string;
}

/** What Lambda sends an on-failure destination of an asynchronous invocation, reduced to what we read. */
export interface FailedInvocationRecord {
  readonly requestContext?: { readonly condition?: string; readonly approximateInvokeCount?: number };
  readonly requestPayload?: unknown;
}

/** An E.164 number anywhere in a value the event carries: masked, whatever field it sits in. */
const E164 = /\+[1-9]\d{6,14}/g;
const MASK = '+***';

type JsonRecord = Record<string, unknown>;
const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;

/** Masks every E.164-shaped string inside `value` (objects and arrays walked). */
function maskNumbers(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(E164, MASK);
  if (Array.isArray(value)) return value.map(maskNumbers);
  const record = asRecord(value);
  if (record === undefined) return value;
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, maskNumbers(v)]));
}

/**
 * The copy of one SNS notification that may be kept: only `Type`, `MessageId`, `TopicArn` and the
 * event, whose `destinationPhoneNumber` is dropped and any other number masked. A message that is
 * not JSON is kept as the marker `unreadable` (it could hold anything; the parser would refuse it).
 */
export function keptReceiptOf(notification: SnsNotification): KeptReceipt {
  let message = '"unreadable"';
  if (typeof notification.Message === 'string') {
    try {
      const event = asRecord(JSON.parse(notification.Message));
      if (event !== undefined) {
        const { destinationPhoneNumber: _dropped, ...rest } = event;
        message = JSON.stringify(maskNumbers(rest));
      }
    } catch {
      // Not JSON: kept as the marker above.
    }
  }
  return {
    Type: 'Notification',
    MessageId: typeof notification.MessageId === 'string' ? notification.MessageId : '',
    TopicArn: typeof notification.TopicArn === 'string' ? notification.TopicArn : '',
    Message: message,
  };
}

/** True for what Lambda sends an on-failure destination (not an SNS event). */
export function isFailedInvocationRecord(event: unknown): event is FailedInvocationRecord {
  const record = asRecord(event);
  return record !== undefined && asRecord(record.requestContext) !== undefined && 'requestPayload' in record;
}

/** The kept copies of every notification a failed receipts invocation carried. */
export function keptReceiptsOf(record: FailedInvocationRecord): readonly KeptReceipt[] {
  const records = asRecord(record.requestPayload)?.Records;
  if (!Array.isArray(records)) return [];
  return records.flatMap((entry: unknown) => {
    const sns = asRecord(asRecord(entry)?.Sns);
    return sns === undefined ? [] : [keptReceiptOf(sns as SnsNotification)];
  });
}

/** An SQS event (the SNS subscription's dead-letter queue), reduced to what we read. */
export interface SqsRecordsEvent {
  readonly Records: readonly { readonly eventSource?: string; readonly body?: string }[];
}

/** True for an SQS event: records with `eventSource: aws:sqs` and a body. */
export function isSqsRecordsEvent(event: unknown): event is SqsRecordsEvent {
  const records = asRecord(event)?.Records;
  return (
    Array.isArray(records) &&
    records.length > 0 &&
    records.every((r) => asRecord(r)?.eventSource === 'aws:sqs' && typeof asRecord(r)?.body === 'string')
  );
}

/**
 * The kept copies of the notifications SNS could not deliver to the receipts function (the
 * subscription's dead-letter queue holds each one as the SNS notification JSON, numbers included).
 */
export function keptReceiptsOfDeadLetters(event: SqsRecordsEvent): readonly KeptReceipt[] {
  return event.Records.flatMap((record) => {
    try {
      const notification = asRecord(JSON.parse(record.body ?? ''));
      return notification === undefined ? [] : [keptReceiptOf(notification as SnsNotification)];
    } catch {
      return [];
    }
  });
}
