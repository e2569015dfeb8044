/**
 * Fault plans of the provider simulator (DESIGN.md section 8). A plan list is consumed in order:
 * the first plan that still has budget is the active one; an exhausted plan is dropped.
 */

/** Every fault the simulator can inject. */
export const FAULT_MODES = [
  'timeout_before_accept',
  'timeout_after_accept',
  'error_5xx_before_accept',
  'error_5xx_after_accept',
  'rate_limited',
  'reject_permanent',
  'hang',
] as const;

export type FaultMode = (typeof FAULT_MODES)[number];

/** One active plan. `remaining` null = until cleared. */
export interface FaultPlan {
  readonly mode: FaultMode;
  remaining: number | null;
  readonly probability: number;
  /** Only for `rate_limited`: the Retry-After header value, in seconds. */
  readonly retryAfterSeconds: number;
}

/** The JSON shape of a plan as the control API shows it. */
export interface FaultPlanView {
  readonly mode: FaultMode;
  readonly count: number | null;
  readonly probability: number;
  readonly retry_after_seconds?: number;
}

export type ParsedPlans =
  | { readonly ok: true; readonly plans: FaultPlan[] }
  | { readonly ok: false; readonly message: string };

const DEFAULT_RETRY_AFTER_SECONDS = 1;

function isFaultMode(value: unknown): value is FaultMode {
  return typeof value === 'string' && (FAULT_MODES as readonly string[]).includes(value);
}

function parseOne(input: unknown, index: number): FaultPlan | string {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return `plan ${index}: not an object`;
  const raw = input as Record<string, unknown>;
  if (!isFaultMode(raw.mode)) return `plan ${index}: mode must be one of ${FAULT_MODES.join(', ')}`;
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
  return {
    mode: raw.mode,
    remaining: typeof count === 'number' ? count : null,
    probability: typeof probability === 'number' ? probability : 1,
    retryAfterSeconds: typeof retryAfter === 'number' ? retryAfter : DEFAULT_RETRY_AFTER_SECONDS,
  };
}

/** Parses `{mode, count?, probability?, retry_after_seconds?}` or an array of them. */
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

  view(): FaultPlanView[] {
    return this.plans.map((p) => ({
      mode: p.mode,
      count: p.remaining,
      probability: p.probability,
      ...(p.mode === 'rate_limited' ? { retry_after_seconds: p.retryAfterSeconds } : {}),
    }));
  }

  /**
   * `hang` holds every Messages API request (sends and lookups). Returns true, consuming one from
   * the count, when the active plan is a hang that fires for this request.
   */
  takeHang(): boolean {
    const head = this.plans[0];
    if (head === undefined || head.mode !== 'hang') return false;
    return this.fire(head) !== null;
  }

  /** The fault for one well-formed send, consuming one from the active plan's count; null = none. */
  takeForSend(): FaultPlan | null {
    const head = this.plans[0];
    if (head === undefined || head.mode === 'hang') return null;
    return this.fire(head);
  }

  private fire(head: FaultPlan): FaultPlan | null {
    // probability 1 must always fire and 0 never: random() is in [0, 1).
    if (!(this.random() < head.probability)) return null;
    if (head.remaining !== null) {
      head.remaining -= 1;
      if (head.remaining <= 0) this.plans.shift();
    }
    return head;
  }
}
