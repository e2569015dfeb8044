/**
 * The AWS simulator's state and message lives (./server.ts): accepted messages, their timelines
 * (hand-off, delivery, or expiry before hand-off), the End User Messaging events they publish as
 * SNS HTTP notifications, the SNS delivery-status lines, and the chaos runs' SNS test oracle.
 */
import { randomUUID } from 'node:crypto';
import type { MessageLedger, SimulatorKernel } from '../kernel.js';
import type { LedgerFormat } from '../ledger-file.js';
import type { AwsFaultSchedule } from './faults.js';
import { EVENT_RETRIES, POST_TIMEOUT_MS } from './wire.js';

export type SimStatus = 'queued' | 'sent' | 'delivered' | 'failed';

export interface Step {
  readonly at: number;
  readonly status: SimStatus;
  /** End User Messaging event type of this step. */
  readonly eventType: string;
  /** The event's `isFinal` when it is not the status's own (a delivered or failed status is final). */
  readonly final?: boolean;
  /** A Monitor rule's blocking recommendation (its own event), not a step of the message's life. */
  readonly recommendation?: true;
}

export interface AwsMessage {
  readonly id: string;
  readonly protocol: 'sns' | 'eum';
  /** In memory only: the delivery-status log line carries it, as SNS's does. */
  readonly to: string;
  readonly clientReference: string | null;
  readonly destinationFingerprint: string;
  readonly contentFingerprint: string;
  readonly acceptedAt: number;
  readonly ttlSeconds: number | null;
  readonly timeline: readonly Step[];
  /** SNS only: when the delivery-status line becomes visible, and whether it was sampled. */
  readonly logVisibleAt: number;
  readonly logged: boolean;
  feedback: string | null;
  /** Events of the message that the `receipt_loss` fault dropped (the ledger's `receipts`). */
  eventsLost: number;
  /** End User Messaging: a Monitor protect rule would have blocked it; it was sent all the same. */
  readonly protectMonitor?: boolean;
}

/** How the ledger file writes an AWS message: by id, the number sealed. */
export const AWS_LEDGER_FORMAT: LedgerFormat<AwsMessage> = { id: (m) => m.id, sealed: ['to'] };

export interface RequestRecord {
  received_at: string;
  protocol: 'sns' | 'eum';
  client_reference: string | null;
  fault: string | null;
  outcome: 'recorded' | 'not_recorded';
  message_id: string | null;
  http_status: number | null;
}

export interface ReceiptRecord {
  readonly posted_at: string;
  readonly message_id: string;
  readonly client_reference: string | null;
  readonly event_type: string;
  readonly notification_id: string;
  readonly http_status: number | null;
  readonly duplicate: boolean;
}

/** One AWS simulator's state and settings. */
export interface AwsState {
  readonly kernel: SimulatorKernel;
  readonly ledger: MessageLedger<AwsMessage>;
  readonly faults: AwsFaultSchedule;
  readonly requests: RequestRecord[];
  readonly receipts: ReceiptRecord[];
  /**
   * Test oracle (chaos runs only): SNS returns and logs no reference, so the ledger cannot name
   * the key of an SNS message by itself. A driver registers each key's secret; a published body
   * carrying it is attributed to `<key>#<n>`, n counting that key's Publish requests.
   */
  readonly oracle: Map<string, string>;
  readonly oracleRequests: Map<string, number>;
  readonly fingerprint: (value: string) => string;
  readonly random: () => number;
  readonly delays: { readonly sent: number; readonly delivered: number };
  readonly eventsTopicArn: string;
  readonly successGroup: string;
  readonly failureGroup: string;
  readonly logLagMs: number;
  readonly samplingRate: number;
  readonly eventDelayMs: number;
  /** Up to this much more delay per event, drawn at random: no guaranteed order. */
  readonly eventReorderMs: number;
  /** Share of events SNS delivers twice (same `MessageId`): at-least-once delivery. */
  readonly eventDuplicateShare: number;
  /** Share of handed-off End User Messaging messages whose carrier never sends a final result. */
  readonly carrierSilentShare: number;
  /** After this long from the request, a message with no final carrier result gets TEXT_UNKNOWN. */
  readonly unknownAfterMs: number;
  /** Share of End User Messaging messages a Monitor protect rule would have blocked (they are sent). */
  readonly protectMonitorShare: number;
  readonly eventRetryDelayMs: number;
  readonly configurationSets: readonly string[] | undefined;
  /** Where End User Messaging events are posted; none when unset. */
  eventsUrl: string | undefined;
}

