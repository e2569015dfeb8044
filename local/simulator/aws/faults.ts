/**
 * Fault plans of the AWS simulator: the same control API and modes as the Twilio simulator
 * (docs/design.md#local-stack), applied to the AWS protocols. Send modes apply to `Publish` (SNS) and
 * `SendTextMessage` (End User Messaging) requests; receipt modes to End User Messaging events;
 * `list_lag` to SNS delivery-status log lines (how long a line stays invisible to FilterLogEvents).
 * Each family has its own queue: the first plan of a family with budget left is that family's
 * active plan; an exhausted plan is dropped. The outages (`down`, `brownout`) last `delay_ms`
 * (or `ms`) from when they are set and end on their own (../kernel.ts): `down` closes the
 * listener; `brownout` is tried before the send family, for `Publish` and `SendTextMessage`.
 */

import { type CatalogueMode, type ModesWhere, modesWhere } from '../fault-catalogue.js';

/** The catalogue's AWS families (../fault-catalogue.ts). */
export const SEND_FAULT_MODES = modesWhere('aws', 'send');
export const RECEIPT_FAULT_MODES = modesWhere('aws', 'receipt');
/**
 * `redaction` is accepted for a uniform control API; neither AWS service redacts what it returns.
 * `queue_delay` holds the message that much longer before hand-off (a sender over its throughput
 * is queued); its TTL still counts from acceptance.
 */
export const OTHER_FAULT_MODES = modesWhere('aws', 'other');
/** The provider as a whole, for a while (../fault-catalogue.ts). */
export const OUTAGE_FAULT_MODES = modesWhere('aws', 'outage');
export const AWS_FAULT_MODES: readonly AwsFaultMode[] = [
  ...SEND_FAULT_MODES,
  ...RECEIPT_FAULT_MODES,
  ...OTHER_FAULT_MODES,
  ...OUTAGE_FAULT_MODES,
];

export type AwsFaultMode = CatalogueMode;
const TIMED_MODES: readonly AwsFaultMode[] = modesWhere('timed', true);
type SendMode = ModesWhere<'aws', 'send'>;
type ReceiptMode = ModesWhere<'aws', 'receipt'>;

/** One active plan. `remaining` null = until cleared. */
export interface AwsFaultPlan {
  readonly mode: AwsFaultMode;
  remaining: number | null;
  readonly probability: number;
  readonly retryAfterSeconds: number;
  /** `receipt_delay`, `list_lag` and `queue_delay`: milliseconds; the outages: how long they last. */
  readonly delayMs: number;
}

export type ParsedAwsPlans =
  | { readonly ok: true; readonly plans: AwsFaultPlan[] }
  | { readonly ok: false; readonly message: string };

const isMode = (value: unknown): value is AwsFaultMode =>
  typeof value === 'string' && (AWS_FAULT_MODES as readonly string[]).includes(value);

function parseOne(input: unknown, index: number): AwsFaultPlan | string {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return `plan ${index}: not an object`;
  const raw = input as Record<string, unknown>;
  if (!isMode(raw.mode)) return `plan ${index}: mode must be one of ${AWS_FAULT_MODES.join(', ')}`;
  const { count, probability } = raw;
  if (count !== undefined && count !== null && !(Number.isInteger(count) && (count as number) > 0)) {
    return `plan ${index}: count must be a positive integer`;
  }
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
  const delay = raw.delay_ms ?? raw.ms;
  if (delay !== undefined && !(Number.isInteger(delay) && (delay as number) >= 0)) {
    return `plan ${index}: delay_ms must be a non-negative integer`;
  }
  // An outage without an end would leave the simulator unreachable (down) or unknowable: no default.
  if ((OUTAGE_FAULT_MODES as readonly string[]).includes(raw.mode) && !((delay as number) > 0)) {
    return `plan ${index}: ${raw.mode} needs delay_ms (or ms), a positive integer`;
  }
  if (raw.mode === 'down' && ((count ?? null) !== null || (probability ?? 1) !== 1)) {
    return `plan ${index}: down takes delay_ms only (every connection is refused while it lasts)`;
  }
  return {
    mode: raw.mode,
    remaining: typeof count === 'number' ? count : null,
    probability: typeof probability === 'number' ? probability : 1,
    retryAfterSeconds: typeof retryAfter === 'number' ? retryAfter : 1,
    delayMs: typeof delay === 'number' ? delay : 5_000,
  };
}

