/**
 * Fault plans of the provider simulator (docs/design.md#local-stack). Plans run in lanes: the send
 * faults (what happens to one send request, `hang` included) share one lane, and each message
 * fault (`redaction`, `list_lag`, `receipt_delay`, `receipt_loss`, `receipt_duplicate`,
 * `fail_not_sent`, `queue_delay`: what happens to an accepted message afterwards) has a lane of its own, so a
 * send fault and message faults can apply to the same send. Within a lane, plans are consumed in
 * order: the first plan that still has budget is the active one; an exhausted plan is dropped.
 * `count` counts affected sends (for `hang`, held requests). The outages (`down`, `brownout`)
 * last `ms` from when they are set and then end on their own (../kernel.ts): `down` closes the
 * listener; `brownout` is a lane of its own, tried before the send lane.
 */

import { type ModesWhere, modesWhere } from './fault-catalogue.js';
import { NOT_SENT_ERRORS } from './messages.js';

/**
 * Faults about one send request: how (and whether) it is answered and recorded (the catalogue's
 * `request` lane: ./fault-catalogue.ts).
 */
export const SEND_FAULT_MODES = modesWhere('lane', 'request');

/**
 * Faults about an accepted message: how reads show it and what happens to its receipts (the
 * catalogue's `message` lane). `list_lag`, `receipt_delay` and `queue_delay` take `ms`;
 * `fail_not_sent` takes `error_code` (one of {@link NOT_SENT_CODES}; default 30001), and the
 * message is never sent; `queue_delay` keeps it `queued` (no `date_sent`), sent after messages
 * created later.
 */
export const MESSAGE_FAULT_MODES = modesWhere('lane', 'message');

/**
 * The provider as a whole, for `ms` (the catalogue's `outage` lane): `down` refuses connections,
 * `brownout` accepts a share (`probability`) of well-formed sends and never answers them.
 */
export const OUTAGE_FAULT_MODES = modesWhere('lane', 'outage');

/** Every fault the simulator can inject. */
export const ALL_FAULT_MODES: readonly FaultMode[] = [
  ...SEND_FAULT_MODES,
  ...MESSAGE_FAULT_MODES,
  ...OUTAGE_FAULT_MODES,
];

/**
 * The send faults, under their original name: tools that rotate through "every fault" (the chaos
 * scenario) keep their seeded schedules until they opt into {@link MESSAGE_FAULT_MODES}.
 */
export const FAULT_MODES = SEND_FAULT_MODES;

export type SendFaultMode = ModesWhere<'lane', 'request'>;
export type MessageFaultMode = ModesWhere<'lane', 'message'>;
export type OutageFaultMode = ModesWhere<'lane', 'outage'>;
export type FaultMode = SendFaultMode | MessageFaultMode | OutageFaultMode;

/** One active plan. `remaining` null = until cleared. */
export interface FaultPlan {
  readonly mode: FaultMode;
  remaining: number | null;
  readonly probability: number;
  /** Only for `rate_limited`: the Retry-After header value, in seconds. */
  readonly retryAfterSeconds: number;
  /** Only for `list_lag`, `receipt_delay`, `queue_delay` (per message) and the outages (how long they last): in ms. */
  readonly ms: number;
  /** Only for `fail_not_sent`: the Twilio error code the message fails with. */
  readonly errorCode: number;
}

/** The JSON shape of a plan as the control API shows it. */
export interface FaultPlanView {
  readonly mode: FaultMode;
  readonly count: number | null;
  readonly probability: number;
  readonly retry_after_seconds?: number;
  readonly ms?: number;
  readonly error_code?: number;
}

export type ParsedPlans =
  | { readonly ok: true; readonly plans: FaultPlan[] }
  | { readonly ok: false; readonly message: string };

const DEFAULT_RETRY_AFTER_SECONDS = 1;
/**
 * Twilio's documented "failed, never handed to a carrier" codes the `fail_not_sent` fault takes
 * (30001 queue overflow, 30036 validity expired, Twilio's internal errors, account suspension, geo
 * permissions, SMS pumping protection): the keys of {@link NOT_SENT_ERRORS}.
 */
export const NOT_SENT_CODES: readonly number[] = Object.keys(NOT_SENT_ERRORS).map(Number);
/** Queue overflow: the `fail_not_sent` default. */
const DEFAULT_NOT_SENT_CODE = 30001;
const MODES_WITH_MS: readonly FaultMode[] = modesWhere('timed', true);

function isFaultMode(value: unknown): value is FaultMode {
  return typeof value === 'string' && (ALL_FAULT_MODES as readonly string[]).includes(value);
}

const isSendMode = (mode: FaultMode): mode is SendFaultMode =>
  (SEND_FAULT_MODES as readonly string[]).includes(mode);

