/**
 * Chaos step 2, drive: seeded reset events through the rigged stack while the simulator's fault
 * phases rotate, with SMS pumping alongside, until the event count or the duration runs out;
 * then the phases stop. Returns what it sent and saw; judging is for later steps.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { drillPhase } from './alarms.js';
import type { AdmissionObservation, PumpingObservation } from './invariants.js';
import type { PhaseWindow } from './lost-deliverable.js';
import type { DriverEvent } from './per-event.js';
import type { Rig } from './rig.js';
import {
  type EventSpec,
  eventSpec,
  faultPhase,
  freshKey,
  type PumpingEvent,
  pumpingEvents,
  requestBody,
  spellingFor,
} from './scenario.js';
import { registerSecrets, setFaults } from './sim-control.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What the drive did, counted. */
export interface DriveCounts {
  events: number;
  posts: number;
  clientRetries: number;
  responses: Record<string, number>;
  rejectedTooLate: number;
  conflicts: number;
  shortLife: number;
  faultPhases: Record<string, number>;
  messageFaultPhases: Record<string, number>;
  unsupportedFaultPhases: number;
  extraSqsMessages: number;
  extraReconcilerPasses: number;
  admissionMs: number;
  pumping: { posts: number; admitted: number; replayed: number; refused: number };
  /** Events whose client minted a fresh key per try, and the POSTs with a fresh key. */
  freshKeyEvents: number;
  freshKeyPosts: number;
  /** Events (normal and pumping) whose POSTs spelled the number otherwise than E.164. */
  respelledEvents: number;
}

/** What the drive sent and saw. */
export interface Driven {
  readonly counts: DriveCounts;
  /** Every event started (normal and pumping), for the secrets the privacy scan looks for. */
  readonly specs: EventSpec[];
  readonly admissions: AdmissionObservation[];
  /** Every event sent, with the keys and spellings its POSTs carried: the per-event invariants' truth. */
  readonly events: DriverEvent[];
  readonly pumping: PumpingObservation[];
  readonly phaseWindows: PhaseWindow[];
  readonly admitted: Set<string>;
  /** Extra reconciler passes and duplicate dispatch messages still in flight. */
  readonly background: Set<Promise<unknown>>;
}

type Answer = {
  variant: 'original' | 'conflict';
  status: number;
  code?: string;
  /** The command a 2xx answered with (its `idempotency_key`: the first key of the event). */
  admittedKey?: string;
};

function newDriven(): Driven {
  return {
    counts: {
      events: 0,
      posts: 0,
      clientRetries: 0,
      responses: {},
      rejectedTooLate: 0,
      conflicts: 0,
      shortLife: 0,
      faultPhases: {},
      messageFaultPhases: {},
      unsupportedFaultPhases: 0,
      extraSqsMessages: 0,
      extraReconcilerPasses: 0,
      admissionMs: 0,
      pumping: { posts: 0, admitted: 0, replayed: 0, refused: 0 },
      freshKeyEvents: 0,
      freshKeyPosts: 0,
      respelledEvents: 0,
    },
    specs: [],
    admissions: [],
    events: [],
    pumping: [],
    phaseWindows: [],
    admitted: new Set(),
    background: new Set(),
  };
}

function track(d: Driven, p: Promise<unknown>): void {
  const tracked = p.catch(() => undefined).finally(() => d.background.delete(tracked));
  d.background.add(tracked);
}

/** Sets one phase's plans; a simulator without the message fault modes may be tolerated. */
async function applyPhase(rig: Rig, d: Driven, sendPlan: object[], messageFaults: readonly object[]) {
  const applied = await setFaults(rig.simUrl, [...sendPlan, ...messageFaults]);
  if (!applied && rig.options.tolerateUnknownFaultModes && messageFaults.length > 0) {
    d.counts.unsupportedFaultPhases++;
    if (!(await setFaults(rig.simUrl, sendPlan))) throw new Error('simulator refused a send fault plan');
  } else if (!applied) {
    throw new Error(
      'simulator refused the fault plan (no message fault modes? --tolerate-unknown-faults runs without them)',
    );
  }
}

