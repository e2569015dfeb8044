/**
 * The chaos run's view of the zero-SMS alarm: what `ZeroSmsOutcome` and `FinalOutcomes` would count
 * in each of the alarm's periods (the same domain classification the composition root records,
 * read back from the evidence trails), and whether the alarm's expression crosses its threshold.
 * The alarm's figures come from the construct that deploys it, so the drill and the stack cannot
 * disagree. The alarm drill (`--alarm-drill`) adds a fault class that causes zero-SMS outcomes:
 * the provider refuses every send (HTTP 429) for longer than a token lives.
 */
import { ZERO_SMS_ALARM } from '../../infra/constructs/observability.js';
import { type AlarmMonitor, formatChange, isAlarmTransition } from '../../local/alarms/monitor.js';
import type { EvidenceRecord } from '../../shared/domain/notification.js';
import { finalOutcomeOfTrail, type ZeroSmsClass } from '../../shared/domain/zero-sms.js';
import { DESTINATION_FAULTS } from '../../shared/providers/registry.js';
import type { FaultPhase } from './scenario.js';

/** The alarm as deployed: period, threshold (percent of final outcomes), and its expression. */
export const ZERO_SMS_ALARM_FIGURES = {
  periodMs: ZERO_SMS_ALARM.period.toMilliseconds(),
  ratePercent: ZERO_SMS_ALARM.ratePercent,
  expression: ZERO_SMS_ALARM.expression,
} as const;

/** A provider outage in the run: every send refused from `startAfterMs` (after the run started) for `outageMs`. */
export interface AlarmDrill {
  readonly startAfterMs: number;
  readonly outageMs: number;
}

/**
 * The default drill: the outage starts 4 minutes in (a baseline first) and lasts 3.5 minutes,
 * longer than the longest token of a normal event (3 minutes), so every command admitted in its
 * first half ends without an SMS. Run it with `--duration 8m` or longer.
 */
export const DEFAULT_ALARM_DRILL: AlarmDrill = { startAfterMs: 240_000, outageMs: 210_000 };

/**
 * The drill's event mix: no short-life events. Their 6-9 s tokens are the scenario's way to make
 * commands expire before dispatch on purpose; counted, they would be the baseline's zero-SMS
 * outcomes and hide what the outage adds. Every other fault stays as in the default mix.
 */
export const ALARM_DRILL_MIX = { shortLifeProbability: 0 } as const;

/**
 * The fault phase the drill imposes at `elapsedMs` into the run, or undefined outside the outage
 * (the seeded schedule then runs as usual). Twilio answers 429 with `Retry-After`; the service
 * retries until its attempts or the token run out: `retry_exhausted` or `expired_before_dispatch`.
 */
export function drillPhase(
  drill: AlarmDrill | undefined,
  elapsedMs: number,
  index: number,
): FaultPhase | undefined {
  if (drill === undefined) return undefined;
  if (elapsedMs < drill.startAfterMs || elapsedMs >= drill.startAfterMs + drill.outageMs) return undefined;
  return {
    index,
    mode: 'rate_limited',
    probability: 1,
    retryAfterSeconds: 1,
    extraReconciler: false,
    messageFaults: [],
  };
}

/** One alarm period: what the two metrics would sum to, the expression's value and the verdict. */
export interface ZeroSmsPeriod {
  /** Start of the period (epoch ms), aligned as CloudWatch aligns periods. */
  readonly start: number;
  readonly finals: number;
  /** Zero-SMS outcomes with a valid destination (`ZeroSmsOutcome`). */
  readonly zeroSms: number;
  readonly destinationFault: number;
  readonly byClass: Readonly<Partial<Record<ZeroSmsClass, number>>>;
  /** `IF(finals > 0, 100 * zeroSms / finals, 0)`. */
  readonly ratePercent: number;
  /** The alarm's comparison: greater than the threshold. */
  readonly breaching: boolean;
}

/**
 * `ZeroSmsOutcome` and `FinalOutcomes` per alarm period, from the run's evidence: each command's
 * first final transition, classified by the domain, lands in the period of its evidence time.
 */
