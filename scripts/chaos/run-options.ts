/**
 * What a chaos run is given and what it returns: options, the service timings it runs the stack
 * with, its figures and its verdict (scripts/chaos/driver.ts runs it).
 */

import type { EvidenceRecord, NotificationRecord } from '../../shared/domain/notification.js';
import { type SettingsValues, settingsEnv } from '../../shared/settings.js';
import type { AlarmDrill, TemplateAlarmsReport, ZeroSmsPeriod } from './alarms.js';
import type { CipherFaultCounts, CrashCounts, LostAnswerCounts, ThrottleCounts } from './injectors.js';
import type { InvariantResult, LedgerEntry, SendRequestEntry } from './invariants.js';
import type { UnknownOutcomeReport } from './provider-truth.js';
import { CHAOS_LIMITS, type ChaosMix, MAX_LIST_LAG_FACTOR } from './scenario.js';

/**
 * Service timings for the run: a fault plays out in seconds, so the run settles in seconds. The
 * settle time stays well above the provider timeout plus the event-loop delay of one overloaded
 * process hosting the whole stack: the design assumes no request reaches the provider after its
 * caller gave up plus the settle time.
 */
export const CHAOS_SETTINGS = {
  providerTimeout: 1000,
  providerLookupTimeout: 1500,
  reconcileSettle: 6,
  statusPoll: 0.2,
  statusHorizon: 30,
  backoffBase: 200,
  backoffMax: 2000,
  leaseSlack: 4000,
  queueSafetyNet: 15,
  queueVisibilityTimeout: 5,
  dispatchMargin: 5,
  maxReceiveCount: 5,
  // Status callbacks go to the stack's own receipts route (the local stack's default): receipts are
  // evidence the run must exercise. The deployment declares redaction off, so absence can be proven
  // where the adapter's conditions hold; the redaction phases must then switch it off by themselves.
  twilioRedaction: 'off',
  // The abuse limits the pumping scenario is judged against (scenario.ts explains the choice).
  ...CHAOS_LIMITS,
  // A backlog larger than one pass: the reconciler's cursor must still reach every due item. 64, not
  // 16: with receipts and the two-read absence proof a 2,000-event run keeps more items due than 16
  // per 2 s pass drain, and expiries waited a minute (the stuck invariant, 8 keys in CI).
  reconcileMaxItems: 64,
} as const satisfies SettingsValues;

/** {@link CHAOS_SETTINGS} as the stack's environment. */
export const CHAOS_ENV: Readonly<Record<string, string>> = settingsEnv(CHAOS_SETTINGS);

/**
 * SNS has no receipts, and a delivery-status line shows up only seconds after the delivery (the
 * simulator's log lag, 2 s, like CloudWatch's), so a status poll earlier than that reads nothing:
 * polls start at 2 s. Every poll is a `FilterLogEvents` read under the account's 5 calls a second, and
 * the lookups of the workers that run at once share one read, so four workers on each of the two
 * reconcile queues (the stack's `maxConcurrency` is 4 and 2, over containers that each read for
 * themselves; here one process reads for all) rather than the local default of two fill those reads.
 */
export const SNS_CHAOS_ENV: Readonly<Record<string, string>> = settingsEnv({
  statusPoll: 2,
  reconcileWorkers: 4,
  reconcilePollWorkers: 4,
});

/** Options of {@link runChaos}. */
export interface ChaosRunOptions {
  /** How many events (an upper bound when `durationMs` is set). */
  readonly events: number;
  readonly seed: number;
  /** Events in flight at once (each is 1-11 concurrent POSTs). */
  readonly concurrency: number;
  /** Stop starting new events after this long (soak mode). */
  readonly durationMs?: number;
  /** How long to wait for every admitted key to become final; default 240 s (tokens live at most 3 min). */
  readonly settleTimeoutMs?: number;
  /** Reuse running emulators (the test suite's); otherwise the stack starts its own. */
  readonly dynamodbEndpoint?: string;
  readonly sqsEndpoint?: string;
  readonly mix?: Partial<ChaosMix>;
  /** Extra service environment (timings). */
  readonly env?: Readonly<Record<string, string>>;
  readonly reconcileIntervalMs?: number;
  readonly senderConcurrency?: number;
  /**
   * Back-pressure: no new event starts while this many admitted keys are not final yet, so the
   * run measures the pipeline at its capacity instead of a growing backlog; default 500.
   */
  readonly maxPending?: number;
  /** Progress lines (written past the output capture). */
  readonly progress?: (line: string) => void;
  /** Show captured output as well as capturing it. */
  readonly passThroughOutput?: boolean;
  /**
   * Positive control of the privacy check: the service's logger prints one event's phone number
   * mid-run, and the privacy figure must then count it (never set in a real soak).
   */
  readonly leakCanary?: boolean;
  /** Which provider the stack uses, against its simulator: default `twilio`. */
  readonly provider?: ChaosProvider;
  /**
   * A simulator that does not know the message fault modes (redaction, list_lag, receipt_*,
   * fail_not_sent) answers 400: with this set, such phases run with their send fault only and are
   * counted; without it the run stops. Only for simulators that predate those modes.
   */
  readonly tolerateUnknownFaultModes?: boolean;
  /** A provider outage that causes zero-SMS outcomes (scripts/chaos/alarms.ts); default none. */
  readonly alarmDrill?: AlarmDrill;
}

