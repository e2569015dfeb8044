import { type ProviderStatus, parseClientReference } from '../../domain/provider.js';
import { EUM_CONTEXT_REFERENCE_KEY } from './provider.js';

/**
 * End User Messaging SMS events, as its configuration set's event destination publishes them to
 * an SNS topic. The SNS notification's `Message` is the event JSON:
 *
 * ```
 * { "eventType": "TEXT_DELIVERED", "eventVersion": "1.0", "eventTimestamp": 1686975103470,
 *   "isFinal": true, "originationPhoneNumber": "+1206...", "destinationPhoneNumber": "+1425...",
 *   "messageId": "862a8790-...", "messageStatus": "DELIVERED", "messageStatusDescription": "...",
 *   "context": { "client_reference": "<key>#<attempt>" }, ... }
 * ```
 *
 * The event carries the full destination number: the parser never returns it, so nothing
 * downstream can log or store it.
 */

/**
 * How each SMS event type maps to our normalised status, from the event-type descriptions in the
 * End User Messaging SMS user guide ("Event types for SMS, MMS, and voice"):
 *
 * - `TEXT_QUEUED` ("queued for delivery, but not delivered yet") and `TEXT_PENDING` ("in the
 *   process of being delivered"): the service accepted the message: it exists, so `sent`
 *   (the record leaves `dispatch_unknown` and never sends again; a later event moves it on).
 * - `TEXT_SUCCESSFUL` ("accepted by the recipient's carrier") -> `sent`.
 * - `TEXT_DELIVERED` -> `delivered`. (The guide says that, depending on the country, DELIVERED and
 *   SUCCESSFUL may be used interchangeably; SUCCESSFUL is never read as delivered.)
 * - `TEXT_TTL_EXPIRED` -> `not_sent`: the API reference of `TimeToLive` says the service stops
 *   attempting to hand the message off when the TTL expires and returns this event, so no carrier
 *   ever had it. `TEXT_PROTECT_BLOCKED` -> `not_sent`: our own protect configuration blocked it
 *   inside the service; unless the event names a rule mode that sends (Monitor's recommendation on
 *   a message that went out): then `sent`, never a new attempt.
 * - Every other failure (`TEXT_BLOCKED`, `TEXT_CARRIER_BLOCKED`, `TEXT_CARRIER_UNREACHABLE`,
 *   `TEXT_INVALID`, `TEXT_INVALID_MESSAGE`, `TEXT_UNREACHABLE`, `TEXT_SPAM`) -> `undelivered`:
 *   the guide does not say the message never left, and some (carrier, device, spam) happen after
 *   hand-off. A new attempt after one of these could be a second SMS.
 * - `TEXT_UNKNOWN` -> `sent`: "the service automatically returns an UNKNOWN messageStatus as we do
 *   not know what happened to that message" when no final carrier event came within 72 hours
 *   (user guide, "Messaging Events"). The provider does not know: it is never evidence of
 *   non-delivery. It still shows the message exists (the record never sends again), and `sent`
 *   changes no final state (a `delivered`, an `unknown_at_expiry` stay as they are).
 *
 * Only a final event (`isFinal: true`, "True if this is the final status for the message. There are
 * intermediate message statuses and it can take up to 72 hours for the final message status to be
 * received") settles: {@link parseEumNotification} reads a non-final event of any type as `sent`
 * (a non-final `TEXT_CARRIER_UNREACHABLE` is "a temporary error"; the final event follows). An
 * event without the field is read as final, as before the field was read.
 * docs/providers/aws.md#event-types-and-what-the-service-does holds the whole table.
 */
export const EUM_EVENT_STATUS: Readonly<Record<string, ProviderStatus>> = {
  TEXT_QUEUED: 'sent',
  TEXT_PENDING: 'sent',
  TEXT_SUCCESSFUL: 'sent',
  // Not selectable as a matching type, but an event of it would still show the message exists.
  TEXT_SENT: 'sent',
  TEXT_DELIVERED: 'delivered',
  TEXT_TTL_EXPIRED: 'not_sent',
  TEXT_PROTECT_BLOCKED: 'not_sent',
  TEXT_BLOCKED: 'undelivered',
  TEXT_CARRIER_BLOCKED: 'undelivered',
  TEXT_CARRIER_UNREACHABLE: 'undelivered',
  TEXT_INVALID: 'undelivered',
  TEXT_INVALID_MESSAGE: 'undelivered',
  TEXT_UNREACHABLE: 'undelivered',
  TEXT_SPAM: 'undelivered',
  TEXT_UNKNOWN: 'sent',
};

/** One event reduced to what correlation needs. No number, no body. */
export interface EumEvent {
  readonly eventType: string;
  readonly messageId: string;
  readonly clientReference: string;
  /** The status the event settles: `sent` for a non-final event, whatever its type. */
  readonly status: ProviderStatus;
  /** The event's `isFinal` (true when absent): false means a later event gives the outcome. */
  readonly final: boolean;
  /**
   * A `TEXT_PROTECT_BLOCKED` whose protect rule let the message go out (Monitor mode's blocking
   * recommendation, {@link protectLetThrough}): read as `sent`, never as not sent.
   */
  readonly monitor: boolean;
  /** The SNS notification id: the same for SNS redeliveries of one event. */
  readonly notificationId: string;
  readonly eventTimestamp?: number;
}