/**
 * Simulator fault phases rotate on a seeded schedule until stopped. A refused fault plan ends
 * admission early (`failed`) and is thrown by `stop`.
 */
function startPhases(rig: Rig, d: Driven) {
  let running = true;
  let error: unknown;
  const loop = (async () => {
    for (let index = 0; running; index++) {
      const phase =
        drillPhase(rig.options.alarmDrill, Date.now() - rig.started, index) ??
        faultPhase(rig.seed, index, rig.mix);
      const name = phase.mode ?? 'none';
      d.counts.faultPhases[name] = (d.counts.faultPhases[name] ?? 0) + 1;
      const messageName = phase.messageFaults.map((f) => f.mode).join('+') || 'none';
      d.counts.messageFaultPhases[messageName] = (d.counts.messageFaultPhases[messageName] ?? 0) + 1;
      const sendPlan =
        phase.mode === null
          ? []
          : [
              {
                mode: phase.mode,
                probability: phase.probability,
                retry_after_seconds: phase.retryAfterSeconds,
              },
            ];
      await applyPhase(rig, d, sendPlan, phase.messageFaults);
      if (phase.extraReconciler) {
        d.counts.extraReconcilerPasses++;
        track(d, rig.stack.reconcileNow());
      }
      const phaseStart = Date.now();
      const until = phaseStart + rig.mix.faultPhaseMs;
      while (running && Date.now() < until) await sleep(Math.min(100, until - Date.now()));
      d.phaseWindows.push({
        start: phaseStart,
        end: Date.now(),
        sendFault: phase.mode,
        messageFaults: phase.messageFaults.map((f) => f.mode),
      });
    }
  })().catch((e: unknown) => {
    error = e;
  });
  return {
    failed: () => error !== undefined,
    async stop(): Promise<void> {
      running = false;
      await loop;
      if (error !== undefined) throw error;
    },
  };
}

/**
 * The keys one event's tries carry, in the order they are sent: the event's own (its header, or
 * none for the key derived from `event_id`), then, for a client that mints a key per try, a fresh
 * one each time. Records every key used.
 */
function keysFor(d: Driven, spec: EventSpec) {
  const used = new Set<string>([spec.idempotencyKey]);
  let tries = 0;
  return {
    used,
    next(): string | undefined {
      const n = tries++;
      if (spec.freshKeys !== true || n === 0) return spec.headerKey;
      d.counts.freshKeyPosts++;
      const key = freshKey(spec, n);
      used.add(key);
      return key;
    },
  };
}

/** One POST of an event, retried as a client retries a 5xx (the API's retry contract): up to 6 tries. */
async function post(
  rig: Rig,
  d: Driven,
  variant: 'original' | 'conflict',
  body: string,
  nextKey: () => string | undefined,
): Promise<Answer> {
  for (let attempt = 1; ; attempt++) {
    d.counts.posts++;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const key = nextKey();
    if (key !== undefined) headers['idempotency-key'] = key;
    let status: number;
    let code: string | undefined;
    let admittedKey: string | undefined;
    try {
      const response = await fetch(`${rig.stack.apiUrl}/v1/notifications`, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(20_000),
      });
      status = response.status;
      const parsed = (await response.json().catch(() => ({}))) as {
        code?: unknown;
        idempotency_key?: unknown;
      };
      if (typeof parsed.code === 'string') code = parsed.code;
      if (status < 300 && typeof parsed.idempotency_key === 'string') admittedKey = parsed.idempotency_key;
    } catch {
      status = 599;
    }
    const bucket = String(status);
    d.counts.responses[bucket] = (d.counts.responses[bucket] ?? 0) + 1;
    if (status < 500 || attempt >= 6) {
      return {
        variant,
        status,
        ...(code === undefined ? {} : { code }),
        ...(admittedKey === undefined ? {} : { admittedKey }),
      };
    }
    d.counts.clientRetries++;
    await sleep(50 * attempt);
  }
}