/** `npm run chaos -- --provider ...`: the Twilio simulator, or the AWS simulator for SNS / End User Messaging. */
export type ChaosProvider = 'twilio' | 'sns' | 'eum';

/** What a run did, besides the verdict. */
export interface ChaosStats {
  events: number;
  posts: number;
  clientRetries: number;
  responses: Record<string, number>;
  admittedKeys: number;
  rejectedTooLate: number;
  conflicts: number;
  shortLife: number;
  /** Events whose client minted a fresh key per try, and the POSTs that carried one (absent: older results). */
  freshKeyEvents?: number;
  freshKeyPosts?: number;
  /** Events whose POSTs spelled the number otherwise than E.164. */
  respelledEvents?: number;
  finalStates: Record<string, number>;
  lastReasons: Record<string, number>;
  providerSends: number;
  providerMessages: number;
  faultsFired: Record<string, number>;
  faultPhases: Record<string, number>;
  crashes: CrashCounts;
  throttles: ThrottleCounts;
  /** DynamoDB writes applied whose answer was lost (fault after commit). */
  lostAnswers: LostAnswerCounts;
  /** Commands that ended without any SMS, by reason (lost-deliverable.ts: excused and not). */
  zeroSms: { count: number; byReason: Record<string, number> };
  decryptions: CipherFaultCounts;
  /** Poison items planted in the due index; how many were still there and marked at the end. */
  poisonPlanted: number;
  poisonPresent: number;
  poisonMarked: number;
  extraSqsMessages: number;
  extraReconcilerPasses: number;
  logLines: number;
  storedItems: number;
  evidenceRecords: number;
  admissionMs: number;
  settleMs: number;
  /** Reading back the ledger, the request log and the table; then judging them. */
  collectMs: number;
  checkMs: number;
  totalMs: number;
  settled: boolean;
  /** Send requests that reached the provider after their caller had given up, and the worst delay. */
  lateArrivals: number;
  lateArrivalMaxMs: number;
  /** Send requests the sender started at or after the dispatch deadline (its own clock). */
  sendsStartedAfterDeadline: number;
  /** Event-loop delay of the one process running the whole stack (99th percentile and max, ms). */
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  /** The pumping scenario: POSTs, and their final answers (admitted, replayed, rate limited). */
  pumping?: { posts: number; admitted: number; replayed: number; refused: number };
  /** Unknown outcomes that ended `unknown_at_expiry` although the provider never handed any SMS on. */
  unknownWithoutSms: number;
  /** Phases by message fault (`+`-joined when two), `none` without. */
  messageFaultPhases: Record<string, number>;
  /** Phases whose message faults the simulator refused (see `tolerateUnknownFaultModes`). */
  unsupportedFaultPhases: number;
  /** Signed receipts the receipts route took in, and callbacks it rejected (bad signature: must be 0). */
  receiptsSeen: number;
  receiptsRejected: number;
  /** Delivered messages the record does not know, excused: every receipt lost and reads redacted. */
  staleExcused: number;
  /** Extra reconciler passes still running the grace period after the settle (settle.ts) (a hang). */
  backgroundHung: number;
  /** Commands decided after their expiry, and the worst and 99th-percentile lateness (ms). */
  pastExpiry: { count: number; maxMs: number; p99Ms: number };
  /** How unknown outcomes ended (with an SMS, without one by reason and cause). */
  unknownOutcomes: UnknownOutcomeReport;
  /** `ZeroSmsOutcome` and `FinalOutcomes` per zero-SMS alarm period (scripts/chaos/alarms.ts). */
  zeroSmsPeriods?: ZeroSmsPeriod[];
  /** The alarm drill, when one ran, and when the run started (its outage is relative to that). */
  alarmDrill?: AlarmDrill & { startedAt: number };
  /** The template's alarms as the local stack evaluated them (fired ones, changes). */
  templateAlarms?: TemplateAlarmsReport;
}

/** What the run left behind for one key an invariant failed on (no secrets: nothing here has any). */
export interface KeyForensics {
  readonly key: string;
  readonly record?: NotificationRecord;
  readonly trail: readonly EvidenceRecord[];
  readonly messages: readonly LedgerEntry[];
  readonly requests: readonly SendRequestEntry[];
}

/** The outcome of a run. */
export interface ChaosRunResult {
  readonly seed: number;
  readonly stats: ChaosStats;
  readonly invariants: readonly InvariantResult[];
  readonly forensics: readonly KeyForensics[];
  /** A few keys that ended unusually but legitimately (closed unconfirmed, retries exhausted, unknown at expiry). */
  readonly notable: readonly KeyForensics[];
  readonly passed: boolean;
}

/** The list-lag allowance a run declares: above the longest `list_lag` fault it injects. */
export function listLagAllowanceSecondsFor(mix: Pick<ChaosMix, 'settleMs'>): number {
  return Math.ceil((mix.settleMs * MAX_LIST_LAG_FACTOR) / 1000) + 2;
}
