/**
 * The local CloudWatch: samples kept per metric, the template's alarms evaluated on the stack's
 * clock (every `intervalMs`, one minute as CloudWatch evaluates, or on demand), and each state
 * change reported. An alarm that reads a metric nothing local observes is listed with the reason,
 * never evaluated (its state would be invented).
 */
import {
  type AlarmDefinition,
  type AlarmState,
  evaluateAlarm,
  type MetricId,
  metricKey,
  periodOf,
  type Sample,
} from './evaluate.js';
import { UnsupportedAlarmError } from './expression.js';
import { metricsOf } from './template.js';

/** One state change of one alarm. */
export interface AlarmChange {
  readonly alarm: string;
  readonly from: AlarmState;
  readonly to: AlarmState;
  readonly reason: string;
  readonly at: number;
}

/** An alarm of the template that is not evaluated locally, and why. */
interface UnevaluatedAlarm {
  readonly alarm: string;
  readonly reason: string;
}

/** Says whether a metric is observed locally: undefined when it is, else why not. */
type Observability = (metric: MetricId) => string | undefined;

/** The timers the monitor runs on (tests pass their own: no wall-clock sleeps). */
export interface MonitorTimers {
  every(intervalMs: number, task: () => void): () => void;
}

const nodeTimers: MonitorTimers = {
  every(intervalMs, task) {
    const timer = setInterval(task, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  },
};

export interface AlarmMonitorOptions {
  readonly alarms: readonly AlarmDefinition[];
  readonly observability: Observability;
  readonly clock: { now(): number };
  /** Runs before each evaluation (sources that are read rather than pushed: queue depths). */
  readonly beforeEvaluation?: () => Promise<void>;
  readonly timers?: MonitorTimers;
}

export interface AlarmMonitor {
  /** The alarms evaluated locally. */
  readonly evaluated: readonly AlarmDefinition[];
  readonly unevaluated: readonly UnevaluatedAlarm[];
  record(sample: Sample): void;
  /** Evaluates every alarm now; resolves with the changes it made. */
  evaluateNow(): Promise<AlarmChange[]>;
  state(alarm: string): AlarmState | undefined;
  /** Alarms that went to ALARM at least once, in the order they first did. */
  fired(): string[];
  /** Every change so far. */
  changes(): readonly AlarmChange[];
  onChange(listener: (change: AlarmChange) => void): void;
  /** Evaluates every `intervalMs` until stopped. */
  start(intervalMs?: number): void;
  stop(): void;
}

/** CloudWatch evaluates metric alarms once a minute. */
const EVALUATION_INTERVAL_MS = 60_000;

export function createAlarmMonitor(options: AlarmMonitorOptions): AlarmMonitor {
  const { clock, observability } = options;
  const timers = options.timers ?? nodeTimers;
  const evaluated: AlarmDefinition[] = [];
  const unevaluated: UnevaluatedAlarm[] = [];
  for (const alarm of options.alarms) {
    const reason = whyNotEvaluated(alarm, observability);
    if (reason === undefined) evaluated.push(alarm);
    else unevaluated.push({ alarm: alarm.name, reason });
  }
  // Samples are kept as long as the longest alarm looks back.
  const horizonMs = Math.max(0, ...evaluated.map((a) => periodOf(a.query) * 1000 * a.evaluationPeriods));
  const samples = new Map<string, Sample[]>();
  const states = new Map<string, AlarmState>(evaluated.map((a) => [a.name, 'INSUFFICIENT_DATA']));
  const history: AlarmChange[] = [];
  const fired: string[] = [];
  const listeners: Array<(change: AlarmChange) => void> = [];
  let stopTimer: (() => void) | undefined;
  let running: Promise<AlarmChange[]> | undefined;

  const read = (metric: MetricId, from: number, to: number) =>
    (samples.get(metricKey(metric)) ?? []).filter((s) => s.at >= from && s.at < to).map((s) => s.value);

  const prune = (now: number) => {
    for (const [key, list] of samples) {
      const kept = list.filter((s) => s.at >= now - horizonMs);
      if (kept.length === 0) samples.delete(key);
      else samples.set(key, kept);
    }
  };

  const evaluate = async (): Promise<AlarmChange[]> => {
    await options.beforeEvaluation?.();
    const now = clock.now();
    const made: AlarmChange[] = [];
    for (const alarm of evaluated) {
      const from = states.get(alarm.name) ?? 'INSUFFICIENT_DATA';
      const result = evaluateAlarm(alarm, read, now, from);
      if (result.state === from) continue;
      states.set(alarm.name, result.state);
      const change = { alarm: alarm.name, from, to: result.state, reason: result.reason, at: now };
      made.push(change);
      history.push(change);
      if (result.state === 'ALARM' && !fired.includes(alarm.name)) fired.push(alarm.name);
      for (const listener of listeners) listener(change);
    }
    prune(now);
    return made;
  };

  return {
    evaluated,
    unevaluated,
    record(sample) {
      const key = metricKey(sample.metric);
      const list = samples.get(key);
      if (list) list.push(sample);
      else samples.set(key, [sample]);
    },
    // One evaluation at a time: a timer tick during an on-demand one waits for it.
    evaluateNow() {
      const next = (running ?? Promise.resolve([])).then(evaluate, evaluate);
      running = next;
      return next;
    },
    state: (alarm) => states.get(alarm),
    fired: () => [...fired],
    changes: () => history,
    onChange(listener) {
      listeners.push(listener);
    },
    start(intervalMs = EVALUATION_INTERVAL_MS) {
      stopTimer ??= timers.every(intervalMs, () => {
        this.evaluateNow().catch(() => undefined);
      });
    },
    stop() {
      stopTimer?.();
      stopTimer = undefined;
    },
  };
}

function whyNotEvaluated(alarm: AlarmDefinition, observability: Observability): string | undefined {
  try {
    periodOf(alarm.query);
    if (alarm.query.kind === 'math') evaluateAlarm(alarm, () => [], 0, 'INSUFFICIENT_DATA');
  } catch (error) {
    if (error instanceof UnsupportedAlarmError) return error.message;
    throw error;
  }
  for (const metric of metricsOf(alarm)) {
    const reason = observability(metric);
    if (reason !== undefined) return `${metric.namespace} ${metric.metricName}: ${reason}`;
  }
  return undefined;
}

/** The line `npm start` prints for a change: the alarm, the transition and CloudWatch's reason. */
export function formatChange(change: AlarmChange): string {
  const time = new Date(change.at).toISOString().slice(11, 19);
  return `alarm ${change.alarm}: ${change.from} -> ${change.to} at ${time}Z (${change.reason})`;
}

/**
 * The start banner's lines: how many alarms are evaluated, then the others grouped by why not
 * (said once, at start).
 */
export function formatBanner(monitor: Pick<AlarmMonitor, 'evaluated' | 'unevaluated'>): string[] {
  const total = monitor.evaluated.length + monitor.unevaluated.length;
  const byReason = new Map<string, string[]>();
  for (const { alarm, reason } of monitor.unevaluated)
    byReason.set(reason, [...(byReason.get(reason) ?? []), alarm]);
  return [
    `  Alarms              ${monitor.evaluated.length} of the template's ${total} evaluated locally (a line per change to or from ALARM)`,
    ...[...byReason].map(([reason, alarms]) => `    not evaluated: ${alarms.join(', ')} (${reason})`),
  ];
}

/** Whether a change is one `npm start` prints: into or out of ALARM (not the first INSUFFICIENT_DATA -> OK). */
export function isAlarmTransition(change: AlarmChange): boolean {
  return change.from === 'ALARM' || change.to === 'ALARM';
}
