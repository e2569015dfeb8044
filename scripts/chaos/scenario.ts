/**
 * The chaos scenario: what each event looks like and which faults are active when. Every value is
 * a pure function of the seed and an index, so a run can be reproduced, and an event can be
 * generated lazily (a `--duration` run does not need to know its event count up front).
 */
import { FAULT_MODES, type FaultMode } from '../../local/simulator/faults.js';
import { deriveIdempotencyKey } from '../../shared/domain/idempotency-key.js';
import { LOCALES, type Locale } from '../../shared/domain/templates.js';
import { type DispatchStep, DispatchStep as Steps } from '../../shared/usecases/dispatch-notification.js';
import { Rng, unitFor } from './prng.js';

/** The knobs of a run's fault mix. Probabilities are per event, per call or per phase as named. */
export interface ChaosMix {
  /** Each event is POSTed 1..this many times concurrently (same body), n with weight 1/n. */
  readonly maxDuplicatePosts: number;
  /** Per event: one more concurrent POST with the same key and a different payload. */
  readonly conflictProbability: number;
  /** Per event: the key comes in the Idempotency-Key header (else it is derived from event_id). */
  readonly headerKeyProbability: number;
  /** Per event: `expires_at` only 6-9 s ahead, so it expires before or during dispatch. */
  readonly shortLifeProbability: number;
  /** Per event: `expires_at` already inside the dispatch margin: must be rejected, nothing stored. */
  readonly tooLateProbability: number;
  /** Per event: 1-3 extra dispatch messages put straight on the queue (duplicate deliveries). */
  readonly extraSqsProbability: number;
  /** Per dispatch step reached: the sender crashes there (InjectedCrashError). */
  readonly crashProbability: number;
  /** Per DynamoDB call of the handlers: a throttling error the application sees. */
  readonly throttleProbability: number;
  /** Per DynamoDB attempt: a throttling error inside the SDK's retry loop (the SDK may absorb it). */
  readonly retriedThrottleProbability: number;
  /** The local runtime hands an SQS batch to a second concurrent invocation. */
  readonly sqsDuplicateProbability: number;
  /** The local runtime delivers a stream batch twice. */
  readonly streamDuplicateProbability: number;
  /** Length of one simulator fault phase. */
  readonly faultPhaseMs: number;
  /** Relative weight of a fault-free phase against 1 for each fault mode. */
  readonly quietPhaseWeight: number;
  /** Per phase: an extra reconciler pass concurrent with the scheduled one. */
  readonly extraReconcilerProbability: number;
  /** Per decryption (sender and reconciler): the cipher fails, as a disabled or changed KMS key would. */
  readonly decryptFailureProbability: number;
  /** Items planted in the due index that this release cannot parse (a newer release's reason code). */
  readonly poisonItems: number;
}

/** The default mix: every fault at a rate that still lets 10,000 events settle in minutes. */
export const DEFAULT_MIX: ChaosMix = {
  maxDuplicatePosts: 10,
  conflictProbability: 0.08,
  headerKeyProbability: 0.5,
  shortLifeProbability: 0.1,
  tooLateProbability: 0.02,
  extraSqsProbability: 0.1,
  crashProbability: 0.02,
  throttleProbability: 0.005,
  retriedThrottleProbability: 0.01,
  sqsDuplicateProbability: 0.15,
  streamDuplicateProbability: 0.15,
  faultPhaseMs: 2_000,
  quietPhaseWeight: 3,
  extraReconcilerProbability: 0.5,
  decryptFailureProbability: 0.03,
  poisonItems: 3,
};

/** What kind of expiry an event has. */
export type EventKind = 'normal' | 'short_life' | 'too_late';

/** The `params` of a request: exactly one secret. */
export type ResetParams = { readonly code: string } | { readonly reset_url: string };

/** One reset event as the chaos client will POST it. */
export interface EventSpec {
  readonly index: number;
  readonly eventId: string;
  /** Sent as the Idempotency-Key header when present. */
  readonly headerKey?: string;
  /** The key the service must use: the header, or the one derived from event_id. */
  readonly idempotencyKey: string;
  readonly locale: Locale;
  readonly phone: string;
  readonly params: ResetParams;
  /** A conflicting payload for the same key, POSTed concurrently with the duplicates. */
  readonly conflictParams?: ResetParams;
  /** How many identical concurrent POSTs (1..maxDuplicatePosts). */
  readonly duplicates: number;
  readonly kind: EventKind;
  /** `expires_at` = time of the POST + this. */
  readonly lifeMs: number;
  /** Delays (ms after admission) of extra dispatch messages put straight on the queue. */
  readonly extraSqsDelaysMs: readonly number[];
}

/** The host of every reset URL the chaos run sends: the privacy scan looks for it anywhere. */
export const RESET_HOST = 'reset.chaos.example';