/** A duplicate dispatch message, as a forwarder retry or an at-least-once queue would produce. */
function duplicateDispatch(rig: Rig, d: Driven, key: string, delayMs: number): void {
  track(
    d,
    sleep(delayMs).then(async () => {
      await rig.sqs.send(
        new SendMessageCommand({
          QueueUrl: rig.stack.queueUrl,
          MessageBody: JSON.stringify({ idempotency_key: key, version: 1 }),
        }),
      );
      d.counts.extraSqsMessages++;
    }),
  );
}

/** One normal event: its duplicate POSTs (a conflicting one among them when it has one). */
async function runEvent(rig: Rig, d: Driven, spec: EventSpec): Promise<void> {
  // SNS carries no reference: the simulator's test oracle attributes a body to its key by the secret.
  if (rig.provider === 'sns') await registerSecrets(rig.simUrl, spec);
  const expiresAt = Date.now() + spec.lifeMs;
  const keys = keysFor(d, spec);
  const spellings = new Set<string>();
  const calls = Array.from({ length: spec.duplicates }, (_, n) => {
    const phone = spellingFor(spec, n);
    spellings.add(phone);
    return post(
      rig,
      d,
      'original',
      JSON.stringify(requestBody(spec, expiresAt, spec.params, phone)),
      keys.next,
    );
  });
  if (spec.conflictParams !== undefined) {
    d.counts.conflicts++;
    spellings.add(spec.phone);
    const conflict = JSON.stringify(requestBody(spec, expiresAt, spec.conflictParams));
    calls.splice(Math.floor(calls.length / 2), 0, post(rig, d, 'conflict', conflict, keys.next));
  }
  const responses = await Promise.all(calls);
  if (spec.freshKeys === true) d.counts.freshKeyEvents++;
  if (spec.spellings !== undefined) d.counts.respelledEvents++;
  d.events.push(driverEvent(spec, keys.used, spellings));
  d.admissions.push({
    idempotencyKey: spec.idempotencyKey,
    ...(keys.used.size > 1 ? { keys: [...keys.used] } : {}),
    kind: spec.kind,
    responses,
  });
  if (spec.kind === 'too_late') d.counts.rejectedTooLate++;
  if (spec.kind === 'short_life') d.counts.shortLife++;
  const admitted = responses.find((r) => r.status < 300);
  if (admitted === undefined) return;
  // With a key per try the command may be under any of them: the answer names it.
  const key = admitted.admittedKey ?? spec.idempotencyKey;
  d.admitted.add(key);
  rig.tracker.add(key);
  for (const delay of spec.extraSqsDelaysMs) duplicateDispatch(rig, d, key, delay);
}

/** What the driver knows of an event it sent: the per-event invariants judge by this, not by the store. */
function driverEvent(spec: EventSpec, keys: Iterable<string>, spellings: Iterable<string>): DriverEvent {
  return {
    eventId: spec.eventId,
    channel: 'sms',
    template: 'password_reset',
    keys: [...keys],
    spellings: [...spellings],
  };
}