/** Why an event was not used. Each is a metric dimension. */
export type EumEventRejection =
  | 'not_a_notification'
  | 'wrong_topic'
  | 'unreadable_event'
  | 'not_a_text_event'
  | 'unmapped_event_type'
  | 'no_client_reference'
  | 'foreign_client_reference';

export type EumEventParse =
  | { readonly kind: 'event'; readonly event: EumEvent }
  | { readonly kind: 'rejected'; readonly why: EumEventRejection; readonly eventType?: string };

/** The fields of an SNS notification we read (Lambda's `Records[].Sns` and SNS's HTTP body agree on them). */
export interface SnsNotification {
  readonly Type?: string;
  readonly MessageId?: string;
  readonly TopicArn?: string;
  readonly Message?: string;
}

type JsonRecord = Record<string, unknown>;
const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;

/**
 * The protect rule modes that send (the service model's `ProtectStatus`: ALLOW | BLOCK | MONITOR |
 * FILTER; only BLOCK and FILTER block). MONITOR "Allow[s] sending messages to the destination
 * country, but include[s] the SMS protect blocking recommendation in metrics and events" (user
 * guide, "Country rule modes"); the past-tense spellings are read alike.
 */
const SENDING_PROTECT_MODES: ReadonlySet<string> = new Set(['MONITOR', 'MONITORED', 'ALLOW', 'ALLOWED']);

/**
 * Whether a protect field of the event names a mode that sends: any top-level field whose name
 * says protect (`protectStatus`), or any field of a protect object (`protectConfiguration`). The
 * guide's "SMS Protect example log" is not in the stored copy we could read, so the rule's mode is
 * looked for wherever a protect field can carry it (docs/providers/aws.md#protect-configurations-in-monitor-mode).
 * Our own `context` is never read here.
 */
function protectLetThrough(event: JsonRecord): boolean {
  const sends = (value: unknown) =>
    typeof value === 'string' && SENDING_PROTECT_MODES.has(value.toUpperCase());
  for (const [key, value] of Object.entries(event)) {
    if (!/protect/i.test(key)) continue;
    if (sends(value)) return true;
    const nested = asRecord(value);
    if (nested !== undefined && Object.values(nested).some(sends)) return true;
  }
  return false;
}

/**
 * Parses one SNS notification carrying an End User Messaging event. The topic must be the one the
 * stack created for this configuration set: a notification from any other topic is not believed.
 * (In AWS the Lambda subscription is what authenticates the sender; this check keeps a
 * misconfigured subscription from feeding us another account's events.)
 */
export function parseEumNotification(notification: SnsNotification, expectedTopicArn: string): EumEventParse {
  const reject = (why: EumEventRejection, eventType?: string): EumEventParse => ({
    kind: 'rejected',
    why,
    ...(eventType === undefined ? {} : { eventType }),
  });
  if (notification.Type !== 'Notification' || typeof notification.Message !== 'string') {
    return reject('not_a_notification');
  }
  if (notification.TopicArn !== expectedTopicArn) return reject('wrong_topic');
  let parsed: unknown;
  try {
    parsed = JSON.parse(notification.Message);
  } catch {
    return reject('unreadable_event');
  }
  const event = asRecord(parsed);
  const eventType = event?.eventType;
  const messageId = event?.messageId;
  if (
    event === undefined ||
    typeof eventType !== 'string' ||
    typeof messageId !== 'string' ||
    messageId === ''
  ) {
    return reject('unreadable_event');
  }
  const safeType = /^[A-Z_]{1,64}$/.test(eventType) ? eventType : 'unreadable';
  if (!safeType.startsWith('TEXT_')) return reject('not_a_text_event', safeType);
  const typeStatus = Object.hasOwn(EUM_EVENT_STATUS, safeType) ? EUM_EVENT_STATUS[safeType] : undefined;
  if (typeStatus === undefined) return reject('unmapped_event_type', safeType);
  // An intermediate status proves the message exists and settles nothing: the final event will.
  const final = event.isFinal !== false;
  // A Monitor rule's recommendation rides on a message that went out: a resend would be a second SMS.
  const monitor = safeType === 'TEXT_PROTECT_BLOCKED' && protectLetThrough(event);
  const status: ProviderStatus = final && !monitor ? typeStatus : 'sent';
  const reference = asRecord(event.context)?.[EUM_CONTEXT_REFERENCE_KEY];
  if (typeof reference !== 'string' || reference === '') return reject('no_client_reference', safeType);
  if (parseClientReference(reference) === undefined) return reject('foreign_client_reference', safeType);
  const timestamp = event.eventTimestamp;
  return {
    kind: 'event',
    event: {
      eventType: safeType,
      messageId,
      clientReference: reference,
      status,
      final,
      monitor,
      notificationId: typeof notification.MessageId === 'string' ? notification.MessageId : '',
      ...(typeof timestamp === 'number' && Number.isFinite(timestamp) ? { eventTimestamp: timestamp } : {}),
    },
  };
}