/** Parses `{mode, count?, probability?, retry_after_seconds?, delay_ms?}` or an array of them. */
export function parseAwsFaultPlans(input: unknown): ParsedAwsPlans {
  const list = Array.isArray(input) ? input : [input];
  if (list.length === 0) return { ok: false, message: 'at least one plan is required' };
  const plans: AwsFaultPlan[] = [];
  for (const [index, item] of list.entries()) {
    const parsed = parseOne(item, index);
    if (typeof parsed === 'string') return { ok: false, message: parsed };
    plans.push(parsed);
  }
  return { ok: true, plans };
}

/** The active plans and their consumption. */
export class AwsFaultSchedule {
  private plans: AwsFaultPlan[] = [];

  constructor(private readonly random: () => number = Math.random) {}

  set(plans: AwsFaultPlan[]): void {
    this.plans = plans;
  }

  clear(): void {
    this.plans = [];
  }

  /** Removes `plan` (an outage that ended); a no-op when it is gone. */
  drop(plan: AwsFaultPlan): void {
    this.plans = this.plans.filter((p) => p !== plan);
  }

  view(): Record<string, unknown>[] {
    return this.plans.map((p) => ({
      mode: p.mode,
      count: p.remaining,
      probability: p.probability,
      ...(p.mode === 'rate_limited' ? { retry_after_seconds: p.retryAfterSeconds } : {}),
      ...(TIMED_MODES.includes(p.mode) ? { delay_ms: p.delayMs } : {}),
    }));
  }

  /** `hang` holds every API request (sends and reads) while it is the first plan. */
  takeHang(): boolean {
    const head = this.plans[0];
    return head?.mode === 'hang' && this.fire(head);
  }

  takeForSend(): (AwsFaultPlan & { readonly mode: SendMode }) | null {
    return this.take((SEND_FAULT_MODES as readonly string[]).includes.bind(SEND_FAULT_MODES)) as
      | (AwsFaultPlan & { readonly mode: SendMode })
      | null;
  }

  takeForReceipt(): (AwsFaultPlan & { readonly mode: ReceiptMode }) | null {
    return this.take((RECEIPT_FAULT_MODES as readonly string[]).includes.bind(RECEIPT_FAULT_MODES)) as
      | (AwsFaultPlan & { readonly mode: ReceiptMode })
      | null;
  }

  /** The active `brownout`, when it fires for this well-formed send; null = none. */
  takeBrownout(): AwsFaultPlan | null {
    return this.take((mode) => mode === 'brownout');
  }

  /** How much longer a new message waits before hand-off, in ms (0 = none). */
  takeQueueDelay(): number {
    const plan = this.take((mode) => mode === 'queue_delay');
    return plan === null ? 0 : plan.delayMs;
  }

  /** The extra invisibility of a new delivery-status log line, in ms (0 = none). */
  takeListLag(): number {
    const plan = this.take((mode) => mode === 'list_lag');
    return plan === null ? 0 : plan.delayMs;
  }

  private take(inFamily: (mode: string) => boolean): AwsFaultPlan | null {
    if (this.plans[0]?.mode === 'hang') return null;
    const head = this.plans.find((plan) => inFamily(plan.mode));
    return head !== undefined && this.fire(head) ? head : null;
  }

  private fire(plan: AwsFaultPlan): boolean {
    // probability 1 must always fire and 0 never: random() is in [0, 1).
    if (!(this.random() < plan.probability)) return false;
    if (plan.remaining !== null) {
      plan.remaining -= 1;
      if (plan.remaining <= 0) this.plans.splice(this.plans.indexOf(plan), 1);
    }
    return true;
  }
}
