/** Argument parsing and the summary printed by `npm run chaos`: pure, so both are unit-tested. */

import { parseArgs } from 'node:util';
import { formatAlarmReport, formatTemplateAlarms } from './alarms.js';
import type { ChaosProvider, ChaosRunResult } from './driver.js';
import { EXCUSED_REASONS } from './lost-deliverable.js';

/** What `npm run chaos -- ...` asked for. */
export interface ChaosCliOptions {
  readonly events: number;
  readonly seed: number;
  readonly concurrency: number;
  readonly durationMs?: number;
  readonly settleTimeoutMs: number;
  /** Back-pressure: admitted keys allowed to be not final before new events wait. */
  readonly maxPending: number;
  /** Runs of the model-based tests after the soak (0 = skip). */
  readonly modelRuns: number;
  readonly verbose: boolean;
  /** Where to write the full result as JSON, if anywhere. */
  readonly jsonPath?: string;
  /** The provider the stack uses against its simulator. */
  readonly provider: ChaosProvider;
  /** Run message-fault phases with their send fault only when the simulator refuses them. */
  readonly tolerateUnknownFaults: boolean;
  /** The zero-SMS alarm drill (scripts/chaos/alarms.ts): a provider outage longer than a token's life. */
  readonly alarmDrill?: true;
}

export const USAGE = `usage: npm run chaos -- [--events N] [--seed S] [--concurrency C] [--duration 10m]
                       [--settle-timeout 240s] [--max-pending P] [--model-runs R] [--json FILE] [--verbose]
                       [--provider twilio|sns|eum] [--tolerate-unknown-faults]
  --events N          reset events to drive (default 2000; an upper bound with --duration)
  --seed S            seed of the scenario and fault schedule (default 1)
  --concurrency C     events in flight at once, each 1-11 concurrent POSTs (default 12)
  --duration D        soak: keep starting events for D (e.g. 90s, 10m, 1h); events default to unlimited
  --settle-timeout D  how long every admitted key may take to become final (default 240s)
  --max-pending P     new events wait while P admitted keys are not final yet (default 500)
  --model-runs R      then run the model-based tests with R runs per property (default 5000, 0 = skip)
  --json FILE         also write the full result as JSON
  --verbose           show the service's log output while capturing it
  --provider P        twilio (default: the Twilio simulator), sns or eum (the AWS simulator, real SDK clients)
  --tolerate-unknown-faults
                      a simulator without the message fault modes (redaction, list_lag, receipt_*,
                      fail_not_sent) answers 400: run those phases without them instead of stopping
  --alarm-drill       the provider refuses every send (429) for 3.5 min from 4 min in, longer than any
                      token lives, no short-life events: the ZeroSmsOutcomes alarm must cross its
                      threshold (use --duration 8m)`;

