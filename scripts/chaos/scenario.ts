/**
 * The chaos scenario: what each event looks like and which faults are active when. Every value is
 * a pure function of the seed and an index, so a run can be reproduced, and an event can be
 * generated lazily (a `--duration` run does not need to know its event count up front).
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { type DispatchStep, DispatchStep as Steps } from '../../local/faults/dispatch-crash.js';
import {
  type FaultMode,
  MESSAGE_FAULT_MODES,
  type MessageFaultMode,
  SEND_FAULT_MODES,
} from '../../local/simulator/faults.js';
import { deriveIdempotencyKey } from '../../shared/domain/idempotency-key.js';
import { LOCALES, type Locale } from '../../shared/domain/templates.js';
import type { SettingsValues } from '../../shared/settings.js';
import { Rng, unitFor } from './prng.js';

/** The knobs of a run's fault mix. Probabilities are per event, per call or per phase as named. */
export interface ChaosMix {
  /**
   * Caps a normal event's token life (drawn as 2-30 min). A provider that can never prove absence
   * keeps an unknown until its token expires, so its runs cap lives to settle in minutes.
   */
  readonly maxNormalLifeMs?: number;
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
  /** Per DynamoDB write of the handlers: applied, then its answer lost; the application sees it. */
  readonly lostAnswerProbability: number;
  /** Per DynamoDB write try: applied, then its answer lost inside the SDK's retry loop (it retries). */
  readonly retriedLostAnswerProbability: number;
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
  /** SMS pumping: how many numbers get a burst of resets (0 = no bursts). */
  readonly pumpBurstNumbers: number;
  /** Resets per burst number, all at once, each POSTed twice (a replay must never count). */
  readonly pumpBurstSize: number;
  /** SMS pumping: how many countries (of {@link PUMP_COUNTRIES}) get a wave over many numbers. */
  readonly pumpWaveCountries: number;
  /** Distinct numbers per wave country, one reset each. */
  readonly pumpWaveSize: number;
  /** Per phase: message faults (redaction, list lag, receipt faults, not-sent failures) on top. */
  readonly messageFaultProbability: number;
  /** The service's settle time: list lag is drawn longer than this (1.5 to 3 times). */
  readonly settleMs: number;
  /** Per event: the phone number of one of the 8 events before it (several resets to one number). */
  readonly repeatPhoneProbability: number;
  /** Per decryption (sender and reconciler): the cipher fails, as a disabled or changed KMS key would. */
  readonly decryptFailureProbability: number;
  /** Items planted in the due index that this release cannot parse (a newer release's reason code). */
  readonly poisonItems: number;
  /**
   * Per event: the client's commonest bug, a fresh `Idempotency-Key` on every POST and every retry
   * after the first (one event, several keys: still one SMS). Off with SNS, whose simulator
   * attributes a message to the one key registered before the send.
   */
  readonly freshKeyProbability: number;
  /**
   * Per event: its POSTs spell the number otherwise (separators, the national form with its trunk
   * prefix: {@link numberSpellings}), which the API canonicalizes: one number, one budget.
   */
  readonly respellProbability: number;
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
  // About 100 of each at 2,000 events (some 10,000 writes): claims, outcomes and admissions among them.
  lostAnswerProbability: 0.01,
  retriedLostAnswerProbability: 0.01,
  sqsDuplicateProbability: 0.15,
  streamDuplicateProbability: 0.15,
  faultPhaseMs: 2_000,
  quietPhaseWeight: 3,
  extraReconcilerProbability: 0.5,
  pumpBurstNumbers: 3,
  pumpBurstSize: 12,
  pumpWaveCountries: 3,
  pumpWaveSize: 25,
  messageFaultProbability: 0.5,
  settleMs: 6_000,
  repeatPhoneProbability: 0.25,
  decryptFailureProbability: 0.03,
  poisonItems: 3,
  freshKeyProbability: 0.05,
  respellProbability: 0.1,
};

/**
 * The abuse limits a soak runs with (merged into the service environment): the production
 * destination default, and hourly budgets for the countries the pumping waves hit. The normal
 * events go to distinct US numbers (one admission each) and the US has no country budget, so
 * the limits only ever refuse pumping traffic.
 */
