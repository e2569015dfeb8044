/** Fixture factories and a simulator harness for the provider tests. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
} from '../../../local/simulator/server.js';
import { clientReference } from '../../../shared/domain/provider.js';
import type { LookupRef, SendCommand, SmsProvider } from '../../../shared/ports/sms-provider.js';
import { createTwilioProvider, type TwilioProviderOptions } from '../../../shared/providers/twilio/index.js';
import { ManualClock } from '../../support/manual-clock.js';

/** Short adapter timeouts keep the tests that must time out fast. */
export const TEST_TIMEOUT_MS = 300;
/** Calls that must not time out get room, so a busy machine does not make them flaky. */
export const ROOMY_TIMEOUT_MS = 5_000;
export const ACCOUNT_SID = `AC${'0'.repeat(32)}`;
export const AUTH_TOKEN = 'test-auth-token';
export const FROM = '+15005550006';

let sequence = 0;
const next = () => {
  sequence += 1;
  return sequence;
};

/** A fresh E.164 number per call (never one of Twilio's +1500555 magic numbers). */
export function aPhoneNumber(): string {
  return `+1415${String(2_000_000 + next()).padStart(7, '0')}`;
}

/** A reset body with a fresh six-digit code: the thing that must never be logged. */
export function aResetBody(): string {
  return `Your password reset code is ${String(100_000 + (randomBytes(3).readUIntBE(0, 3) % 900_000))}`;
}

export function anIdempotencyKey(): string {
  return `evt-${next()}-${randomBytes(4).toString('hex')}:sms:password_reset`;
}

/** A send command valid for 10 minutes, with the call deadline {@link ROOMY_TIMEOUT_MS} after `clock`. */
export function aSendCommand(clock: ManualClock, overrides: Partial<SendCommand> = {}): SendCommand {
  const idempotencyKey = overrides.idempotencyKey ?? anIdempotencyKey();
  const attempt = overrides.attempt ?? 1;
  return {
    idempotencyKey,
    attempt,
    clientReference: clientReference(idempotencyKey, attempt),
    to: aPhoneNumber(),
    body: aResetBody(),
    validityPeriodSeconds: 600,
    deadline: clock.now() + ROOMY_TIMEOUT_MS,
    ...overrides,
  };
}

/** The lookup reference of a command, as the reconciler would build it. */
export function aLookupRef(
  command: SendCommand,
  clock: ManualClock,
  overrides: Partial<LookupRef> = {},
): LookupRef {
  return {
    idempotencyKey: command.idempotencyKey,
    attempt: command.attempt,
    clientReference: command.clientReference,
    to: command.to,
    // The code is the body's last word (see aResetBody).
    secret: command.body.split(' ').at(-1) ?? '',
    attemptStartedAt: clock.now() - 1_000,
    callDeadline: command.deadline,
    ...overrides,
  };
}

/** A clock at real "now" that only moves when told (decisions are then deterministic). */
export function aClock(): ManualClock {
  return new ManualClock(Date.now());
}

export interface LedgerEntry {
  id: string;
  client_reference: string | null;
  destination_fingerprint: string;
  accepted_at: string;
  status: string;
  error_code: number | null;
  validity_period_seconds: number;
  messaging_service_sid: string | null;
  redacted: boolean;
  deleted: boolean;
  receipts: string;
}

export interface RequestEntry {
  received_at: string;
  client_reference: string | null;
  scheduled: boolean;
  fault: string | null;
  outcome: 'recorded' | 'not_recorded';
  message_id: string | null;
  http_status: number | null;
}

export interface CallbackEntry {
  received_at: string;
  client_reference: string | null;
  query: string;
  params: Record<string, string>;
  signature: string | null;
  signature_valid: boolean;
  idempotency_token: string | null;
}

/**
 * A started simulator with its captured log lines and a small control-API client. Its time is
 * `clock`, which moves only when a test advances it: statuses change and callbacks are posted then.
 */