function parseOne(input: unknown, index: number): FaultPlan | string {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return `plan ${index}: not an object`;
  const raw = input as Record<string, unknown>;
  if (!isFaultMode(raw.mode)) return `plan ${index}: mode must be one of ${ALL_FAULT_MODES.join(', ')}`;
  const count = raw.count;
  if (count !== undefined && count !== null && !(Number.isInteger(count) && (count as number) > 0)) {
    return `plan ${index}: count must be a positive integer`;
  }
  const probability = raw.probability;
  if (
    probability !== undefined &&
    probability !== null &&
    !(typeof probability === 'number' && probability >= 0 && probability <= 1)
  ) {
    return `plan ${index}: probability must be a number in [0, 1]`;
  }
  const retryAfter = raw.retry_after_seconds;
  if (retryAfter !== undefined && !(Number.isInteger(retryAfter) && (retryAfter as number) >= 0)) {
    return `plan ${index}: retry_after_seconds must be a non-negative integer`;
  }
  const ms = raw.ms;
  if (MODES_WITH_MS.includes(raw.mode) && !(Number.isInteger(ms) && (ms as number) > 0)) {
    return `plan ${index}: ${raw.mode} needs ms, a positive integer`;
  }
  if (raw.mode === 'down' && ((count ?? null) !== null || (probability ?? 1) !== 1)) {
    return `plan ${index}: down takes ms only (every connection is refused while it lasts)`;
  }
  const errorCode = raw.error_code;
  if (errorCode !== undefined && !(typeof errorCode === 'number' && NOT_SENT_CODES.includes(errorCode))) {
    return `plan ${index}: error_code must be one of ${NOT_SENT_CODES.join(', ')}`;
  }
  return {
    mode: raw.mode,
    remaining: typeof count === 'number' ? count : null,
    probability: typeof probability === 'number' ? probability : 1,
    retryAfterSeconds: typeof retryAfter === 'number' ? retryAfter : DEFAULT_RETRY_AFTER_SECONDS,
    ms: typeof ms === 'number' ? ms : 0,
    errorCode: typeof errorCode === 'number' ? errorCode : DEFAULT_NOT_SENT_CODE,
  };
}

/** Parses `{mode, count?, probability?, retry_after_seconds?, ms?, error_code?}` or an array of them. */
export function parseFaultPlans(input: unknown): ParsedPlans {
  const list = Array.isArray(input) ? input : [input];
  if (list.length === 0) return { ok: false, message: 'at least one plan is required' };
  const plans: FaultPlan[] = [];
  for (const [index, item] of list.entries()) {
    const parsed = parseOne(item, index);
    if (typeof parsed === 'string') return { ok: false, message: parsed };
    plans.push(parsed);
  }
  return { ok: true, plans };
}

/** The message faults that fired for one accepted message. */
export type MessageFaults = Partial<Record<MessageFaultMode, FaultPlan>>;

/** The active fault plans and their consumption. */
export class FaultSchedule {
  private plans: FaultPlan[] = [];

  constructor(private readonly random: () => number = Math.random) {}

  /** Replaces the plan list. */
  set(plans: FaultPlan[]): void {
    this.plans = plans;
  }

  clear(): void {
    this.plans = [];
  }

  /** Removes `plan` (an outage that ended); a no-op when it is gone. */
  drop(plan: FaultPlan): void {
    this.plans = this.plans.filter((p) => p !== plan);
  }

  view(): FaultPlanView[] {
    return this.plans.map((p) => ({
      mode: p.mode,
      count: p.remaining,
      probability: p.probability,
      ...(p.mode === 'rate_limited' ? { retry_after_seconds: p.retryAfterSeconds } : {}),
      ...(MODES_WITH_MS.includes(p.mode) ? { ms: p.ms } : {}),
      ...(p.mode === 'fail_not_sent' ? { error_code: p.errorCode } : {}),
    }));
  }

  /** Whether a plan of `mode` is in the list (active or waiting in its lane). */
  has(mode: FaultMode): boolean {
    return this.plans.some((p) => p.mode === mode);
  }

  /**
   * `hang` holds every Messages API request (sends and lookups). Returns true, consuming one from
   * the count, when the active send-lane plan is a hang that fires for this request.
   */
  takeHang(): boolean {
    const head = this.head((p) => isSendMode(p.mode));
    if (head === undefined || head.mode !== 'hang') return false;
    return this.fire(head) !== null;
  }

  /** The send fault for one well-formed send, consuming one from the active plan's count; null = none. */
  takeForSend(): FaultPlan | null {
    const head = this.head((p) => isSendMode(p.mode));
    if (head === undefined || head.mode === 'hang') return null;
    return this.fire(head);
  }

  /** The active `brownout`, when it fires for this well-formed send (consuming one from its count); null = none. */
  takeBrownout(): FaultPlan | null {
    const head = this.head((p) => p.mode === 'brownout');
    return head === undefined ? null : this.fire(head);
  }

  /** The message faults for one accepted message: each lane's active plan, if it fires. */
  takeForMessage(): MessageFaults {
    const fired: MessageFaults = {};
    for (const mode of MESSAGE_FAULT_MODES) {
      const head = this.head((p) => p.mode === mode);
      const plan = head === undefined ? null : this.fire(head);
      if (plan !== null) fired[mode] = plan;
    }
    return fired;
  }

  private head(inLane: (plan: FaultPlan) => boolean): FaultPlan | undefined {
    return this.plans.find(inLane);
  }

  private fire(plan: FaultPlan): FaultPlan | null {
    // probability 1 must always fire and 0 never: random() is in [0, 1).
    if (!(this.random() < plan.probability)) return null;
    if (plan.remaining !== null) {
      plan.remaining -= 1;
      if (plan.remaining <= 0) this.plans = this.plans.filter((p) => p !== plan);
    }
    return plan;
  }
}