export const CHAOS_LIMITS = {
  destinationLimits: '3/15m,10/24h',
  countryLimits: 'FR:20/1h,DE:20/1h,GB:20/1h',
} as const satisfies SettingsValues;

/** The countries pumping waves go to, with a valid mobile number per index. */
export const PUMP_COUNTRIES: ReadonlyArray<readonly [string, (i: number) => string]> = [
  ['FR', (i) => `+3361${String(i).padStart(7, '0')}`],
  ['DE', (i) => `+49151${String(i).padStart(8, '0')}`],
  ['GB', (i) => `+447400${String(i).padStart(6, '0')}`],
];

/** One reset of the pumping scenario: an ordinary event, aimed at a pumped destination. */
export interface PumpingEvent {
  readonly spec: EventSpec;
  /** `burst` (many resets to one number) or `wave` (one reset each to many numbers of a country). */
  readonly group: 'burst' | 'wave';
  /** Names the destination without the number: `burst-1`, `wave-FR-7`. */
  readonly target: string;
  readonly country: string;
}

/** Every reset of the pumping scenario, bursts first, then waves; seeded like the normal events. */
export function pumpingEvents(seed: number, mix: ChaosMix = DEFAULT_MIX): PumpingEvent[] {
  const event = (index: number, phone: string, duplicates: number, spelling?: string): EventSpec => {
    const rng = new Rng(seed, 'pump', index);
    const eventId = `pump-${seed}-${index}`;
    return {
      index,
      eventId,
      idempotencyKey: deriveIdempotencyKey(eventId, 'sms', 'password_reset'),
      locale: rng.pick(LOCALES),
      phone,
      params: paramsFrom(rng),
      duplicates,
      kind: 'normal',
      // 1-3 minutes, as the normal events: an unknown that no evidence settles must end (at expiry)
      // within the run's settle time.
      lifeMs: Math.min(rng.int(60, 180) * 1_000, mix.maxNormalLifeMs ?? Number.POSITIVE_INFINITY),
      extraSqsDelaysMs: [],
      ...(spelling === undefined || spelling === phone ? {} : { spellings: [spelling] }),
    };
  };
  const out: PumpingEvent[] = [];
  let index = 0;
  for (let n = 0; n < mix.pumpBurstNumbers; n++) {
    // Area code 628: outside the normal events' 415 numbers. The second burst goes to a French
    // mobile outside the wave's numbers, spelled with and without its trunk prefix.
    const [country, phone] =
      n === 1 ? ['FR', `+33612${200_000 + n * 1_111}`] : ['US', `+1628${2_000_000 + n * 1_111}`];
    // Each reset of a burst spells the number its own way: the budget is the number's, not the spelling's.
    const spellings = numberSpellings(phone);
    for (let i = 0; i < mix.pumpBurstSize; i++) {
      out.push({
        spec: event(index++, phone, 2, spellings[i % spellings.length]),
        group: 'burst',
        target: `burst-${n}`,
        country,
      });
    }
  }
  for (const [country, phoneOf] of PUMP_COUNTRIES.slice(0, mix.pumpWaveCountries)) {
    for (let i = 0; i < mix.pumpWaveSize; i++) {
      const phone = phoneOf(1_000 + (Math.floor(unitFor(seed, 'pump-offset', country) * 8_000) + i));
      out.push({ spec: event(index++, phone, 1), group: 'wave', target: `wave-${country}-${i}`, country });
    }
  }
  return out;
}

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
  /** Every POST and retry after the first carries a fresh `Idempotency-Key` ({@link freshKey}). */
  readonly freshKeys?: boolean;
  /** Spellings of `phone` the POSTs carry in turn (absent: `phone` as is); see {@link spellingFor}. */
  readonly spellings?: readonly string[];
}

/** The `n`-th fresh key of an event whose client mints one per try (n >= 1). */
export function freshKey(spec: EventSpec, n: number): string {
  return `${spec.eventId}.f${n}`;
}