export function oracleKeyOf(sim: AwsState, body: string): string | null {
  if (sim.oracle.size === 0) return null;
  for (const token of body.split(/\s+/)) {
    const key = sim.oracle.get(token.replace(/[.,;:!?)]+$/, ''));
    if (key !== undefined) return key;
  }
  return null;
}

/**
 * Hand-off, then delivery; or, when the TTL ends first (or `fail_not_sent`), never handed off; or,
 * for a message whose carrier never answers (`carrierSilent`), hand-off and then TEXT_UNKNOWN when
 * the carrier-result horizon ends: "After 72 hours, if AWS End User Messaging SMS has not received a
 * final event from a carrier, the service will automatically return an UNKNOWN messageStatus"
 * (user guide, "Event destinations").
 */
function timelineFor(
  sim: AwsState,
  acceptedAt: number,
  ttlSeconds: number | null,
  notSent: boolean,
  queueDelayMs: number,
  carrierSilent = false,
): Step[] {
  const handOff = acceptedAt + sim.delays.sent + queueDelayMs;
  const expiry = ttlSeconds === null ? Number.POSITIVE_INFINITY : acceptedAt + ttlSeconds * 1000;
  const queued: Step = { at: acceptedAt, status: 'queued', eventType: 'TEXT_QUEUED' };
  if (notSent || handOff > expiry) {
    // End User Messaging keeps trying to hand the message off until its TimeToLive ends and only then
    // reports TEXT_TTL_EXPIRED (SendTextMessage `TimeToLive`); without a TTL (SNS) the failure is at hand-off.
    const at = Number.isFinite(expiry) ? expiry : handOff;
    return [queued, { at, status: 'failed', eventType: 'TEXT_TTL_EXPIRED' }];
  }
  if (carrierSilent) {
    return [
      queued,
      { at: handOff, status: 'sent', eventType: 'TEXT_SUCCESSFUL' },
      { at: acceptedAt + sim.unknownAfterMs, status: 'sent', eventType: 'TEXT_UNKNOWN', final: true },
    ];
  }
  return [
    queued,
    { at: handOff, status: 'sent', eventType: 'TEXT_SUCCESSFUL' },
    {
      at: acceptedAt + Math.max(sim.delays.delivered, sim.delays.sent) + queueDelayMs,
      status: 'delivered',
      eventType: 'TEXT_DELIVERED',
    },
  ];
}

export function statusAt(message: AwsMessage, now: number): SimStatus {
  let status: SimStatus = 'queued';
  for (const step of message.timeline) if (step.at <= now) status = step.status;
  return status;
}