export function zeroSmsByAlarmPeriod(
  evidence: readonly EvidenceRecord[],
  figures: { readonly periodMs: number; readonly ratePercent: number } = ZERO_SMS_ALARM_FIGURES,
): ZeroSmsPeriod[] {
  const trails = new Map<string, EvidenceRecord[]>();
  for (const e of evidence) {
    const trail = trails.get(e.idempotencyKey);
    if (trail) trail.push(e);
    else trails.set(e.idempotencyKey, [e]);
  }
  type Tally = {
    finals: number;
    zeroSms: number;
    destinationFault: number;
    byClass: Partial<Record<ZeroSmsClass, number>>;
  };
  const periods = new Map<number, Tally>();
  for (const trail of trails.values()) {
    const final = finalOutcomeOfTrail(trail, DESTINATION_FAULTS);
    if (final === undefined) continue;
    const start = Math.floor(final.at / figures.periodMs) * figures.periodMs;
    const tally = periods.get(start) ?? { finals: 0, zeroSms: 0, destinationFault: 0, byClass: {} };
    periods.set(start, tally);
    tally.finals++;
    const zero = final.outcome.zeroSms;
    if (zero === undefined) continue;
    if (!zero.pages) {
      tally.destinationFault++;
      continue;
    }
    tally.zeroSms++;
    tally.byClass[zero.class] = (tally.byClass[zero.class] ?? 0) + 1;
  }
  return [...periods.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, t]) => {
      const ratePercent = t.finals > 0 ? (100 * t.zeroSms) / t.finals : 0;
      return { start, ...t, ratePercent, breaching: ratePercent > figures.ratePercent };
    });
}

/** The report lines: one per alarm period, then the drill's verdict when a drill ran. */
export function formatAlarmReport(
  periods: readonly ZeroSmsPeriod[],
  drill?: AlarmDrill & { readonly startedAt: number },
): string[] {
  const { periodMs, ratePercent } = ZERO_SMS_ALARM_FIGURES;
  const lines = periods.map((p) => {
    const classes =
      Object.entries(p.byClass)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${v}`)
        .join(' ') || '-';
    const outage =
      drill !== undefined &&
      p.start < drill.startedAt + drill.startAfterMs + drill.outageMs + periodMs &&
      p.start + periodMs > drill.startedAt + drill.startAfterMs;
    return `alarms: ZeroSmsOutcomes period ${new Date(p.start).toISOString().slice(11, 16)}Z (${periodMs / 60_000} min${drill ? (outage ? ', outage' : ', baseline') : ''}): ZeroSmsOutcome=${p.zeroSms} FinalOutcomes=${p.finals} rate=${p.ratePercent.toFixed(1)}% threshold>${ratePercent}% -> ${p.breaching ? 'ALARM' : 'OK'} (by class ${classes}; destination at fault ${p.destinationFault})`;
  });
  if (drill !== undefined) {
    const breaching = periods.filter((p) => p.breaching).length;
    lines.push(
      `alarms: drill (every send refused with 429 for ${drill.outageMs / 1000} s from +${drill.startAfterMs / 1000} s): ZeroSmsOutcomes crossed its threshold in ${breaching} of ${periods.length} periods -> ${breaching > 0 ? 'PAGED' : 'NOT PAGED'}`,
    );
  }
  return lines;
}

/**
 * The template's alarms as the local stack evaluated them during the run (local/alarms/): which
 * went to ALARM (and back), and how many could not be evaluated locally (docs/operations.md).
 */
export interface TemplateAlarmsReport {
  /** Alarms that went to ALARM at least once, in the order they first did. */
  readonly fired: readonly string[];
  /** Every change into or out of ALARM, as `npm start` prints it. */
  readonly changes: readonly string[];
  readonly evaluated: number;
  readonly unevaluated: readonly string[];
}

/** Evaluates the stack's alarms once more (a run shorter than a minute has seen no tick) and reports them. */
export async function templateAlarmsReport(monitor: AlarmMonitor): Promise<TemplateAlarmsReport> {
  await monitor.evaluateNow();
  return {
    fired: monitor.fired(),
    changes: monitor.changes().filter(isAlarmTransition).map(formatChange),
    evaluated: monitor.evaluated.length,
    unevaluated: monitor.unevaluated.map((u) => u.alarm),
  };
}

/** The report's lines: the alarms that fired, then each change. */
export function formatTemplateAlarms(report: TemplateAlarmsReport | undefined): string[] {
  if (report === undefined) return [];
  return [
    `alarms: template alarms fired during the run: ${report.fired.join(', ') || 'none'} (${report.evaluated} evaluated locally, ${report.unevaluated.length} not: ${report.unevaluated.join(', ') || '-'}; docs/operations.md#alarms-on-the-local-stack)`,
    ...report.changes.map((line) => `  ${line}`),
  ];
}