/** The number as the `n`-th POST of an event spells it. */
export function spellingFor(spec: EventSpec, n: number): string {
  const spellings = spec.spellings ?? [];
  return spellings[n % Math.max(1, spellings.length)] ?? spec.phone;
}

/**
 * Spellings of an E.164 number the API accepts and canonicalizes back to it: international with
 * spaces, hyphens or dots, `+<cc> <national form>` (`+1 (415) 555-0123`; `+33 06 12 34 56 78`, the
 * trunk prefix kept) and, where the national form has a trunk prefix, its digits glued
 * (`+330612345678`, issue 25 defect 2). The number itself first.
 */
export function numberSpellings(e164: string): string[] {
  const parsed = parsePhoneNumberFromString(e164);
  if (parsed === undefined) return [e164];
  const cc = `+${parsed.countryCallingCode}`;
  const rest = parsed.formatInternational().slice(cc.length + 1);
  const national = parsed.formatNational();
  const nationalDigits = national.replace(/\D/g, '');
  return [
    ...new Set([
      e164,
      `${cc} ${rest}`,
      `${cc} ${rest.replace(/ /g, '-')}`,
      `${cc}.${rest.replace(/ /g, '.')}`,
      `${cc} ${national}`,
      ...(nationalDigits === parsed.nationalNumber ? [] : [`${cc}${nationalDigits}`]),
    ]),
  ];
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
        : // 1-3 minutes: an unknown whose only honest end is expiry (absence unprovable: redaction
          // seen, receipts lost) must end within a run's settle time, not half an hour later.
          Math.min(rng.int(60, 180) * 1_000, mix.maxNormalLifeMs ?? Number.POSITIVE_INFINITY);
  const params = paramsFrom(rng);
  const conflictParams = rng.chance(mix.conflictProbability) ? paramsFrom(rng) : undefined;
  const extra = rng.chance(mix.extraSqsProbability) ? rng.int(1, 3) : 0;
  const extraSqsDelaysMs = Array.from({ length: extra }, () => rng.int(0, 3_000));
  // Drawn last, so every other value of an event stays what it was before this knob existed.
  const repeatOf =
    index > 0 && rng.chance(mix.repeatPhoneProbability) ? index - rng.int(1, Math.min(8, index)) : index;
  // Their own stream: the knobs added later change no other value of an event.
  const clientRng = new Rng(seed, 'event-client', index);
  const freshKeys = clientRng.chance(mix.freshKeyProbability);
  const phone = phoneFor(seed, repeatOf);
  const others = numberSpellings(phone).slice(1);
  const from = clientRng.int(0, Math.max(0, others.length - 1));
  const spellings = clientRng.chance(mix.respellProbability)
    ? [...others.slice(from), ...others.slice(0, from)]
    : [];
  return {
    index,
    eventId,
    ...(headerKey === undefined ? {} : { headerKey }),
    idempotencyKey: headerKey ?? deriveIdempotencyKey(eventId, 'sms', 'password_reset'),
    locale: rng.pick(LOCALES),
    phone,
    params,
    ...(conflictParams === undefined ? {} : { conflictParams }),
    // Weight 1/n: every count from 1 to the maximum occurs, bursts of 10 are rarer (mean 3.4 for 10).
    duplicates: rng.weighted(
      Array.from({ length: Math.max(1, mix.maxDuplicatePosts) }, (_, i) => [i + 1, 1 / (i + 1)] as const),
    ),
    kind,
    lifeMs,
    extraSqsDelaysMs,
    ...(freshKeys ? { freshKeys } : {}),
    ...(spellings.length > 0 ? { spellings } : {}),
  };
}

