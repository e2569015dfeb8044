/**
 * The one fault catalogue of the simulators (docs/design.md#local-stack): every fault mode, once, with
 * where it acts in the Twilio simulator (./faults.ts) and in the AWS simulator (./aws/faults.ts).
 * Every list of modes (the simulators' lanes, the chaos scenario's rotation, the zero-SMS
 * classification) is derived from it, so a new mode is one entry here.
 *
 * The order is load-bearing: the chaos scenario picks modes from the derived lists with a seeded
 * random source, so reordering entries changes every seeded schedule.
 */

/** Where a mode acts. */
interface FaultEntry {
  /**
   * `request`: what happens to one send request (how and whether it is answered and recorded);
   * `message`: what happens to an accepted message afterwards. In the Twilio simulator each is
   * a lane (./faults.ts); a `request` fault means the provider may have taken the message.
   * `outage`: the provider as a whole, for a while (`ms`, from when the plan is set; it then ends
   * on its own: the recovery). Outages are never in the `request` lane, so the tools that rotate
   * through every send fault (the chaos scenario) keep their seeded schedules.
   */
  readonly lane: 'request' | 'message' | 'outage';
  /**
   * The AWS simulator's family: `send` faults apply to `Publish` / `SendTextMessage`, `receipt`
   * faults to End User Messaging events, `other` are consumed where they act (./aws/faults.ts),
   * `outage` as in the Twilio simulator.
   */
  readonly aws: 'send' | 'receipt' | 'other' | 'outage';
  /**
   * Whether the plan takes a duration (`ms`; `delay_ms` in the AWS simulator): per message for a
   * `message` mode, how long the plan lasts for an `outage` mode.
   */
  readonly timed: boolean;
}

const CATALOGUE = {
  /** The request is held unanswered; nothing is recorded. */
  timeout_before_accept: { lane: 'request', aws: 'send', timed: false },
  /** The message is accepted, then the request is held unanswered. */
  timeout_after_accept: { lane: 'request', aws: 'send', timed: false },
  /** A 5xx answer; nothing recorded. */
  error_5xx_before_accept: { lane: 'request', aws: 'send', timed: false },
  /** The message is accepted, the answer is a 500. */
  error_5xx_after_accept: { lane: 'request', aws: 'send', timed: false },
  /** The provider's throttling answer (`retry_after_seconds` for Twilio's Retry-After). */
  rate_limited: { lane: 'request', aws: 'send', timed: false },
  /** A permanent refusal of the destination. */
  reject_permanent: { lane: 'request', aws: 'send', timed: false },
  /** Every API request (sends and reads) is held, before authentication. */
  hang: { lane: 'request', aws: 'other', timed: false },
  /** Message Redaction: API reads mask the numbers' last 4 digits and blank the body (Twilio only). */
  redaction: { lane: 'message', aws: 'other', timed: false },
  /** The message stays invisible to list reads (Twilio) or its log line to FilterLogEvents (SNS). */
  list_lag: { lane: 'message', aws: 'other', timed: true },
  /** Every receipt of the message arrives that much later. */
  receipt_delay: { lane: 'message', aws: 'receipt', timed: true },
  /** No receipt of the message is posted. */
  receipt_loss: { lane: 'message', aws: 'receipt', timed: false },
  /** Every receipt is posted twice, with the same idempotency token / notification id. */
  receipt_duplicate: { lane: 'message', aws: 'receipt', timed: false },
  /** Accepted, then never handed to a carrier (Twilio: failed with `error_code`; AWS: expired). */
  fail_not_sent: { lane: 'message', aws: 'send', timed: false },
  /** The message waits that much longer in the provider's queue; its validity still counts from acceptance. */
  queue_delay: { lane: 'message', aws: 'other', timed: true },
  /**
   * The provider is down for `ms`: its listener is closed, so a client's connection is refused
   * (ECONNREFUSED) before any byte of a request is written, which every adapter classifies as not
   * sent. The control API is down with it; the plan ends on its own (./kernel.ts).
   */
  down: { lane: 'outage', aws: 'outage', timed: true },
  /**
   * For `ms`, a share (`probability`) of well-formed sends is accepted into the ledger and never
   * answered: the sender cannot tell whether the provider took the message (an unknown).
   */
  brownout: { lane: 'outage', aws: 'outage', timed: true },
} as const satisfies Record<string, FaultEntry>;

type Catalogue = typeof CATALOGUE;
/** Every fault mode of the simulators. */
export type CatalogueMode = keyof Catalogue;
/** The modes whose entry has `value` under `key`. */
export type ModesWhere<K extends keyof FaultEntry, V> = {
  [M in CatalogueMode]: Catalogue[M][K] extends V ? M : never;
}[CatalogueMode];

/** Every mode, in catalogue order. */
export const CATALOGUE_MODES = Object.keys(CATALOGUE) as CatalogueMode[];

/** The modes whose entry has `value` under `key`, in catalogue order. */
export function modesWhere<K extends keyof FaultEntry, V extends FaultEntry[K]>(
  key: K,
  value: V,
): readonly ModesWhere<K, V>[] {
  return CATALOGUE_MODES.filter((mode) => CATALOGUE[mode][key] === value) as ModesWhere<K, V>[];
}
