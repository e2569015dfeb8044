/**
 * The simulator's message model: what was accepted, and its status computed lazily from the
 * acceptance time (no timers are needed to answer a read).
 */

export const API_VERSION = '2010-04-01';

/** Twilio's status names for an outbound message, as far as the simulator produces them. */
export type SimStatus = 'scheduled' | 'canceled' | 'accepted' | 'queued' | 'sent' | 'delivered' | 'failed';

/** Twilio error 30036: the message stayed queued longer than its ValidityPeriod and was not sent. */
export const VALIDITY_EXPIRED = { code: 30036, message: 'Validity Period Expired' } as const;

/**
 * The error codes a `failed` message carries, as Twilio titles them, that the `fail_not_sent` fault
 * can produce: every code Twilio documents as failing a message before any carrier has it (its
 * queue, its own internal errors, account suspension, geo permissions, SMS pumping protection:
 * docs/providers/twilio.md, "Failed messages, code by code"). The message becomes `failed` with that
 * code and is never sent, whatever our adapter makes of the code.
 */
export const NOT_SENT_ERRORS: Readonly<Record<number, string>> = {
  30001: 'Queue overflow',
  30036: VALIDITY_EXPIRED.message,
  30500: 'Twilio Internal Error',
  12400: 'Internal Failure',
  20500: 'Internal Server Error',
  20504: 'Twilio internal error',
  30103: 'Twilio internal error',
  30002: 'Account suspended',
  90010: 'Account is not active',
  30454: 'Twilio-imposed trial or fraud detection limit',
  21408: 'Message blocked: permissions disabled for the destination region',
  30450: 'Message delivery blocked',
};

/** The sender a messaging service's pool assigns (the simulator's pool has one number). */
export const POOL_SENDER = '+15005550006';

/** The messaging service the local stack sends through (any `MG` + 32 hex is accepted). */
export const SIM_MESSAGING_SERVICE_SID = `MG${'5'.repeat(32)}`;

/**
 * A second number of the simulated account, with no handset behind it: the local stack addresses
 * the Twilio absence probe to it (PROVIDER_ABSENCE_PROBE_TO).
 */
export const SIM_OWNED_NUMBER = '+15005550010';

/** What the receipt faults did to a message's status callbacks. */
export type ReceiptFault = 'none' | 'lost' | 'duplicated' | 'delayed';

/** One accepted message. Holds the number and body in memory only, because Twilio's API returns them. */
export interface StoredMessage {
  /** Acceptance order; also the keyset for list pagination. */
  readonly seq: number;
  readonly sid: string;
  readonly accountSid: string;
  readonly to: string;
  /** The `From` given, or empty when a messaging service assigns it ({@link POOL_SENDER}, once sent). */
  readonly from: string;
  /** The `MessagingServiceSid` given, or null. */
  readonly messagingServiceSid?: string | null;
  /** Mutable: message redaction (`POST Body=""`) blanks it. */
  body: string;
  readonly validityPeriodSeconds: number;
  readonly statusCallback: string | null;
  readonly clientReference: string | null;
  readonly destinationFingerprint: string;
  readonly acceptedAt: number;
  readonly numSegments: number;
  /** Status timeline relative to acceptance, fixed at acceptance. */
  readonly timeline: readonly StatusEvent[];
  /** Stored under Message Redaction (the `redaction` fault): numbers masked, body blank, in every read. */
  readonly redacted?: boolean;
  /** Invisible to list reads (not to fetch by sid) before this instant (the `list_lag` fault). */
  readonly listVisibleAt?: number;
  /** Deleted through the API: gone from reads, still in the ledger (it was sent all the same). */
  deleted?: boolean;
  /**
   * A scheduled message (`ScheduleType=fixed`, `SendAt`, with a messaging service): `scheduled`
   * until this instant, then its timeline (which starts here) runs as for any message.
   */
  readonly sendAt?: number;
  /** Mutable: when `POST Status=canceled` canceled it (only while `scheduled`); final, never sent. */
  canceledAt?: number;
  /** Extra delay of every status callback, in ms (the `receipt_delay` fault). */
  readonly receiptDelayMs?: number;
  readonly receiptFault?: ReceiptFault;
}

export interface StatusEvent {
  readonly at: number;
  readonly status: SimStatus;
  readonly errorCode: number | null;
  readonly errorMessage: string | null;
}

export interface StatusDelays {
  readonly sent: number;
  readonly delivered: number;
}

/**
 * The fixed status timeline of a message accepted at `acceptedAt`: sent, then delivered; or, when
 * the ValidityPeriod elapses before the send time, `failed` with error 30036 at the validity end
 * (Twilio does not send a message that outlived its ValidityPeriod in the queue). `queueDelayMs`
 * (the `queue_delay` fault) keeps it queued that much longer.
 */
export function timelineFor(
  acceptedAt: number,
  validityPeriodSeconds: number,
  delays: StatusDelays,
  notSentCode?: number,
  queueDelayMs = 0,
): StatusEvent[] {
  const sentAt = acceptedAt + delays.sent + queueDelayMs;
  const deliveredAt = acceptedAt + Math.max(delays.delivered, delays.sent) + queueDelayMs;
  const validUntil = acceptedAt + validityPeriodSeconds * 1000;
  if (notSentCode !== undefined) {
    // The `fail_not_sent` fault: failed in Twilio's queue, at the time it would have been sent.
    return [
      {
        at: Math.min(sentAt, validUntil),
        status: 'failed',
        errorCode: notSentCode,
        errorMessage: NOT_SENT_ERRORS[notSentCode] ?? 'Queue overflow',
      },
    ];
  }
  if (sentAt > validUntil) {
    return [
      {
        at: validUntil,
        status: 'failed',
        errorCode: VALIDITY_EXPIRED.code,
        errorMessage: VALIDITY_EXPIRED.message,
      },
    ];
  }
  return [
    { at: sentAt, status: 'sent', errorCode: null, errorMessage: null },
    { at: deliveredAt, status: 'delivered', errorCode: null, errorMessage: null },
  ];
}