/** `90`, `90s`, `1500ms`, `10m`, `1h` -> milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new Error(`not a duration: ${text} (use e.g. 90s, 10m, 1h)`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(match[1]) * unit);
}

function positiveInt(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${name} must be an integer >= ${min}, got ${raw}`);
  return value;
}

/** Parses the command line; throws with a readable message on a bad value. */
export function parseChaosArgs(argv: readonly string[]): ChaosCliOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      events: { type: 'string' },
      seed: { type: 'string' },
      concurrency: { type: 'string' },
      duration: { type: 'string' },
      'settle-timeout': { type: 'string' },
      'max-pending': { type: 'string' },
      'model-runs': { type: 'string' },
      json: { type: 'string' },
      verbose: { type: 'boolean', default: false },
      provider: { type: 'string' },
      'tolerate-unknown-faults': { type: 'boolean', default: false },
      'alarm-drill': { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const durationMs = values.duration === undefined ? undefined : parseDuration(values.duration);
  const provider = values.provider ?? 'twilio';
  if (provider !== 'twilio' && provider !== 'sns' && provider !== 'eum') {
    throw new Error(`--provider must be twilio, sns or eum, got ${provider}`);
  }
  const defaultEvents = durationMs === undefined ? 2000 : Number.MAX_SAFE_INTEGER;
  return {
    events: positiveInt('events', values.events, defaultEvents),
    seed: positiveInt('seed', values.seed, 1, 0),
    concurrency: positiveInt('concurrency', values.concurrency, 12),
    ...(durationMs === undefined ? {} : { durationMs }),
    settleTimeoutMs:
      values['settle-timeout'] === undefined ? 240_000 : parseDuration(values['settle-timeout']),
    maxPending: positiveInt('max-pending', values['max-pending'], 500),
    modelRuns: positiveInt('model-runs', values['model-runs'], 5000, 0),
    verbose: values.verbose ?? false,
    provider,
    tolerateUnknownFaults: values['tolerate-unknown-faults'] ?? false,
    ...(values.json === undefined ? {} : { jsonPath: values.json }),
    ...(values['alarm-drill'] ? { alarmDrill: true as const } : {}),
  };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const histogram = (counts: Readonly<Record<string, number>>) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

/** The summary: one line per figure, then the verdict. */
export function formatSummary(
  result: ChaosRunResult,
  options: Pick<ChaosCliOptions, 'concurrency'> & Partial<Pick<ChaosCliOptions, 'provider'>>,
): string[] {
  const s = result.stats;
  const lines = [
    `chaos: seed=${result.seed} events=${s.events} concurrency=${options.concurrency} duration=${seconds(s.totalMs)} (admission ${seconds(s.admissionMs)}, settle ${seconds(s.settleMs)}, collect ${seconds(s.collectMs)}, check ${seconds(s.checkMs)})`,
    `run: provider=${options.provider ?? 'twilio'}`,
    `run: admitted keys=${s.admittedKeys} posts=${s.posts} client retries after 5xx=${s.clientRetries} responses: ${histogram(s.responses)}`,
    `run: too-late events=${s.rejectedTooLate} short-life events=${s.shortLife} conflicting payloads=${s.conflicts} extra SQS messages=${s.extraSqsMessages} extra reconciler passes=${s.extraReconcilerPasses}`,
    `run: events with a fresh key per try=${s.freshKeyEvents ?? 0} (POSTs with a fresh key ${s.freshKeyPosts ?? 0}), events spelling the number otherwise=${s.respelledEvents ?? 0}`,
    ...(s.pumping
      ? [
          `pumping: posts=${s.pumping.posts} admitted=${s.pumping.admitted} replayed=${s.pumping.replayed} rate limited=${s.pumping.refused}`,
        ]
      : []),
    `faults: simulator phases ${histogram(s.faultPhases)}`,
    `faults: message fault phases ${histogram(s.messageFaultPhases)}${s.unsupportedFaultPhases ? `; REFUSED by the simulator (run without them)=${s.unsupportedFaultPhases}` : ''}`,
    `receipts: signed receipts taken in=${s.receiptsSeen} rejected callbacks=${s.receiptsRejected}; delivered messages unknown to their record, excused (nothing the provider shows can name them: every receipt lost under redaction, an id SNS never returned, every EUM event lost)=${s.staleExcused}`,
    `unknowns: outcomes that were dispatch_unknown=${s.unknownOutcomes.unknown}, ended with an SMS=${s.unknownOutcomes.withSms}, ended without any SMS=${s.unknownOutcomes.withoutSms} (by final reason ${histogram(s.unknownOutcomes.withoutSmsByReason) || '-'}; by cause ${histogram(s.unknownOutcomes.withoutSmsByCause) || '-'})`,
    `faults: provider sends=${s.providerSends} by fault ${histogram(s.faultsFired)}; accepted messages=${s.providerMessages}`,
    `faults: sender crashes ${histogram(s.crashes)}`,
    `faults: DynamoDB throttling injected=${s.throttles.injectedSurfacing + s.throttles.injectedRetried} (outside SDK retries ${s.throttles.injectedSurfacing}, inside ${s.throttles.injectedRetried}), reached the application=${s.throttles.surfaced}; by operation ${histogram(s.throttles.byOperation)}`,
    `faults: DynamoDB writes applied whose answer was lost (fault after commit)=${s.lostAnswers.surfacing + s.lostAnswers.retried} (outside SDK retries ${s.lostAnswers.surfacing}, inside ${s.lostAnswers.retried}); by operation ${histogram(s.lostAnswers.byOperation)}; by shape ${histogram(s.lostAnswers.byShape)}`,
    `faults: decryptions failed (KMS disabled)=${s.decryptions.failed} of ${s.decryptions.failed + s.decryptions.passed}; poison items planted=${s.poisonPlanted} still present=${s.poisonPresent} isolated=${s.poisonMarked}`,
    `load: DynamoDB calls by the handlers ${histogram(s.throttles.calls)}`,
    `outcome: final states ${histogram(s.finalStates)}`,
    `outcome: last reasons ${histogram(s.lastReasons)}`,
    `scanned: ${s.storedItems} stored items, ${s.evidenceRecords} evidence records, ${s.logLines} log lines`,
    `load: event-loop delay p99=${s.eventLoopDelayP99Ms} ms max=${s.eventLoopDelayMaxMs} ms`,
    `timing: sends that reached the provider after their caller gave up=${s.lateArrivals} (worst ${s.lateArrivalMaxMs} ms after); sends started at or after the deadline (sender's clock)=${s.sendsStartedAfterDeadline}`,
    `liveness: commands decided after their expiry=${s.pastExpiry.count} (worst ${seconds(s.pastExpiry.maxMs)}, p99 ${seconds(s.pastExpiry.p99Ms)} past expiry)`,
    `outcome: unknown outcomes that ended without any SMS (unknown_at_expiry, nothing handed on)=${s.unknownWithoutSms}`,
    `outcome: commands that ended without any SMS=${s.zeroSms.count}, by reason ${histogram(s.zeroSms.byReason) || '-'} (excused: ${EXCUSED_REASONS.join(', ')}; any other reason counts in lost_deliverable)`,
    `settled: ${s.settled ? 'yes' : 'NO (settle timeout)'}${s.backgroundHung > 0 ? `; reconciler passes hung after the settle=${s.backgroundHung}` : ''}`,
  ];
  for (const invariant of result.invariants) {
    lines.push(`${invariant.name}: ${invariant.count} (${invariant.label})`);
    for (const example of invariant.examples) lines.push(`  e.g. ${example}`);
  }
  for (const f of result.forensics) {
    // The trail of every key an invariant failed on, relative to admission: enough to start debugging.
    const t0 = f.trail[0]?.at ?? 0;
    const trail = f.trail
      .map((e) => `${e.toState}(${e.reason},${e.actor},a${e.attempt})@+${e.at - t0}`)
      .join(' ');
    lines.push(`  trail ${f.key}: ${trail}`);
    const calls = f.requests.map(
      (r) => `${r.client_reference?.split('#').pop()}:${r.fault ?? 'ok'}@+${Date.parse(r.received_at) - t0}`,
    );
    lines.push(`  provider calls: ${calls.join(' ')}; messages ${f.messages.length}`);
  }
  lines.push(...formatAlarmReport(s.zeroSmsPeriods ?? [], s.alarmDrill));
  lines.push(...formatTemplateAlarms(s.templateAlarms));
  lines.push(`RESULT: ${result.passed ? 'PASS' : 'FAIL'}`);
  return lines;
}