function paramsFrom(rng: Rng): ResetParams {
  // Codes start with 9 and have 10 digits: no timestamp, TTL or version can be mistaken for one.
  if (rng.chance(0.6)) return { code: `9${rng.digits(9)}` };
  return { reset_url: `https://${RESET_HOST}/r?token=tok_${rng.hex(24)}` };
}

/** A valid, distinct US number per index (415 area code, exchange 200-999). */
export function phoneFor(seed: number, index: number): string {
  const offset = unitFor(seed, 'phone-offset') * 8_000_000;
  const line = 2_000_000 + ((Math.floor(offset) + index * 7_919) % 8_000_000);
  return `+1415${line}`;
}

/** The event at `index` of the run with `seed`. */
export function eventSpec(seed: number, index: number, mix: ChaosMix = DEFAULT_MIX): EventSpec {
  const rng = new Rng(seed, 'event', index);
  const eventId = `chaos-${seed}-${index}`;
  const headerKey = rng.chance(mix.headerKeyProbability) ? `ck-${seed}-${index}.${rng.hex(8)}` : undefined;
  const roll = rng.next();
  const kind: EventKind =
    roll < mix.tooLateProbability
      ? 'too_late'
      : roll < mix.tooLateProbability + mix.shortLifeProbability
        ? 'short_life'
        : 'normal';
  const lifeMs =
    kind === 'too_late'
      ? rng.int(1_000, 4_500)
      : kind === 'short_life'
        ? rng.int(6_000, 9_000)
        : rng.int(2, 30) * 60_000;
  const params = paramsFrom(rng);
  const conflictParams = rng.chance(mix.conflictProbability) ? paramsFrom(rng) : undefined;
  const extra = rng.chance(mix.extraSqsProbability) ? rng.int(1, 3) : 0;
  return {
    index,
    eventId,
    ...(headerKey === undefined ? {} : { headerKey }),
    idempotencyKey: headerKey ?? deriveIdempotencyKey(eventId, 'sms', 'password_reset'),
    locale: rng.pick(LOCALES),
    phone: phoneFor(seed, index),
    params,
    ...(conflictParams === undefined ? {} : { conflictParams }),
    // Weight 1/n: every count from 1 to the maximum occurs, bursts of 10 are rarer (mean 3.4 for 10).
    duplicates: rng.weighted(
      Array.from({ length: Math.max(1, mix.maxDuplicatePosts) }, (_, i) => [i + 1, 1 / (i + 1)] as const),
    ),
    kind,
    lifeMs,
    extraSqsDelaysMs: Array.from({ length: extra }, () => rng.int(0, 3_000)),
  };
}

/** The JSON body of one POST for an event. */
export function requestBody(
  spec: EventSpec,
  expiresAt: number,
  params: ResetParams = spec.params,
): Record<string, unknown> {
  return {
    event_id: spec.eventId,
    channel: 'sms',
    template: 'password_reset',
    locale: spec.locale,
    destination: { phone: spec.phone },
    expires_at: new Date(expiresAt).toISOString(),
    params,
  };
}

/** Every sensitive string an event carries: none may appear in an item, evidence record or log line. */
export function secretsOf(spec: EventSpec): string[] {
  const out = [spec.phone];
  for (const params of [spec.params, spec.conflictParams]) {
    if (params === undefined) continue;
    if ('code' in params) out.push(params.code);
    else out.push(params.reset_url);
  }
  return out;
}

/** One simulator fault phase. `mode: null` is a quiet phase. */
export interface FaultPhase {
  readonly index: number;
  readonly mode: FaultMode | null;
  readonly probability: number;
  readonly retryAfterSeconds: number;
  /** Run an extra reconciler pass concurrently during this phase. */
  readonly extraReconciler: boolean;
}

/** The simulator fault phase at `index`: each mode in turn, at a seeded probability. */
export function faultPhase(seed: number, index: number, mix: ChaosMix = DEFAULT_MIX): FaultPhase {
  const rng = new Rng(seed, 'phase', index);
  const mode = rng.weighted<FaultMode | null>([
    [null, mix.quietPhaseWeight],
    ...FAULT_MODES.map((m) => [m, 1] as const),
  ]);
  // `hang` holds lookups as well as sends: keep it rarer so the reconciler is not starved.
  const probability = mode === 'hang' ? 0.03 + rng.next() * 0.07 : 0.05 + rng.next() * 0.3;
  return {
    index,
    mode,
    probability: Math.round(probability * 1000) / 1000,
    retryAfterSeconds: rng.int(0, 2),
    extraReconciler: rng.chance(mix.extraReconcilerProbability),
  };
}

/** Every dispatch step a crash can be injected at. */
export const CRASH_STEPS: readonly DispatchStep[] = Object.values(Steps);

/**
 * Whether the `occurrence`-th time `key` reaches `step` crashes. Depends only on its arguments, so
 * the decision does not change with the interleaving of a run.
 */
export function crashes(
  seed: number,
  key: string,
  step: DispatchStep,
  occurrence: number,
  probability: number,
): boolean {
  return unitFor(seed, 'crash', key, step, occurrence) < probability;
}
