/**
 * Chaos step 5, judge: the invariant checks and the zero-SMS classification over what the run
 * left behind, the run's figures, and the keys worth a look. Pure over its inputs, apart from
 * reading the event-loop monitor.
 */

import { zeroSmsByAlarmPeriod } from './alarms.js';
import type { Collected } from './collect.js';
import type { Driven } from './drive.js';
import type { ChaosDataset } from './invariants.js';
import { checkAll, keyOfReference, undecidedPastExpiry } from './invariants.js';
import { checkLostDeliverable } from './lost-deliverable.js';
import { checkStale, unknownOutcomes } from './provider-truth.js';
import type { Rig } from './rig.js';
import type { ChaosRunResult, ChaosStats, KeyForensics } from './run-options.js';
import type { Settled } from './settle.js';

function forensicsFor(key: string, dataset: ChaosDataset): KeyForensics {
  const record = dataset.commands.find((c) => c.idempotencyKey === key);
  const ours = (reference: string | null) => keyOfReference(reference) === key;
  return {
    key,
    ...(record === undefined ? {} : { record }),
    trail: dataset.evidence.filter((e) => e.idempotencyKey === key).sort((a, b) => a.seq - b.seq),
    messages: dataset.ledger.filter((m) => ours(m.client_reference)),
    requests: dataset.requests.filter((r) => ours(r.client_reference)),
  };
}

const countInto = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/** Final states, last reasons and the faults that fired, counted. */
function outcomeCounts(dataset: ChaosDataset) {
  const finalStates: Record<string, number> = {};
  const lastReasons: Record<string, number> = {};
  const faultsFired: Record<string, number> = {};
  for (const c of dataset.commands) {
    countInto(finalStates, c.state === 'sent' && c.closed ? 'sent (closed)' : c.state);
    countInto(lastReasons, c.lastReason);
  }
  for (const r of dataset.requests) countInto(faultsFired, r.fault ?? 'none');
  return { finalStates, lastReasons, faultsFired };
}

/**
 * Send requests that reached the provider after their caller had given up (and the worst delay),
 * and sends the sender started at or after the dispatch deadline (its own clock).
 */
function timingCounts(rig: Rig, dataset: ChaosDataset) {
  let lateArrivals = 0;
  let lateArrivalMaxMs = 0;
  let sendsStartedAfterDeadline = 0;
  const deadlines = new Map(
    dataset.commands.map((c) => [c.idempotencyKey, c.expiresAt - dataset.dispatchMarginMs]),
  );
  for (const r of dataset.requests) {
    const call = r.client_reference === null ? undefined : rig.calls.get(r.client_reference);
    const late = call?.gaveUp && call.endedAt !== undefined ? Date.parse(r.received_at) - call.endedAt : 0;
    if (late > 0) {
      lateArrivals++;
      lateArrivalMaxMs = Math.max(lateArrivalMaxMs, late);
    }
  }
  for (const [reference, call] of rig.calls) {
    const deadline = deadlines.get(keyOfReference(reference) ?? '');
    if (deadline !== undefined && call.startedAt >= deadline) sendsStartedAfterDeadline++;
  }
  return { lateArrivals, lateArrivalMaxMs, sendsStartedAfterDeadline };
}

/** What the provider's truth says of the outcomes: unknowns without an SMS, lateness past expiry, receipts, staleness. */
function truthCounts(dataset: ChaosDataset, observedAt: number) {
  const { commands, evidence, ledger, requests, logLines } = dataset;
  const handedOn = new Set(
    ledger
      .filter((m) => m.status === 'sent' || m.status === 'delivered')
      .map((m) => keyOfReference(m.client_reference)),
  );
  const lateness = undecidedPastExpiry(commands, evidence, observedAt)
    .map((p) => p.pastExpiryMs)
    .sort((a, b) => a - b);
  return {
    unknownWithoutSms: commands.filter(
      (c) => c.lastReason === 'unknown_at_expiry' && !handedOn.has(c.idempotencyKey),
    ).length,
    pastExpiry: {
      count: lateness.length,
      maxMs: lateness.at(-1) ?? 0,
      p99Ms: lateness[Math.max(0, Math.ceil(lateness.length * 0.99) - 1)] ?? 0,
    },
    receiptsSeen: [...(dataset.receiptsSeen?.values() ?? [])].reduce((a, b) => a + b, 0),
    receiptsRejected: logLines.filter((line) => line.includes('"message":"receipt rejected"')).length,
    staleExcused: checkStale(commands, ledger, dataset.receiptsSeen, {
      findsOnlyById: dataset.findsOnlyById ?? false,
      eventsOnly: dataset.eventsOnly ?? false,
    }).excused,
    unknownOutcomes: unknownOutcomes(commands, evidence, ledger, requests),
    zeroSmsPeriods: zeroSmsByAlarmPeriod(evidence),
  };
}

/** Judges the run: its invariants, figures, forensics of the failed keys, and whether it passed. */
export function judgeChaos(rig: Rig, driven: Driven, settled: Settled, collected: Collected): ChaosRunResult {
  const { dataset, deliverable } = collected;
  const checkStart = Date.now();
  const invariants = checkAll(dataset);
  const zeroSms = checkLostDeliverable({ ...dataset, ...deliverable });
  const checkMs = Date.now() - checkStart;
  rig.loopDelay.disable();
  const { injectors } = rig;
  const stats: ChaosStats = {
    ...driven.counts,
    admittedKeys: dataset.commands.length,
    ...outcomeCounts(dataset),
    providerSends: dataset.requests.length,
    providerMessages: dataset.ledger.length,
    crashes: injectors.crash.counts,
    throttles: injectors.throttle.counts,
    lostAnswers: injectors.lostAnswers.counts,
    zeroSms: { count: zeroSms.zeroSms, byReason: zeroSms.byReason },
    decryptions: injectors.cipherFaults.counts,
    poisonPlanted: rig.poisonPlanted,
    poisonPresent: collected.poisonPresent,
    poisonMarked: collected.poisonMarked,
    logLines: dataset.logLines.length,
    storedItems: dataset.items.length,
    evidenceRecords: dataset.evidence.length,
    settleMs: settled.settleMs,
    collectMs: collected.collectMs,
    checkMs,
    totalMs: Date.now() - rig.started,
    settled: settled.settled,
    backgroundHung: settled.backgroundHung,
    ...timingCounts(rig, dataset),
    eventLoopDelayP99Ms: Math.round(rig.loopDelay.percentile(99) / 1e6),
    eventLoopDelayMaxMs: Math.round(rig.loopDelay.max / 1e6),
    ...truthCounts(dataset, collected.observedAt),
    templateAlarms: collected.templateAlarms,
    ...(rig.options.alarmDrill ? { alarmDrill: { ...rig.options.alarmDrill, startedAt: rig.started } } : {}),
  };
  const failedKeys = new Set(invariants.flatMap((i) => i.keys));
  const notable = ['status_horizon', 'retry_exhausted', 'unknown_at_expiry'].flatMap((reason) =>
    dataset.commands
      .filter((c) => c.lastReason === reason)
      .slice(0, 3)
      .map((c) => forensicsFor(c.idempotencyKey, dataset)),
  );
  return {
    seed: rig.seed,
    stats,
    invariants,
    forensics: [...failedKeys].map((key) => forensicsFor(key, dataset)),
    notable,
    passed:
      stats.settled &&
      stats.backgroundHung === 0 &&
      invariants.every((i) => i.count === 0) &&
      stats.poisonPresent === stats.poisonPlanted &&
      stats.poisonMarked === stats.poisonPlanted,
  };
}