export interface SimHarness {
  readonly sim: RunningSimulator;
  readonly url: string;
  readonly logs: string[];
  /** The simulator's clock; `reset()` brings it forward to the wall-clock now, where `aClock()` starts. */
  readonly clock: ManualClock;
  ledger(): Promise<LedgerEntry[]>;
  requests(): Promise<RequestEntry[]>;
  callbacks(): Promise<CallbackEntry[]>;
  setFaults(plan: unknown): Promise<Response>;
  clearFaults(): Promise<void>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(
  options: Omit<SimulatorOptions, 'log' | 'clock'> = {},
): Promise<SimHarness> {
  const logs: string[] = [];
  const clock = aClock();
  const sim = await startSimulator({
    authToken: AUTH_TOKEN,
    ...options,
    clock,
    log: (line) => logs.push(line),
  });
  const control = async (method: string, path: string, body?: unknown) =>
    fetch(`${sim.url}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
  const json = async <T>(path: string, key: string): Promise<T> =>
    ((await (await control('GET', path)).json()) as Record<string, T>)[key] as T;
  return {
    sim,
    url: sim.url,
    logs,
    clock,
    ledger: () => json<LedgerEntry[]>('/_sim/messages', 'messages'),
    requests: () => json<RequestEntry[]>('/_sim/requests', 'requests'),
    callbacks: () => json<CallbackEntry[]>('/_sim/callbacks', 'callbacks'),
    setFaults: (plan) => control('POST', '/_sim/faults', plan),
    clearFaults: async () => {
      await control('DELETE', '/_sim/faults');
    },
    reset: async () => {
      await control('POST', '/_sim/reset');
      // The reset cancelled every pending callback, so nothing fires on the way.
      clock.set(Math.max(clock.now(), Date.now()));
    },
    stop: () => sim.stop(),
  };
}

/** Status delays short enough that a test's clock step of a few hundred ms settles a message. */
export const QUICK_STATUS_DELAYS_MS = { sent: 50, delivered: 100 } as const;

/**
 * One simulator shared by the tests of the describe block this is called in (status delays
 * {@link QUICK_STATUS_DELAYS_MS} unless told): started before them, reset before each (unless
 * `resetBeforeEach` is false) and stopped after them. The returned harness stands for it; read it
 * inside tests and hooks only (before the start it throws).
 */
export function aSharedHarness({
  resetBeforeEach = true,
  ...options
}: Parameters<typeof startHarness>[0] & { resetBeforeEach?: boolean } = {}): SimHarness {
  let started: SimHarness | undefined;
  const current = (): SimHarness => {
    if (started === undefined) throw new Error('the shared harness is read before its block started it');
    return started;
  };
  beforeAll(async () => {
    started = await startHarness({ statusDelaysMs: QUICK_STATUS_DELAYS_MS, ...options });
  });
  afterAll(async () => {
    await current().stop();
  });
  if (resetBeforeEach) {
    beforeEach(async () => {
      await current().reset();
    });
  }
  return {
    get sim() {
      return current().sim;
    },
    get url() {
      return current().url;
    },
    get logs() {
      return current().logs;
    },
    get clock() {
      return current().clock;
    },
    ledger: () => current().ledger(),
    requests: () => current().requests(),
    callbacks: () => current().callbacks(),
    setFaults: (plan) => current().setFaults(plan),
    clearFaults: () => current().clearFaults(),
    reset: () => current().reset(),
    stop: () => current().stop(),
  };
}

/**
 * The adapter under test, pointed at a harness, with test-sized timeouts. By default it declares
 * redaction off and no list-lag allowance (the simulator has neither unless a fault says so), so
 * absence is provable once the canary has a sid: see {@link primeCanary}.
 */
export function aProvider(
  harness: Pick<SimHarness, 'url'>,
  clock: ManualClock,
  overrides: Partial<TwilioProviderOptions> = {},
) {
  return createTwilioProvider({
    baseUrl: harness.url,
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    from: FROM,
    statusCallbackBase: `${harness.url}/_callbacks/status`,
    redaction: 'off',
    listLagAllowanceMs: 0,
    lookupTimeoutMs: ROOMY_TIMEOUT_MS,
    clock,
    ...overrides,
  });
}

/** Sends one message to a fresh number, so the adapter has a sid of ours for its canary. */
export async function primeCanary(provider: SmsProvider, clock: ManualClock): Promise<string> {
  const outcome = await provider.send(aSendCommand(clock));
  if (outcome.kind !== 'accepted') throw new Error(`canary send was ${outcome.kind}`);
  return outcome.messageId;
}

/** A lookup reference read after the attempt's call deadline (as the reconciler reads for absence). */
export function anAfterDeadlineRef(
  command: SendCommand,
  clock: ManualClock,
  overrides: Partial<LookupRef> = {},
): LookupRef {
  return aLookupRef(command, clock, { callDeadline: clock.now() - 1, ...overrides });
}

/** Basic auth header for direct simulator requests. */
export const basicAuth = (sid = ACCOUNT_SID, token = AUTH_TOKEN) =>
  `Basic ${Buffer.from(`${sid}:${token}`).toString('base64')}`;

/** A URL on which nothing listens (the port was free a moment ago). */
export async function aClosedPortUrl(): Promise<string> {
  const sim = await startSimulator({});
  await sim.stop();
  return sim.url;
}

/** Records every call made through it and lets a test rewrite responses. */
export function aRecordingFetch(
  rewrite?: (
    url: string,
    init: RequestInit | undefined,
    call: number,
  ) => Promise<Response | undefined> | undefined,
) {
  const calls: { url: string; method: string }[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    calls.push({ url, method: init?.method ?? 'GET' });
    const replaced = await rewrite?.(url, init, calls.length);
    return replaced ?? fetch(input, init);
  };
  return { fetch: wrapped, calls };
}