async function postEvent(
  sim: AwsState,
  message: AwsMessage,
  step: Step,
  notificationId: string,
  duplicate: boolean,
  retry = 0,
): Promise<void> {
  const url = sim.eventsUrl;
  if (url === undefined) return;
  const event = {
    eventType: step.eventType,
    eventVersion: '1.0',
    eventTimestamp: step.at,
    // A Monitor recommendation is published final: the harshest reading (docs/providers/aws.md).
    isFinal: step.final ?? (step.recommendation || step.status === 'delivered' || step.status === 'failed'),
    originationPhoneNumber: '+12065550152',
    destinationPhoneNumber: message.to,
    isInternationalSend: false,
    messageId: message.id,
    messageRequestTimestamp: message.acceptedAt,
    messageEncoding: 'GSM',
    messageType: 'TRANSACTIONAL',
    messageStatus: step.eventType.replace(/^TEXT_/, ''),
    messageStatusDescription: step.status === 'failed' ? 'Message expired before hand-off' : 'ok',
    ...(message.clientReference === null ? {} : { context: { client_reference: message.clientReference } }),
    totalMessageParts: 1,
    // Monitor mode includes "the SMS protect blocking recommendation in metrics and events".
    ...(message.protectMonitor ? { protectConfiguration: MONITOR_RECOMMENDATION } : {}),
  };
  const notification = {
    Type: 'Notification',
    MessageId: notificationId,
    TopicArn: sim.eventsTopicArn,
    Message: JSON.stringify(event),
    Timestamp: sim.kernel.isoNow(),
  };
  let status: number | null = null;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'text/plain; charset=UTF-8',
        'x-amz-sns-message-type': 'Notification',
        'x-amz-sns-message-id': notificationId,
        'x-amz-sns-topic-arn': sim.eventsTopicArn,
      },
      body: JSON.stringify(notification),
      signal: AbortSignal.any([sim.kernel.stopping, AbortSignal.timeout(POST_TIMEOUT_MS)]),
      redirect: 'manual',
    });
    await response.arrayBuffer().catch(() => undefined);
    status = response.status;
  } catch {
    status = null;
  }
  sim.receipts.push({
    posted_at: sim.kernel.isoNow(),
    message_id: message.id,
    client_reference: message.clientReference,
    event_type: step.eventType,
    notification_id: notificationId,
    http_status: status,
    duplicate,
  });
  sim.kernel.log(
    `event ${step.eventType} id=${message.id} http=${status ?? 'failed'}${duplicate ? ' (duplicate)' : ''}`,
  );
  // SNS's default HTTP delivery policy: 3 retries, 20 s apart, on a 5xx or no answer (never on 4xx).
  if ((status === null || status >= 500) && retry < EVENT_RETRIES) {
    sim.kernel.later(
      sim.eventRetryDelayMs,
      () => void postEvent(sim, message, step, notificationId, duplicate, retry + 1),
    );
  }
}

/** What a Monitor-mode message's events carry: the rule's mode (the service model's `ProtectStatus`). */
const MONITOR_RECOMMENDATION = {
  protectConfigurationId: 'protect-simulated',
  protectStatus: 'MONITOR',
} as const;

/** A draw in [0, max): none (and no draw of the random source) when max is 0. */
const jitter = (sim: AwsState, max: number) => (max > 0 ? Math.floor(sim.random() * max) : 0);

function scheduleEvents(sim: AwsState, message: AwsMessage) {
  for (const step of message.timeline) {
    const fault = sim.faults.takeForReceipt();
    if (fault?.mode === 'receipt_loss') {
      message.eventsLost += 1;
      continue;
    }
    const notificationId = randomUUID();
    const delay =
      step.at -
      sim.kernel.clock.now() +
      sim.eventDelayMs +
      jitter(sim, sim.eventReorderMs) +
      (fault?.mode === 'receipt_delay' ? fault.delayMs : 0);
    sim.kernel.later(delay, () => void postEvent(sim, message, step, notificationId, false));
    // SNS is at-least-once: a redelivery keeps the notification's MessageId, and comes in no order.
    const duplicate =
      fault?.mode === 'receipt_duplicate' ||
      (sim.eventDuplicateShare > 0 && sim.random() < sim.eventDuplicateShare);
    if (duplicate) {
      sim.kernel.later(
        delay + 50 + jitter(sim, sim.eventReorderMs),
        () => void postEvent(sim, message, step, notificationId, true),
      );
    }
  }
}

/** A Monitor rule's recommendation, published as its own event at acceptance (see {@link accept}). */
function withRecommendation(timeline: Step[], acceptedAt: number): Step[] {
  const recommendation: Step = {
    at: acceptedAt,
    status: 'queued',
    eventType: 'TEXT_PROTECT_BLOCKED',
    recommendation: true,
  };
  return [timeline[0] as Step, recommendation, ...timeline.slice(1)];
}