/** One pumping reset: its POSTs, each answer kept for the budget check. */
async function pump(rig: Rig, d: Driven, event: PumpingEvent): Promise<void> {
  const spec = event.spec;
  d.specs.push(spec);
  // As for the normal events: the SNS oracle must know this reset's secret to attribute its message.
  if (rig.provider === 'sns') await registerSecrets(rig.simUrl, spec);
  const sentAt = Date.now();
  const phone = spellingFor(spec, 0);
  const body = JSON.stringify(requestBody(spec, sentAt + spec.lifeMs, spec.params, phone));
  const keys = keysFor(d, spec);
  const responses = await Promise.all(
    Array.from({ length: spec.duplicates }, () => post(rig, d, 'original', body, keys.next)),
  );
  if (spec.spellings !== undefined) d.counts.respelledEvents++;
  d.events.push(driverEvent(spec, keys.used, [phone]));
  const stats = d.counts.pumping;
  for (const r of responses) {
    stats.posts++;
    if (r.status === 202) stats.admitted++;
    if (r.status === 200) stats.replayed++;
    if (r.status === 429) stats.refused++;
    d.pumping.push({
      idempotencyKey: spec.idempotencyKey,
      target: event.target,
      country: event.country,
      status: r.status,
      ...(r.code === undefined ? {} : { code: r.code }),
      sentAt,
      at: Date.now(),
    });
  }
  if (responses.some((r) => r.status < 300)) {
    d.admitted.add(spec.idempotencyKey);
    rig.tracker.add(spec.idempotencyKey);
  }
}

/**
 * SMS pumping, alongside the normal events: bursts to a few numbers, then waves over many numbers
 * of a few countries. Every reset of one burst (or one country's wave) at once: the race the
 * budgets must win.
 */
async function runPumping(rig: Rig, d: Driven): Promise<void> {
  const events = pumpingEvents(rig.seed, rig.mix);
  for (const group of ['burst', 'wave'] as const) {
    const targets = new Map<string, PumpingEvent[]>();
    for (const e of events.filter((x) => x.group === group)) {
      const by = group === 'burst' ? e.target : e.country;
      targets.set(by, [...(targets.get(by) ?? []), e]);
    }
    for (const batch of targets.values()) await Promise.all(batch.map((e) => pump(rig, d, e)));
  }
}

/** Admission: `concurrency` workers take events in order until the count or the duration runs out. */
async function admit(rig: Rig, d: Driven, stopped: () => boolean): Promise<void> {
  const { options, tracker } = rig;
  const admissionStart = Date.now();
  const endAt =
    options.durationMs === undefined ? Number.POSITIVE_INFINITY : admissionStart + options.durationMs;
  const maxPending = options.maxPending ?? 500;
  let next = 0;
  let lastReport = Date.now();
  const worker = async () => {
    while (next < options.events && Date.now() < endAt && !stopped()) {
      while (tracker.pending() >= maxPending && Date.now() < endAt) await sleep(100);
      if (next >= options.events || Date.now() >= endAt) break;
      const spec = eventSpec(rig.seed, next++, rig.mix);
      d.specs.push(spec);
      await runEvent(rig, d, spec);
      d.counts.events++;
      if (Date.now() - lastReport >= 10_000) {
        lastReport = Date.now();
        const seconds = (Date.now() - admissionStart) / 1000;
        rig.say(
          `chaos: ${d.counts.events} events in ${seconds.toFixed(0)} s (${(d.counts.events / seconds).toFixed(1)}/s), ${d.admitted.size} admitted, ${tracker.pending()} not final yet (${tracker.pendingStates()})`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
}

/** Drives the run: fault phases, pumping and the seeded events; returns once the phases have stopped. */
export async function driveChaos(rig: Rig): Promise<Driven> {
  const d = newDriven();
  const phases = startPhases(rig, d);
  const pumpingRun = runPumping(rig, d);
  const admissionStart = Date.now();
  await admit(rig, d, phases.failed);
  await pumpingRun;
  d.counts.admissionMs = Date.now() - admissionStart;
  const first = d.specs[0];
  if (rig.options.leakCanary && first) rig.stack.runtime.logger.info('leak canary', { to: first.phone });
  rig.say(
    `chaos: admission done: ${d.counts.events} events, ${d.admitted.size} keys admitted in ${(d.counts.admissionMs / 1000).toFixed(0)} s`,
  );
  await phases.stop();
  return d;
}