/** The state of a message at time `now`. */
export function stateAt(
  message: StoredMessage,
  now: number,
): {
  status: SimStatus;
  updatedAt: number;
  sentAt: number | null;
  errorCode: number | null;
  errorMessage: string | null;
} {
  // Canceled (only possible while scheduled): final, and its timeline never runs.
  if (message.canceledAt !== undefined && now >= message.canceledAt) {
    return {
      status: 'canceled',
      updatedAt: message.canceledAt,
      sentAt: null,
      errorCode: null,
      errorMessage: null,
    };
  }
  if (message.sendAt !== undefined && now < message.sendAt) {
    return {
      status: 'scheduled',
      updatedAt: message.acceptedAt,
      sentAt: null,
      errorCode: null,
      errorMessage: null,
    };
  }
  let current: StatusEvent | undefined;
  let sentAt: number | null = null;
  for (const event of message.timeline) {
    if (event.at > now) break;
    current = event;
    if (event.status === 'sent') sentAt = event.at;
  }
  if (current === undefined) {
    return {
      // A messaging service message is `accepted` until a sender from the pool is assigned.
      status: message.messagingServiceSid ? 'accepted' : 'queued',
      updatedAt: message.sendAt ?? message.acceptedAt,
      sentAt: null,
      errorCode: null,
      errorMessage: null,
    };
  }
  return {
    status: current.status,
    updatedAt: current.at,
    sentAt,
    errorCode: current.errorCode,
    errorMessage: current.errorMessage,
  };
}

/** Twilio's date format: RFC 2822 in GMT, e.g. `Sun, 29 Nov 2026 12:00:00 +0000`. */
export function rfc2822(ms: number): string {
  return new Date(ms).toUTCString().replace(/GMT$/, '+0000');
}

/** Segments as Twilio counts them (approximation: ASCII is GSM-7, anything else UCS-2). */
export function segmentCount(body: string): number {
  const chars = [...body].length;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: newline and CR are part of GSM-7.
  const gsm = /^[\x0A\x0D\x20-\x7E]*$/.test(body);
  const single = gsm ? 160 : 70;
  const multi = gsm ? 153 : 67;
  return chars <= single ? 1 : Math.ceil(chars / multi);
}

export function messagePath(accountSid: string, sid: string): string {
  return `/${API_VERSION}/Accounts/${accountSid}/Messages/${sid}.json`;
}

/** Message Redaction's masking: the last four digits of a phone number become `XXXX`. */
export function maskNumber(value: string): string {
  return /^\+?\d{5,}$/.test(value) ? `${value.slice(0, -4)}XXXX` : value;
}

/**
 * The Message resource with exactly the properties of Twilio's `api.v2010.account.message` schema.
 * `extensions` adds `status_callback`, which Twilio's resource does NOT have (opt-in, for old tools).
 */
export function toTwilioJson(
  message: StoredMessage,
  now: number,
  extensions = false,
): Record<string, unknown> {
  const state = stateAt(message, now);
  const redacted = message.redacted === true;
  const from = message.from !== '' ? message.from : state.sentAt === null ? null : POOL_SENDER;
  const json: Record<string, unknown> = {
    account_sid: message.accountSid,
    api_version: API_VERSION,
    body: redacted ? '' : message.body,
    date_created: rfc2822(message.acceptedAt),
    date_sent: state.sentAt === null ? null : rfc2822(state.sentAt),
    date_updated: rfc2822(state.updatedAt),
    direction: 'outbound-api',
    error_code: state.errorCode,
    error_message: state.errorMessage,
    from: from !== null && redacted ? maskNumber(from) : from,
    messaging_service_sid: message.messagingServiceSid ?? null,
    num_media: '0',
    // Twilio reports 0 segments for a messaging service message until a sender is assigned.
    num_segments: message.messagingServiceSid && state.sentAt === null ? '0' : String(message.numSegments),
    price: null,
    price_unit: 'USD',
    sid: message.sid,
    status: state.status,
    subresource_uris: {
      media: `/${API_VERSION}/Accounts/${message.accountSid}/Messages/${message.sid}/Media.json`,
      feedback: `/${API_VERSION}/Accounts/${message.accountSid}/Messages/${message.sid}/Feedback.json`,
    },
    to: redacted ? maskNumber(message.to) : message.to,
    uri: messagePath(message.accountSid, message.sid),
  };
  if (extensions) json.status_callback = message.statusCallback;
  return json;
}

/** The ledger view: no number, no body. */
export function toLedgerEntry(message: StoredMessage, now: number): Record<string, unknown> {
  const state = stateAt(message, now);
  return {
    id: message.sid,
    client_reference: message.clientReference,
    destination_fingerprint: message.destinationFingerprint,
    accepted_at: new Date(message.acceptedAt).toISOString(),
    status: state.status,
    error_code: state.errorCode,
    validity_period_seconds: message.validityPeriodSeconds,
    account_sid: message.accountSid,
    messaging_service_sid: message.messagingServiceSid ?? null,
    redacted: message.redacted === true,
    deleted: message.deleted === true,
    receipts: message.receiptFault ?? 'none',
  };
}