export function accept(
  sim: AwsState,
  protocol: 'sns' | 'eum',
  to: string,
  body: string,
  clientReference: string | null,
  ttlSeconds: number | null,
  notSent: boolean,
): AwsMessage {
  const acceptedAt = sim.kernel.clock.now();
  const eum = protocol === 'eum';
  const carrierSilent = eum && sim.carrierSilentShare > 0 && sim.random() < sim.carrierSilentShare;
  // Monitor mode sends what it would have blocked; the recommendation rides on the message's events.
  const protectMonitor = eum && sim.protectMonitorShare > 0 && sim.random() < sim.protectMonitorShare;
  const lifecycle = timelineFor(
    sim,
    acceptedAt,
    ttlSeconds,
    notSent,
    sim.faults.takeQueueDelay(),
    carrierSilent,
  );
  const timeline = protectMonitor ? withRecommendation(lifecycle, acceptedAt) : lifecycle;
  const outcome = timeline[timeline.length - 1] as Step;
  const success = outcome.status === 'delivered';
  const message: AwsMessage = {
    id: randomUUID(),
    protocol,
    to,
    clientReference,
    destinationFingerprint: sim.fingerprint(to),
    contentFingerprint: sim.fingerprint(body),
    acceptedAt,
    ttlSeconds,
    timeline,
    logVisibleAt: outcome.at + sim.logLagMs + sim.faults.takeListLag(),
    logged: !success || sim.random() < sim.samplingRate,
    feedback: null,
    eventsLost: 0,
    ...(protectMonitor ? { protectMonitor } : {}),
  };
  sim.ledger.add(message);
  if (protocol === 'eum') scheduleEvents(sim, message);
  return message;
}

/**
 * After a restart, End User Messaging's events still due are published; those that fell due
 * while the simulator was down went to a service that was down with it (SNS's retries included).
 */
export function replayDueEvents(sim: AwsState): void {
  const restartedAt = sim.kernel.clock.now();
  for (const message of sim.ledger.reloaded) {
    if (message.protocol !== 'eum') continue;
    for (const step of message.timeline) {
      if (step.at < restartedAt) continue;
      const notificationId = randomUUID();
      sim.kernel.later(
        step.at - restartedAt + sim.eventDelayMs,
        () => void postEvent(sim, message, step, notificationId, false),
      );
    }
  }
}

export function isSuccess(message: AwsMessage): boolean {
  return message.timeline[message.timeline.length - 1]?.status === 'delivered';
}

/** A delivery-status line as SNS writes it (the destination in clear, as in the real logs). */
export function deliveryLine(message: AwsMessage, at: number) {
  return {
    notification: {
      messageId: message.id,
      timestamp: new Date(message.acceptedAt).toISOString().replace('T', ' ').replace('Z', ''),
    },
    delivery: {
      phoneCarrier: 'Simulated',
      mnc: 800,
      destination: message.to,
      priceInUSD: 0.00645,
      smsType: 'Transactional',
      mcc: 310,
      providerResponse: isSuccess(message)
        ? 'Message has been accepted by phone carrier'
        : 'Unknown error attempting to reach phone',
      dwellTimeMs: Math.max(0, at - message.acceptedAt),
      dwellTimeMsUntilDeviceAck: Math.max(0, at - message.acceptedAt),
    },
    status: isSuccess(message) ? 'SUCCESS' : 'FAILURE',
  };
}

export function ledgerEntry(message: AwsMessage, now: number) {
  return {
    id: message.id,
    protocol: message.protocol,
    client_reference: message.clientReference,
    destination_fingerprint: message.destinationFingerprint,
    content_fingerprint: message.contentFingerprint,
    accepted_at: new Date(message.acceptedAt).toISOString(),
    status: statusAt(message, now),
    handed_off: message.timeline.some((s) => s.status === 'sent' && s.at <= now),
    ...(message.ttlSeconds === null ? {} : { validity_period_seconds: message.ttlSeconds }),
    ...(message.feedback === null ? {} : { feedback: message.feedback }),
    ...(message.protectMonitor ? { protect: 'monitor' } : {}),
    // As in the Twilio simulator's ledger: `lost` when no event of the message was ever posted.
    receipts:
      message.protocol === 'eum' &&
      message.timeline.length > 0 &&
      message.eventsLost === message.timeline.length
        ? 'lost'
        : 'none',
  };
}
