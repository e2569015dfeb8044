import { describe, expect, it } from 'vitest';
import { keepProviderMessageIds } from '../../../shared/composition/outcome-write.js';
import { recordSendOutcome } from '../../../shared/domain/dispatch.js';
import {
  applyTransition,
  type EvidenceRecord,
  type NotificationRecord,
} from '../../../shared/domain/notification.js';
import { Actor, NotificationState, ReasonCode } from '../../../shared/domain/states.js';
import type { NotificationStore } from '../../../shared/ports/store.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore, type StoreOperation } from '../../support/memory-store.js';
import { aDispatchingRecord, aPolicy, SECOND, T0 } from '../domain/fixtures.js';

const policy = aPolicy();

function anEvidence(record: NotificationRecord): EvidenceRecord {
  return {
    idempotencyKey: record.idempotencyKey,
    eventId: record.eventId,
    seq: record.version,
    at: record.updatedAt,
    fromState: null,
    toState: record.state,
    attempt: record.attempts,
    reason: ReasonCode.claimed,
    actor: Actor.sender,
    destinationFingerprint: record.destinationFingerprint,
  };
}

/** A store holding one claimed record, whose transitions fail `failures` times first. */
async function aStore(options: { failures?: number } = {}) {
  let failures = options.failures ?? 0;
  const beforeOperation = async (operation: StoreOperation) => {
    if (operation !== 'transition' || failures <= 0) return;
    failures -= 1;
    throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
  };
  const inner = new MemoryNotificationStore({ beforeOperation });
  const claimed = aDispatchingRecord({ leaseUntil: T0 + 8 * SECOND });
  await inner.admit(claimed, anEvidence(claimed), 'sealed');
  return { inner, claimed };
}

function acceptedWrite(claimed: NotificationRecord, clock: ManualClock) {
  return applyTransition(
    claimed,
    recordSendOutcome(claimed, { kind: 'accepted', messageId: 'msg-1' }, clock.now(), policy),
  );
}

describe('sender store: the message id a provider returned is never lost', () => {
  it('retries an outcome write that throws, inside the lease', async () => {
    // Prepare
    const clock = new ManualClock(T0);
    const { inner, claimed } = await aStore({ failures: 2 });
    const recovered: string[] = [];
    const store = keepProviderMessageIds(inner, {
      clock,
      policy,
      sleep: async (ms) => clock.advance(ms),
      onRecovered: (_key, how) => recovered.push(how),
    });

    // Act
    const result = await store.transition(acceptedWrite(claimed, clock));

    // Assess
    expect(result.kind).toBe('written');
    const stored = await inner.get(claimed.idempotencyKey);
    expect(stored?.record).toMatchObject({ state: NotificationState.sent, provider: { messageId: 'msg-1' } });
    expect(recovered).toEqual(['retried']);
  });

  it('takes a retry that finds its own earlier write (the answer was lost, not the write) as written', async () => {
    // Prepare: the first transition lands, then its response is lost.
    const clock = new ManualClock(T0);
    const { inner, claimed } = await aStore();
    let lost = 1;
    const lossy: NotificationStore = {
      admit: (...args) => inner.admit(...args),
      get: (key) => inner.get(key),
      evidence: (key) => inner.evidence(key),
      byEvent: (id) => inner.byEvent(id),
      reschedule: (record, dueAt) => inner.reschedule(record, dueAt),
      due: (now, limit, cursor) => inner.due(now, limit, cursor),
      dueShardCount: inner.dueShardCount,
      dueLanes: inner.dueLanes,
      dueInShard: (...args) => inner.dueInShard(...args),
      oldestDue: (...args) => inner.oldestDue(...args),
      readReconcileCursor: () => inner.readReconcileCursor(),
      writeReconcileCursor: (...args) => inner.writeReconcileCursor(...args),
      markPoison: (...args) => inner.markPoison(...args),
      transition: async (applied) => {
        const result = await inner.transition(applied);
        if (lost-- > 0) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        return result;
      },
    };
    const store = keepProviderMessageIds(lossy, { clock, policy, sleep: async (ms) => clock.advance(ms) });

    // Act
    const result = await store.transition(acceptedWrite(claimed, clock));

    // Assess
    expect(result).toMatchObject({ kind: 'written', record: { provider: { messageId: 'msg-1' } } });
  });

  it('gives up (throws) rather than writing after the lease ends', async () => {
    const clock = new ManualClock(T0);
    const { inner, claimed } = await aStore({ failures: 10 });
    const store = keepProviderMessageIds(inner, { clock, policy, sleep: async (ms) => clock.advance(ms) });
    clock.set(T0 + 7_950);
    await expect(store.transition(acceptedWrite(claimed, clock))).rejects.toThrow('throttled');
    expect((await inner.get(claimed.idempotencyKey))?.record.state).toBe(NotificationState.dispatching);
  });

  it('applies the id as evidence when the lease was taken over and the record became dispatch_unknown', async () => {
    // Prepare: the reconciler expired the lease before the sender's outcome write landed.
    const clock = new ManualClock(T0);
    const { inner, claimed } = await aStore();
    const write = acceptedWrite(claimed, clock);
    clock.advance(9 * SECOND);
    const takenOver = applyTransition(claimed, {
      to: NotificationState.dispatchUnknown,
      reason: ReasonCode.leaseExpired,
      actor: Actor.reconciler,
      at: clock.now(),
      set: { unknownSince: clock.now(), dueAt: clock.now() + SECOND, checks: 0 },
      remove: ['leaseUntil', 'leaseOwner'],
    });
    await inner.transition(takenOver);
    const recovered: string[] = [];
    const store = keepProviderMessageIds(inner, {
      clock,
      policy,
      onRecovered: (_key, how) => recovered.push(how),
    });

    // Act
    const result = await store.transition(write);

    // Assess: the sender lost its race, but the record has the id and is sent: no second SMS.
    expect(result.kind).toBe('stale');
    const stored = await inner.get(claimed.idempotencyKey);
    expect(stored?.record).toMatchObject({ state: NotificationState.sent, provider: { messageId: 'msg-1' } });
    expect(recovered).toEqual(['late_evidence']);
  });

  it('passes every other write through once, untouched', async () => {
    const clock = new ManualClock(T0);
    const { inner, claimed } = await aStore({ failures: 1 });
    const store = keepProviderMessageIds(inner, { clock, policy, sleep: async (ms) => clock.advance(ms) });
    const unknown = applyTransition(
      claimed,
      recordSendOutcome(claimed, { kind: 'unknown', detail: 'x', timedOut: true }, clock.now(), policy),
    );
    await expect(store.transition(unknown)).rejects.toThrow('throttled');
  });
});
