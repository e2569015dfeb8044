/**
 * The world the model-based tests drive: the real use cases (admitNotification,
 * dispatchNotification, reconcileDue) over the in-memory store, a fake provider with a ledger, a
 * queue that only records, and a manual clock. Plus the checks every step must pass.
 */

import {
  type DispatchStep,
  InjectedCrashError,
  withDispatchSteps,
} from '../../../local/faults/dispatch-crash.js';
import { keyOfReference, trailProblems } from '../../../scripts/chaos/invariants.js';
import { createLocalCipher } from '../../../shared/adapters/local-cipher.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import {
  isFinal,
  type NotificationRecord,
  type NotificationRequest,
} from '../../../shared/domain/notification.js';
import { DEFAULT_POLICY, type DispatchPolicy, dispatchDeadline } from '../../../shared/domain/policy.js';
import type { LookupOutcome, ProviderStatus, SendOutcome } from '../../../shared/domain/provider.js';
import type { DispatchMessage, DispatchQueue } from '../../../shared/ports/queue.js';
import type { LookupRef, SendCommand, SmsProvider } from '../../../shared/ports/sms-provider.js';
import { TWILIO_CAPABILITIES } from '../../../shared/providers/twilio/provider.js';
import { type AdmissionOutcome, admitNotification } from '../../../shared/usecases/admit-notification.js';
import { type DispatchReport, dispatchNotification } from '../../../shared/usecases/dispatch-notification.js';
import { ingestReceipt } from '../../../shared/usecases/ingest-receipt.js';
import { type ReconcileSummary, reconcileDue } from '../../../shared/usecases/reconcile-due.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore, type StoreOperation } from '../../support/memory-store.js';

/** 2026-11-29T12:00:00Z. */
export const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

/** Short settle and horizon so a run's clock runs out in few steps; the rules are the production ones. */
export const MODEL_POLICY: DispatchPolicy = {
  ...DEFAULT_POLICY,
  statusHorizonMs: 60_000,
  queueSafetyNetMs: 20_000,
};

/** How the provider handles one send: the simulator's fault modes plus an adapter that throws. */
export const SEND_FAULTS = [
  'ok',
  'timeout_before_accept',
  'timeout_after_accept',
  'error_5xx_before_accept',
  'error_5xx_after_accept',
  'rate_limited',
  'reject_permanent',
  'adapter_throws',
] as const;
export type SendFault = (typeof SEND_FAULTS)[number];

/** One provider-accepted message. */
export interface FakeMessage {
  readonly id: string;
  readonly clientReference: string;
  readonly acceptedAt: number;
  readonly validityPeriodSeconds: number;
  /** Final status and when it is reached ('never': stays `sent` for ever). */
  readonly finalStatus: 'delivered' | 'undelivered' | 'never';
  readonly finalAt: number;
}

/** One send that reached the provider (after the adapter's own deadline check). */
export interface FakeCall {
  readonly at: number;
  readonly clientReference: string;
  readonly deadline: number;
  readonly fault: SendFault;
}

/**
 * A provider with a ledger. Faults come from a plan (consumed one per send; `ok` when empty).
 * Like the real adapter it never starts a call at or after the command's deadline. A call that the
 * scheduler resumes after its deadline never reached the provider: the design's settle time rests
 * on a request not arriving after its caller gave up plus the settle time.
 */
export class FakeProvider implements SmsProvider {
  readonly name = 'fake';
  readonly capabilities = TWILIO_CAPABILITIES;
  readonly ledger: FakeMessage[] = [];
  readonly calls: FakeCall[] = [];
  plan: SendFault[] = [];
  /** Lookups answer `inconclusive` while set (the provider's status API is down). */
  lookupsDown = false;
  finalStatus: FakeMessage['finalStatus'] = 'delivered';
  finalAfterMs = 2_000;
  private seq = 0;

  constructor(
    private readonly clock: ManualClock,
    /** Awaited at the start of every call: lets a scheduler interleave provider calls. */
    private readonly pause: (what: string) => Promise<void> = async () => undefined,
  ) {}

