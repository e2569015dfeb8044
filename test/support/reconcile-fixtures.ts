/**
 * Fixtures for the reconciler tests (unit, over the memory store, and integration, over DynamoDB
 * Local): records in the states the reconciler meets, keys that land on a chosen due-index shard,
 * a counting provider and recording queues, a cipher that can be told to fail.
 */
import { dueShardOf } from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { createLocalCipher } from '../../shared/adapters/local-cipher.js';
import { decideDispatch, recordSendOutcome } from '../../shared/domain/dispatch.js';
import { admit, applyTransition, type NotificationRecord } from '../../shared/domain/notification.js';
import { DEFAULT_POLICY, type DispatchPolicy } from '../../shared/domain/policy.js';
import type { LookupOutcome } from '../../shared/domain/provider.js';
import { NotificationState } from '../../shared/domain/states.js';
import type { Cipher } from '../../shared/ports/cipher.js';
import type { DispatchMessage, DispatchQueue } from '../../shared/ports/queue.js';
import type { LookupRef, SmsProvider } from '../../shared/ports/sms-provider.js';
import type { NotificationStore } from '../../shared/ports/store.js';
import { TWILIO_CAPABILITIES } from '../../shared/providers/twilio/provider.js';
import { sealPayload } from '../../shared/usecases/payload-seal.js';
import { TEST_CODE, TEST_PHONE } from './fixtures.js';

export const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
export const POLICY: DispatchPolicy = DEFAULT_POLICY;

let counter = 0;
/**
 * A fresh idempotency key whose due-index shard is `shard` (0-3: the urgent lane, any state but
 * `sent`; 4-7: a `sent` record's status-poll lane).
 */
export function keyOnShard(shard: number, prefix = 'rk'): string {
  const state =
    shard >= TableSchema.dueShardsPerLane ? NotificationState.sent : NotificationState.dispatchUnknown;
  for (;;) {
    const key = `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
    if (Number(dueShardOf(key, state)) === shard) return key;
  }
}

/** An admitted record for `key`, expiring 10 minutes after `now`. */
export function acceptedRecord(key: string, now = T0, expiresInMs = 10 * 60_000) {
  return admit({
    request: {
      idempotencyKey: key,
      eventId: `evt-${key}`,
      channel: 'sms',
      template: 'password_reset',
      locale: 'en',
      expiresAt: now + expiresInMs,
      sensitive: { phone: TEST_PHONE, params: { code: TEST_CODE } },
    },
    destinationFingerprint: 'fp1:0123456789abcdef',
    payloadFingerprint: 'pf1:feedface',
    providerName: 'simulator',
    now,
    safetyNetAt: now + POLICY.queueSafetyNetMs,
  });
}

/** A `dispatch_unknown` record (the send timed out), due at `dueAt`. */
export function unknownRecord(
  key: string,
  options: { now?: number; dueAt?: number; expiresInMs?: number } = {},
) {
  const now = options.now ?? T0;
  const admitted = acceptedRecord(key, now, options.expiresInMs).next;
  const decision = decideDispatch(admitted, now, POLICY, 'test');
  if (decision.kind !== 'claim') throw new Error(`fixture: expected a claim, got ${decision.kind}`);
  const claimed = applyTransition(admitted, decision.intent).next;
  const unknown = applyTransition(
    claimed,
    recordSendOutcome(claimed, { kind: 'unknown', detail: 'timeout', timedOut: true }, now + 1, POLICY),
  ).next;
  return { ...unknown, dueAt: options.dueAt ?? now + 2 } satisfies NotificationRecord;
}

/** A `sent` record for `key` (accepted by the provider at `now`), due for a status poll at `dueAt`. */
export function sentRecord(key: string, options: { now?: number; dueAt?: number } = {}) {
  const now = options.now ?? T0;
  const admitted = acceptedRecord(key, now).next;
  const decision = decideDispatch(admitted, now, POLICY, 'test');
  if (decision.kind !== 'claim') throw new Error(`fixture: expected a claim, got ${decision.kind}`);
  const claimed = applyTransition(admitted, decision.intent).next;
  const sent = applyTransition(
    claimed,
    recordSendOutcome(claimed, { kind: 'accepted', messageId: `SM-${key}` }, now + 1, POLICY),
  ).next;
  return { ...sent, dueAt: options.dueAt ?? now + 2 } satisfies NotificationRecord;
}

/** Stores `record` as it is (admission item written directly in its current state). */
export async function plant(store: NotificationStore, cipher: Cipher, record: NotificationRecord) {
  const { evidence } = acceptedRecord(record.idempotencyKey);
  const sealed = await sealPayload(cipher, record.idempotencyKey, {
    phone: TEST_PHONE,
    params: { code: TEST_CODE },
  });
  const result = await store.admit(record, evidence, sealed);
  if (result.kind !== 'admitted') throw new Error('fixture: key already stored');
}

/** A local cipher whose decryptions fail while `failing` is true (a disabled KMS key). */
export function switchableCipher(): Cipher & { failing: boolean; decryptions: number } {
  const inner = createLocalCipher(Buffer.alloc(32, 3));
  const cipher = {
    failing: false,
    decryptions: 0,
    encrypt: (plaintext: Uint8Array, context: Readonly<Record<string, string>>) =>
      inner.encrypt(plaintext, context),
    async decrypt(sealed: string, context: Readonly<Record<string, string>>) {
      cipher.decryptions++;
      if (cipher.failing) {
        const error = new Error('The key is disabled');
        error.name = 'DisabledException';
        throw error;
      }
      return inner.decrypt(sealed, context);
    },
  };
  return cipher;
}

export type CountingProvider = SmsProvider & { lookups: LookupRef[]; sends: number };

/** A provider whose lookups answer `answer` and are counted; sends are counted too. */
export function countingProvider(
  answer: (ref: LookupRef) => LookupOutcome = () => ({ kind: 'inconclusive', detail: 'x' }),
): CountingProvider {
  const provider: CountingProvider = {
    name: 'simulator',
    capabilities: TWILIO_CAPABILITIES,
    lookups: [] as LookupRef[],
    sends: 0,
    async send() {
      provider.sends++;
      return { kind: 'accepted' as const, messageId: `SM${provider.sends}` };
    },
    async lookup(ref: LookupRef) {
      provider.lookups.push(ref);
      return answer(ref);
    },
  };
  return provider;
}

/**
 * A queue that records what it was given. `pending` is the backlog it reports (undefined: it
 * cannot say, like a queue without approximate counts).
 */
export function recordingQueue(): DispatchQueue & { messages: DispatchMessage[]; pending?: number } {
  const queue: DispatchQueue & { messages: DispatchMessage[]; pending?: number } = {
    messages: [] as DispatchMessage[],
    async enqueue(batch: ReadonlyArray<{ readonly id: string; readonly message: DispatchMessage }>) {
      queue.messages.push(...batch.map((b) => b.message));
      return { failed: [] };
    },
    async backlog() {
      return queue.pending;
    },
  };
  return queue;
}