/** The JSON body of one POST for an event. */
export function requestBody(
  spec: EventSpec,
  expiresAt: number,
  params: ResetParams = spec.params,
  phone: string = spec.phone,
): Record<string, unknown> {
  return {
    event_id: spec.eventId,
    channel: 'sms',
    template: 'password_reset',
    locale: spec.locale,
    destination: { phone },
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

/**
 * The simulator's message faults (docs/design.md#local-stack): what happens to an accepted message after
 * its send, each in its own lane beside the send faults; and the send faults. Both come from the
 * one fault catalogue (local/simulator/fault-catalogue.ts), so the driver can ask for them of any
 * simulator (one that lacks them answers 400).
 */
export { MESSAGE_FAULT_MODES, type MessageFaultMode, SEND_FAULT_MODES };

/** Twilio's "never handed to a carrier" codes the simulator fails a message with. */
export const NOT_SENT_CODES = [30001, 30036] as const;

/** One message-fault plan, in the control API's shape. */
export interface MessageFaultPlan {
  readonly mode: MessageFaultMode;
  readonly probability: number;
  /** `list_lag`, `receipt_delay` and `queue_delay`: the duration. */
  readonly ms?: number;
  /** `fail_not_sent`: the Twilio error code. */
  readonly error_code?: number;
}

/** One simulator fault phase. `mode: null` is a phase without send faults. */
export interface FaultPhase {
  readonly index: number;
  readonly mode: FaultMode | null;
  readonly probability: number;
  readonly retryAfterSeconds: number;
  /** Run an extra reconciler pass concurrently during this phase. */
  readonly extraReconciler: boolean;
  /** Message faults active during the phase (each in its own lane), possibly none. */
  readonly messageFaults: readonly MessageFaultPlan[];
}

/** The simulator fault phase at `index`: each mode in turn, at a seeded probability. */
export function faultPhase(seed: number, index: number, mix: ChaosMix = DEFAULT_MIX): FaultPhase {
  const rng = new Rng(seed, 'phase', index);
  const mode = rng.weighted<FaultMode | null>([
    [null, mix.quietPhaseWeight],
    ...SEND_FAULT_MODES.map((m) => [m, 1] as const),
  ]);
  // `hang` holds lookups as well as sends: keep it rarer so the reconciler is not starved.
  const probability = mode === 'hang' ? 0.03 + rng.next() * 0.07 : 0.05 + rng.next() * 0.3;
  return {
    index,
    mode,
    probability: Math.round(probability * 1000) / 1000,
    retryAfterSeconds: rng.int(0, 2),
    extraReconciler: rng.chance(mix.extraReconcilerProbability),
    messageFaults: messageFaultsFor(new Rng(seed, 'message-phase', index), mix),
  };
}

/**
 * Message faults of one phase: none, one or two modes at 20-60 % of messages (redaction: all of
 * them, like the account setting); a quarter of the faulty phases are the worst case on purpose
 * (redaction with receipts lost: nothing the service can see names those messages).
 */
function messageFaultsFor(rng: Rng, mix: ChaosMix): MessageFaultPlan[] {
  if (!rng.chance(mix.messageFaultProbability)) return [];
  const modes: MessageFaultMode[] = rng.chance(0.25)
    ? ['redaction', 'receipt_loss']
    : [
        ...new Set([
          rng.pick(MESSAGE_FAULT_MODES),
          ...(rng.chance(0.4) ? [rng.pick(MESSAGE_FAULT_MODES)] : []),
        ]),
      ];
  return modes.map((mode) => {
    const probability = Math.round((0.2 + rng.next() * 0.4) * 1000) / 1000;
    switch (mode) {
      case 'redaction':
        // Twilio's Message Redaction is an account setting: on for every message while it is on.
        return { mode, probability: 1 };
      case 'list_lag':
        return {
          mode,
          probability,
          ms: Math.round(mix.settleMs * (1.5 + rng.next() * (MAX_LIST_LAG_FACTOR - 1.5))),
        };
      case 'receipt_delay':
        return { mode, probability, ms: rng.int(500, 8_000) };
      case 'fail_not_sent':
        return { mode, probability, error_code: rng.pick(NOT_SENT_CODES) };
      case 'queue_delay':
        // Held in Twilio's queue for 5-90 s: sent after messages created later (listed ahead of
        // them by date_sent), some past their window scan's start, some past their validity.
        return { mode, probability, ms: rng.int(5_000, 90_000) };
      default:
        return { mode, probability };
    }
  });
}

/** The longest injected list lag, as a multiple of the settle time (drawn from 1.5 to this). */
export const MAX_LIST_LAG_FACTOR = 3;

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