  async send(command: SendCommand): Promise<SendOutcome> {
    const fault = this.plan.shift() ?? 'ok';
    if (!(command.deadline > this.clock.now()))
      return { kind: 'not_sent_retryable', detail: 'deadline_passed' };
    await this.pause(`send ${command.clientReference}`);
    if (!(command.deadline > this.clock.now())) {
      return { kind: 'unknown', detail: 'timeout', timedOut: true };
    }
    this.calls.push({
      at: this.clock.now(),
      clientReference: command.clientReference,
      deadline: command.deadline,
      fault,
    });
    const accept = () => {
      const id = `SM${++this.seq}`;
      const now = this.clock.now();
      this.ledger.push({
        id,
        clientReference: command.clientReference,
        acceptedAt: now,
        validityPeriodSeconds: command.validityPeriodSeconds,
        finalStatus: this.finalStatus,
        finalAt: now + this.finalAfterMs,
      });
      return id;
    };
    // A timeout uses up the whole call budget.
    const timeout = () => this.clock.set(Math.max(this.clock.now(), command.deadline));
    switch (fault) {
      case 'ok':
        return { kind: 'accepted', messageId: accept() };
      case 'timeout_before_accept':
        timeout();
        return { kind: 'unknown', detail: 'timeout', timedOut: true };
      case 'timeout_after_accept':
        accept();
        timeout();
        return { kind: 'unknown', detail: 'timeout', timedOut: true };
      case 'error_5xx_before_accept':
        return { kind: 'unknown', detail: 'http_503', timedOut: false };
      case 'error_5xx_after_accept':
        accept();
        return { kind: 'unknown', detail: 'http_500', timedOut: false };
      case 'rate_limited':
        return { kind: 'not_sent_retryable', detail: 'http_429', retryAfterMs: 1_000 };
      case 'reject_permanent':
        return { kind: 'not_sent_permanent', detail: 'invalid_destination' };
      case 'adapter_throws':
        accept();
        throw new Error('adapter bug');
    }
  }

  async lookup(ref: LookupRef): Promise<LookupOutcome> {
    await this.pause(`lookup ${ref.clientReference}`);
    if (this.lookupsDown) return { kind: 'inconclusive', detail: 'status_api_down' };
    const message =
      ref.messageId === undefined
        ? this.ledger.find((m) => m.clientReference === ref.clientReference)
        : this.ledger.find((m) => m.id === ref.messageId);
    if (message === undefined) {
      // Like Twilio: a sid that is not found proves nothing; a complete listing without the reference does.
      return ref.messageId === undefined
        ? { kind: 'absent' }
        : { kind: 'inconclusive', detail: 'sid_not_found' };
    }
    if (message.clientReference !== ref.clientReference) {
      return { kind: 'inconclusive', detail: 'client_reference_mismatch' };
    }
    return { kind: 'found', messageId: message.id, status: this.statusOf(message) };
  }

  /** The status callback the provider would post now for the key's (latest) message, if it has one. */
  receiptFor(
    key: string,
  ): { clientReference: string; messageId: string; status: ProviderStatus } | undefined {
    const message = this.ledger.findLast((m) => keyOfReference(m.clientReference) === key);
    if (message === undefined) return undefined;
    return {
      clientReference: message.clientReference,
      messageId: message.id,
      status: this.statusOf(message),
    };
  }

  private statusOf(message: FakeMessage): ProviderStatus {
    if (message.finalStatus === 'never' || this.clock.now() < message.finalAt) return 'sent';
    return message.finalStatus;
  }
}

/** A dispatch queue that records what the reconciler re-drives. */
export class RecordingQueue implements DispatchQueue {
  readonly messages: DispatchMessage[] = [];
  async enqueue(messages: ReadonlyArray<{ readonly id: string; readonly message: DispatchMessage }>) {
    this.messages.push(...messages.map((m) => m.message));
    return { failed: [] };
  }
}

/** A store request refused before it was processed (like a DynamoDB throttle): nothing was written. */
export class InjectedThrottleError extends Error {
  override readonly name = 'ThrottlingException';
}

export interface WorldOptions {
  /** Awaited before every store operation and provider call (scheduler hook); may throw. */
  readonly pause?: (what: string) => Promise<void>;
  readonly policy?: DispatchPolicy;
}

/** Builds a world; every dependency is real except the provider, the queue and the clock. */
export function createWorld(options: WorldOptions = {}) {
  const clock = new ManualClock(T0);
  const pause = options.pause ?? (async () => undefined);
  /** How many of the next store operations fail with a throttle. */
  let throttleNext = 0;
  const store = new MemoryNotificationStore({
    beforeOperation: async (operation: StoreOperation, key?: string) => {
      await pause(`${operation} ${key ?? ''}`);
      if (throttleNext > 0) {
        throttleNext--;
        throw new InjectedThrottleError(`${operation} throttled`);
      }
    },
  });
  const provider = new FakeProvider(clock, pause);
  const queue = new RecordingQueue();
  const policy = options.policy ?? MODEL_POLICY;
  const cipher = createLocalCipher(new Uint8Array(32).fill(3));
  const fingerprinter = createFingerprinter(new Uint8Array(32).fill(5));
  /** Crash plan: the next dispatch of a key crashes at this step. */
  const crashAt = new Map<string, DispatchStep>();
  let owners = 0;

  const world = {
    clock,
    store,
    provider,
    queue,
    policy,
    crashAt,
    /** The next `count` store operations are throttled. */
    throttle(count: number) {
      throttleNext = count;
    },
    /** An API request; a throttled one is a failed request (a 5xx the client retries). */
    async admit(request: NotificationRequest): Promise<AdmissionOutcome | 'throttled'> {
      try {
        return await admitNotification(
          { store, cipher, fingerprinter, clock, policy, providerName: provider.name },
          request,
        );
      } catch (error) {
        if (error instanceof InjectedThrottleError) return 'throttled';
        throw error;
      }
    },
    /** One sender invocation; an injected crash or throttle is reported, not thrown (the message comes back). */
    async dispatch(key: string, crash?: DispatchStep): Promise<DispatchReport | 'crashed' | 'throttled'> {
      const crashStep = crash ?? crashAt.get(key);
      crashAt.delete(key);
      // This invocation's ports, wrapped to die at the planned step (the reconciler's stay plain).
      const ports = withDispatchSteps({ store, provider }, (step) => {
        if (step === crashStep) throw new InjectedCrashError(`crash at ${step}`);
      });
      try {
        return await dispatchNotification(
          { ...ports, cipher, clock, policy, owner: `sender-${++owners}` },
          key,
        );
      } catch (error) {
        if (error instanceof InjectedCrashError) return 'crashed';
        if (error instanceof InjectedThrottleError) return 'throttled';
        throw error;
      }
    },
    /**
     * A status callback of the key's latest message, through the service's receipts use case
     * (`ingestReceipt`: read strongly, decide, one guarded transition, re-decide on a lost race).
     * Returns whether it wrote.
     */
    async receipt(key: string): Promise<boolean | 'throttled'> {
      const receipt = provider.receiptFor(key);
      if (receipt === undefined) return false;
      try {
        const result = await ingestReceipt(
          { store, clock, policy },
          { provider: 'fake', providerStatus: receipt.status, ...receipt },
        );
        return result.kind === 'applied';
      } catch (error) {
        if (error instanceof InjectedThrottleError) return 'throttled';
        throw error;
      }
    },
    /** One reconciler pass; a throttled index query fails the pass (the next one runs on schedule). */
    async reconcile(): Promise<ReconcileSummary | 'throttled'> {
      try {
        return await reconcileDue({ store, cipher, provider, queue, clock, policy });
      } catch (error) {
        if (error instanceof InjectedThrottleError) return 'throttled';
        throw error;
      }
    },
  };
  return world;
}

export type World = ReturnType<typeof createWorld>;

/** The request for model key `index`, payload `variant` (same index + variant = same payload). */
export function requestFor(index: number, variant: number, expiresAt: number): NotificationRequest {
  return {
    idempotencyKey: `key-${index}`,
    eventId: `evt-${index}`,
    channel: 'sms',
    template: 'password_reset',
    locale: 'en',
    expiresAt,
    sensitive: { phone: '+14155550123', params: { code: variant === 0 ? '111111' : '222222' } },
  };
}

/**
 * The promise, checked on the real world: at most one accepted message per key, no call at or after
 * the dispatch deadline, evidence gap-free and replaying to the stored state, the stored outcome
 * agreeing with the provider, and the sealed payload kept exactly as long as the command is live.
 * Returns the breaches (empty = all good).
 */
export function breaches(world: World): string[] {
  const out: string[] = [];
  const records = new Map(world.store.records().map((r) => [r.idempotencyKey, r]));
  const perKey = new Map<string, number>();
  for (const m of world.provider.ledger) {
    const key = keyOfReference(m.clientReference) ?? '?';
    perKey.set(key, (perKey.get(key) ?? 0) + 1);
  }
  for (const [key, n] of perKey) if (n > 1) out.push(`${key}: ${n} accepted messages`);
  for (const call of world.provider.calls) {
    const record = records.get(keyOfReference(call.clientReference) ?? '?');
    if (!record) out.push(`${call.clientReference}: call for an unknown key`);
    else if (call.at >= dispatchDeadline(record, world.policy)) {
      out.push(
        `${call.clientReference}: call ${call.at - dispatchDeadline(record, world.policy)} ms past the deadline`,
      );
    }
  }
  const evidence = world.store.allEvidence();
  // The validity period never outlives the token: bounded by its remaining life at the attempt's claim.
  const claims = new Map(
    evidence.filter((e) => e.reason === 'claimed').map((e) => [`${e.idempotencyKey}#${e.attempt}`, e.at]),
  );
  for (const m of world.provider.ledger) {
    const record = records.get(keyOfReference(m.clientReference) ?? '?');
    const claimedAt = claims.get(m.clientReference);
    if (!record || claimedAt === undefined)
      out.push(`${m.clientReference}: message without a claimed attempt`);
    else if (m.validityPeriodSeconds * 1000 > record.expiresAt - claimedAt)
      out.push(`${m.clientReference}: valid past expires_at`);
  }
  for (const record of records.values()) {
    out.push(
      ...trailProblems(
        record,
        evidence.filter((e) => e.idempotencyKey === record.idempotencyKey),
      ),
    );
    out.push(...outcomeProblems(world, record));
    const sealed = world.store.sealedPayloadOf(record.idempotencyKey) !== undefined;
    if (sealed === isFinal(record))
      out.push(`${record.idempotencyKey}: sealed payload ${sealed ? 'kept' : 'gone'} while ${record.state}`);
  }
  return out;
}

/** The stored outcome must not contradict the provider's ledger. */
function outcomeProblems(world: World, record: NotificationRecord): string[] {
  const messages = world.provider.ledger.filter(
    (m) => keyOfReference(m.clientReference) === record.idempotencyKey,
  );
  const key = record.idempotencyKey;
  if (['sent', 'delivered', 'undelivered'].includes(record.state)) {
    if (!messages.some((m) => m.id === record.provider.messageId))
      return [`${key}: ${record.state} without its message`];
  }
  if (record.state === 'failed' && messages.length > 0) return [`${key}: failed, but a message was accepted`];
  if (record.state === 'expired' && record.lastReason !== 'unknown_at_expiry' && messages.length > 0) {
    return [`${key}: expired (${record.lastReason}), but a message was accepted`];
  }
  return [];
}

/**
 * The fault-free tail of a run: the outage ends, the queue delivers everything, the reconciler runs
 * on schedule and the clock moves on. Returns the keys that still are not final.
 */
export async function drain(world: World, keys: readonly string[], maxRounds = 400): Promise<string[]> {
  world.provider.plan = [];
  world.provider.lookupsDown = false;
  world.crashAt.clear();
  world.throttle(0);
  for (let round = 0; round < maxRounds; round++) {
    const open = world.store.records().filter((r) => !isFinal(r));
    if (open.length === 0) return [];
    for (const key of keys) await world.dispatch(key);
    await world.reconcile();
    world.clock.advance(1_000 + (round % 7) * 700);
  }
  return world.store
    .records()
    .filter((r) => !isFinal(r))
    .map((r) => `${r.idempotencyKey}: ${r.state}`);
}
