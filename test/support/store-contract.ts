/**
 * One contract for the {@link NotificationStore} port, run against every implementation (the
 * in-memory store of the model-based tests and the DynamoDB store): what the use cases rely on.
 */
import { describe, expect, it } from 'vitest';
import { type BudgetCounter, budgetCounters, parseDestinationLimits } from '../../shared/domain/budgets.js';
import {
  type AdmissionInput,
  admit,
  applyTransition,
  type NotificationRecord,
} from '../../shared/domain/notification.js';
import type { NotificationStore } from '../../shared/ports/store.js';

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const SEALED = 'aes1.sealed.payload';

let counter = 0;
/** A fresh admission for a unique key (and event, unless one is given). */
function anAdmission(
  overrides: { eventId?: string; dueAt?: number; template?: string; payloadFingerprint?: string } = {},
) {
  counter += 1;
  const key = `contract-${counter}-${Math.random().toString(36).slice(2, 8)}`;
  const input: AdmissionInput = {
    request: {
      idempotencyKey: key,
      eventId: overrides.eventId ?? `evt-${key}`,
      channel: 'sms',
      template: overrides.template ?? 'password_reset',
      locale: 'en',
      expiresAt: NOW + 600_000,
      sensitive: { phone: '+14155550123', params: { code: '123456' } },
    },
    destinationFingerprint: 'fp1:contract',
    payloadFingerprint: overrides.payloadFingerprint ?? 'pf1:contract',
    providerName: 'simulator',
    now: NOW,
    safetyNetAt: overrides.dueAt ?? NOW + 60_000,
  };
  return admit(input);
}

const claim = (record: NotificationRecord, owner: string) =>
  applyTransition(record, {
    to: 'dispatching',
    reason: 'claimed',
    actor: 'sender',
    at: NOW + 1,
    set: { attempts: record.attempts + 1, leaseUntil: NOW + 10_000, leaseOwner: owner, dueAt: NOW + 10_000 },
    remove: ['nextAttemptAt'],
  });

/** Registers the contract suite for one implementation; `store()` is read inside each test. */
export function describeStoreContract(name: string, store: () => NotificationStore): void {
  describe(`NotificationStore contract: ${name}`, () => {
    it('admits a key exactly once among concurrent writers; the losers get the stored command', async () => {
      // Prepare
      const { next, evidence } = anAdmission();

      // Act
      const results = await Promise.all(
        Array.from({ length: 10 }, () => store().admit(next, evidence, SEALED)),
      );

      // Assess
      expect(results.filter((r) => r.kind === 'admitted')).toHaveLength(1);
      for (const result of results) {
        if (result.kind === 'over_budget' || result.kind === 'event_taken') {
          throw new Error(`one key, one event, no budget: got ${result.kind}`);
        }
        expect(result.stored.record).toMatchObject({ idempotencyKey: next.idempotencyKey, version: 1 });
        expect(result.stored.sealedPayload).toBe(SEALED);
      }
    });

    it('reads back what was admitted, with its sealed payload and the admission evidence', async () => {
      // Prepare
      const { next, evidence } = anAdmission();
      await store().admit(next, evidence, SEALED);

      // Act
      const stored = await store().get(next.idempotencyKey);
      const trail = await store().evidence(next.idempotencyKey);

      // Assess
      expect(stored?.record).toEqual(next);
      expect(stored?.sealedPayload).toBe(SEALED);
      expect(trail).toEqual([evidence]);
      expect(await store().get(`${next.idempotencyKey}-missing`)).toBeUndefined();
    });

    it('writes a transition once: a second writer from the same version is stale and sees the winner', async () => {
      // Prepare
      const { next, evidence } = anAdmission();
      await store().admit(next, evidence, SEALED);

      // Act
      const [first, second] = await Promise.all([
        store().transition(claim(next, 'a')),
        store().transition(claim(next, 'b')),
      ]);

      // Assess
      const results = [first, second];
      expect(results.filter((r) => r.kind === 'written')).toHaveLength(1);
      const stale = results.find((r) => r.kind === 'stale');
      expect(stale?.kind === 'stale' && stale.current?.version).toBe(2);
      expect((await store().evidence(next.idempotencyKey)).map((e) => e.seq)).toEqual([1, 2]);
    });

    it('drops the sealed payload when a command becomes final, and keeps its evidence in order', async () => {
      // Prepare
      const { next, evidence } = anAdmission();
      await store().admit(next, evidence, SEALED);
      const claimed = claim(next, 'a');
      await store().transition(claimed);
      const failed = applyTransition(claimed.next, {
        to: 'failed',
        reason: 'provider_rejected_permanent',
        actor: 'sender',
        at: NOW + 2,
      });

      // Act
      const written = await store().transition(failed);
      const stored = await store().get(next.idempotencyKey);

      // Assess
      expect(written.kind).toBe('written');
      expect(stored?.record.state).toBe('failed');
      expect(stored?.sealedPayload).toBeUndefined();
      expect((await store().evidence(next.idempotencyKey)).map((e) => e.reason)).toEqual([
        'admitted',
        'claimed',
        'provider_rejected_permanent',
      ]);
    });

    it('reschedules only the due time, guarded by version, without evidence', async () => {
      // Prepare
      const { next, evidence } = anAdmission();
      await store().admit(next, evidence, SEALED);

      // Act
      const moved = await store().reschedule(next, NOW + 123_000);
      const stale = await store().reschedule({ ...next, version: 7 }, NOW + 5);

      // Assess
      expect(moved.kind).toBe('written');
      expect(stale.kind).toBe('stale');
      expect((await store().get(next.idempotencyKey))?.record.dueAt).toBe(NOW + 123_000);
      expect(await store().evidence(next.idempotencyKey)).toHaveLength(1);
    });

    it('lists the commands of one business event only', async () => {
      // Prepare
      const eventId = `evt-shared-${Math.random().toString(36).slice(2)}`;
      const one = anAdmission({ eventId });
      // One command per event, channel and template: the event's second command is another template's.
      const two = anAdmission({ eventId, template: 'password_reset_other' });
      const other = anAdmission();
      for (const a of [one, two, other]) await store().admit(a.next, a.evidence, SEALED);

      // Act
      const listed = await store().byEvent(eventId);

      // Assess
      expect(listed.map((r) => r.idempotencyKey).sort()).toEqual(
        [one.next.idempotencyKey, two.next.idempotencyKey].sort(),
      );
    });

    it('lists due items (and only due ones) across pages until the cursor ends', async () => {
      // Prepare: due times far in the past of every other test's items would collide; use a window of our own.
      const base = NOW - 10 * 365 * 86_400_000 - counter * 1_000_000;
      const due = [
        anAdmission({ dueAt: base + 1 }),
        anAdmission({ dueAt: base + 2 }),
        anAdmission({ dueAt: base + 3 }),
      ];
      const later = anAdmission({ dueAt: base + 10_000 });
      for (const a of [...due, later]) await store().admit(a.next, a.evidence, SEALED);

      // Act
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store().due(base + 3, 2, cursor);
        seen.push(...page.items.map((r) => r.idempotencyKey));
        cursor = page.cursor;
      } while (cursor);

      // Assess
      const ours = new Set([...due, later].map((a) => a.next.idempotencyKey));
      expect(seen.filter((key) => ours.has(key)).sort()).toEqual(
        due.map((a) => a.next.idempotencyKey).sort(),
      );
    });

    it('resumes a shard after the last entry read, also past its end: later reads see only what became due since', async () => {
      // Prepare: a due window of our own, far in the past of every other test's items.
      const base = NOW - 20 * 365 * 86_400_000 - counter * 1_000_000;
      const due = [anAdmission({ dueAt: base + 1 }), anAdmission({ dueAt: base + 2 })];
      const later = anAdmission({ dueAt: base + 10_000 });
      for (const a of [...due, later]) await store().admit(a.next, a.evidence, SEALED);
      const readAll = async (shard: number, now: number, from: string | undefined) => {
        const keys: string[] = [];
        let position = from;
        for (;;) {
          const page = await store().dueInShard(shard, now, 2, position);
          keys.push(...page.entries.map((e) => e.idempotencyKey));
          position = page.cursor ?? page.resumeAfter ?? position;
          if (!page.cursor) return { keys, position };
        }
      };

      // Act: every urgent shard to its end at base + 3, then on from there at base + 20 s.
      const first: string[] = [];
      const second: string[] = [];
      for (const shard of store().dueLanes.urgent) {
        const sweep = await readAll(shard, base + 3, undefined);
        first.push(...sweep.keys);
        second.push(...(await readAll(shard, base + 20_000, sweep.position)).keys);
      }

      // Assess
      const ours = (keys: string[]) =>
        keys.filter((k) => [...due, later].some((a) => a.next.idempotencyKey === k)).sort();
      expect(ours(first)).toEqual(due.map((a) => a.next.idempotencyKey).sort());
      expect(ours(second)).toEqual([later.next.idempotencyKey]);
    });

    it('keeps a sent command in the status-poll lane and an undecided one in the urgent lane', async () => {
      // Prepare: admitted (urgent), then claimed and sent with a status poll due in our own window.
      const base = NOW - 30 * 365 * 86_400_000 - counter * 1_000_000;
      const a = anAdmission({ dueAt: base });
      await store().admit(a.next, a.evidence, SEALED);
      const lanesHolding = async (key: string) => {
        const found: string[] = [];
        for (const [lane, shards] of Object.entries(store().dueLanes)) {
          for (const shard of shards) {
            const page = await store().dueInShard(shard, base + 5, 100);
            if (page.entries.some((e) => e.idempotencyKey === key)) found.push(lane);
          }
        }
        return found;
      };
      const before = await lanesHolding(a.next.idempotencyKey);
      const claimedWritten = await store().transition(
        applyTransition(a.next, {
          to: 'dispatching',
          reason: 'claimed',
          actor: 'sender',
          at: NOW + 1,
          set: { attempts: 1, leaseUntil: base + 1, leaseOwner: 'w1', dueAt: base + 1 },
          remove: ['nextAttemptAt'],
        }),
      );
      if (claimedWritten.kind !== 'written') throw new Error('fixture: claim not written');
      const sent = applyTransition(claimedWritten.record, {
        to: 'sent',
        reason: 'provider_accepted',
        actor: 'sender',
        at: NOW + 2,
        set: { provider: { name: 'simulator', messageId: 'SM-lane' }, sentAt: NOW + 2, dueAt: base + 2 },
        remove: ['leaseUntil', 'leaseOwner'],
      });

      // Act
      await store().transition(sent);

      // Assess
      expect(before).toEqual(['urgent']);
      expect(await lanesHolding(a.next.idempotencyKey)).toEqual(['poll']);
    });

    it('admits one command per event: of 10 keys racing for one event, one wins and the others get its claim', async () => {
      // Prepare
      const eventId = `evt-race-${Math.random().toString(36).slice(2)}`;
      const admissions = Array.from({ length: 10 }, () => anAdmission({ eventId }));

      // Act
      const results = await Promise.all(admissions.map((a) => store().admit(a.next, a.evidence, SEALED)));

      // Assess
      const winners = results.flatMap((r, i) => (r.kind === 'admitted' ? [admissions[i]] : []));
      expect(winners).toHaveLength(1);
      const winner = winners[0]?.next as NotificationRecord;
      for (const result of results.filter((r) => r.kind !== 'admitted')) {
        expect(result).toEqual({
          kind: 'event_taken',
          first: {
            idempotencyKey: winner.idempotencyKey,
            payloadFingerprint: winner.payloadFingerprint,
            destinationFingerprint: winner.destinationFingerprint,
          },
        });
      }
      for (const loser of admissions.filter((a) => a.next !== winner)) {
        expect(await store().get(loser.next.idempotencyKey)).toBeUndefined();
      }
      expect((await store().byEvent(eventId)).map((r) => r.idempotencyKey)).toEqual([winner.idempotencyKey]);
    });

    it("keeps the first key's replay after another key was refused the event, and tells a different payload apart", async () => {
      // Prepare
      const eventId = `evt-second-${Math.random().toString(36).slice(2)}`;
      const first = anAdmission({ eventId });
      const second = anAdmission({ eventId, payloadFingerprint: 'pf1:contract-other' });
      await store().admit(first.next, first.evidence, SEALED);

      // Act
      const refused = await store().admit(second.next, second.evidence, SEALED);
      const replay = await store().admit(first.next, first.evidence, SEALED);

      // Assess
      expect(refused).toEqual({
        kind: 'event_taken',
        first: {
          idempotencyKey: first.next.idempotencyKey,
          payloadFingerprint: 'pf1:contract',
          destinationFingerprint: 'fp1:contract',
        },
      });
      expect(replay).toMatchObject({ kind: 'exists', stored: { record: first.next } });
    });

    it("counts no budget for an event's second key, and answers it with the claim even when the budget is spent", async () => {
      // Prepare: a budget of 2; the event's first key spends one.
      const counter = {
        key: `LIMIT#dst#fp1:contract-${Math.random().toString(36).slice(2)}#15m#1`,
        scope: 'destination' as const,
        tallies: [{ attribute: 'n_15m_1', limit: 2, windowEndsAt: NOW + 900_000 }],
      };
      const eventId = `evt-budget-${Math.random().toString(36).slice(2)}`;
      const first = anAdmission({ eventId });
      await store().admit(first.next, first.evidence, SEALED, [counter]);

      // Act
      const second = anAdmission({ eventId });
      const secondKey = await store().admit(second.next, second.evidence, SEALED, [counter]);
      const other = anAdmission();
      const otherEvent = await store().admit(other.next, other.evidence, SEALED, [counter]);
      const third = anAdmission({ eventId });
      const afterSpent = await store().admit(third.next, third.evidence, SEALED, [counter]);
      const fourth = anAdmission();
      const refused = await store().admit(fourth.next, fourth.evidence, SEALED, [counter]);

      // Assess
      expect(secondKey.kind).toBe('event_taken');
      expect(otherEvent.kind).toBe('admitted');
      expect(afterSpent).toMatchObject({
        kind: 'event_taken',
        first: { idempotencyKey: first.next.idempotencyKey },
      });
      expect(refused.kind).toBe('over_budget');
    });

    it('slides a destination budget: 3 admitted a minute before a clock quarter-hour leave no room a minute after it', async () => {
      // Prepare: 3/15m on a number of its own, spent at 11:59 (a fixed window reopened at 12:00).
      const fingerprint = aFingerprint();
      const before = NOW - MINUTE;
      for (let i = 0; i < 3; i++) {
        const { next, evidence } = anAdmission();
        const admitted = await store().admit(next, evidence, SEALED, logOf('3/15m', fingerprint, before + i));
        expect(admitted.kind).toBe('admitted');
      }

      // Act: two more at 12:01, then one when the oldest is 15 minutes old.
      const results = [];
      for (const at of [NOW + MINUTE, NOW + MINUTE + 1, before + 15 * MINUTE]) {
        const { next, evidence } = anAdmission();
        results.push(await store().admit(next, evidence, SEALED, logOf('3/15m', fingerprint, at)));
      }

      // Assess
      expect(results).toEqual([
        { kind: 'over_budget', scope: 'destination', freesAt: before + 15 * MINUTE },
        { kind: 'over_budget', scope: 'destination', freesAt: before + 15 * MINUTE },
        expect.objectContaining({ kind: 'admitted' }),
      ]);
    });

    it('keeps every sliding window exact across many admissions, while the log is rewritten', async () => {
      // Prepare: 2/1m and 3/5m on one number; an attempt every 20 s for 12 minutes. The log is
      // rewritten every few admissions (its rewrite length is twice the largest limit).
      const fingerprint = aFingerprint();
      const times = Array.from({ length: 36 }, (_, i) => NOW + i * 20_000);

      // Act
      const admittedAt: number[] = [];
      for (const at of times) {
        const { next, evidence } = anAdmission();
        const result = await store().admit(next, evidence, SEALED, logOf('2/1m,3/5m', fingerprint, at));
        if (result.kind === 'admitted') admittedAt.push(at);
      }

      // Assess: the same admissions as a reference sliding window over every admission, kept whole.
      const expected: number[] = [];
      for (const at of times) {
        const inLast = (ms: number) => expected.filter((t) => t > at - ms).length;
        if (inLast(MINUTE) < 2 && inLast(5 * MINUTE) < 3) expected.push(at);
      }
      expect(admittedAt).toEqual(expected);
      expect(admittedAt.length).toBeGreaterThan(6);
    });

    it('admits exactly the limit of 40 concurrent admissions to one number, also when its log is due for a rewrite', async () => {
      // Prepare: a log at its rewrite length (4 old admissions under 2/1m), then 40 at once.
      const fingerprint = aFingerprint();
      for (let i = 0; i < 4; i++) {
        const { next, evidence } = anAdmission();
        await store().admit(
          next,
          evidence,
          SEALED,
          logOf('2/1m', fingerprint, NOW - 10 * MINUTE + i * MINUTE),
        );
      }
      const commands = Array.from({ length: 40 }, () => anAdmission());

      // Act
      const results = await Promise.all(
        commands.map(({ next, evidence }) =>
          store().admit(next, evidence, SEALED, logOf('2/1m', fingerprint, NOW)),
        ),
      );

      // Assess
      expect(results.filter((r) => r.kind === 'admitted')).toHaveLength(2);
      expect(results.filter((r) => r.kind === 'over_budget')).toHaveLength(38);
    });
  });
}

const MINUTE = 60_000;

/** A number's fingerprint of its own, so budgets of different tests never meet. */
function aFingerprint(): string {
  return `fp1:contract-log-${Math.random().toString(36).slice(2)}`;
}

/** The destination budget counters the domain builds for `limits` (as `DESTINATION_LIMITS`) at `at`. */
function logOf(limits: string, fingerprint: string, at: number): BudgetCounter[] {
  return budgetCounters(
    { destination: parseDestinationLimits(limits), country: [] },
    fingerprint,
    undefined,
    at,
  );
}

/** How a write's answer is lost after the write was applied (see `local/faults/lost-answer.ts`). */
export type LostAnswerMode = 'surface' | 'retry';

/** A store over the same data whose next write is applied and then loses its answer. */
export interface LossyStore {
  readonly store: () => NotificationStore;
  /**
   * The next write is applied, then its answer is lost: `surface` = the caller's call fails
   * (timeout or reset after commit), `retry` = the SDK's retry sends it again and meets it.
   */
  readonly loseNextAnswer: (mode: LostAnswerMode) => void;
}

/** A destination budget of `limit` in one window, on a counter of its own. */
function aBudget(limit: number): BudgetCounter {
  counter += 1;
  return {
    key: `LIMIT#dst#fp-lost-${counter}-${Math.random().toString(36).slice(2, 8)}#15m#1`,
    scope: 'destination',
    tallies: [{ attribute: 'n_15m_1', limit, windowEndsAt: NOW + 900_000 }],
  };
}

/**
 * The port contract for an answer lost after commit: every write the use cases make ends as if
 * its answer had arrived (the writer recognises its own write), and a write that lost a race
 * still loses it.
 */
export function describeLostAnswerContract(name: string, lossy: LossyStore): void {
  describe.each(['surface', 'retry'] as const)(
    `NotificationStore contract: ${name}, answer lost after commit (%s)`,
    (mode) => {
      const store = () => lossy.store();

      it('admission: the writer gets admitted, not a replay of its own command', async () => {
        // Prepare
        const { next, evidence } = anAdmission();
        lossy.loseNextAnswer(mode);

        // Act
        const result = await store().admit(next, evidence, SEALED);

        // Assess
        expect(result.kind).toBe('admitted');
        expect((await store().get(next.idempotencyKey))?.record).toEqual(next);
      });

      it('admission within a budget: admitted and counted once', async () => {
        // Prepare
        const budget = aBudget(2);
        const first = anAdmission();
        const second = anAdmission();
        const third = anAdmission();
        lossy.loseNextAnswer(mode);

        // Act
        const lost = await store().admit(first.next, first.evidence, SEALED, [budget]);
        const another = await store().admit(second.next, second.evidence, SEALED, [budget]);
        const refused = await store().admit(third.next, third.evidence, SEALED, [budget]);

        // Assess
        expect([lost.kind, another.kind, refused.kind]).toEqual(['admitted', 'admitted', 'over_budget']);
      });

      it('claim: the claimer gets written with its lease, and one evidence record', async () => {
        // Prepare
        const { next, evidence } = anAdmission();
        await store().admit(next, evidence, SEALED);
        lossy.loseNextAnswer(mode);

        // Act
        const result = await store().transition(claim(next, 'sender-a'));

        // Assess
        expect(result).toMatchObject({ kind: 'written', record: { version: 2, leaseOwner: 'sender-a' } });
        expect((await store().get(next.idempotencyKey))?.record).toMatchObject({
          state: 'dispatching',
          version: 2,
          leaseOwner: 'sender-a',
        });
        expect((await store().evidence(next.idempotencyKey)).map((e) => e.seq)).toEqual([1, 2]);
      });

      it('outcome: the sender gets written', async () => {
        // Prepare
        const { next, evidence } = anAdmission();
        await store().admit(next, evidence, SEALED);
        const claimed = await store().transition(claim(next, 'sender-a'));
        if (claimed.kind !== 'written') throw new Error('fixture: claim not written');
        const sent = applyTransition(claimed.record, {
          to: 'sent',
          reason: 'provider_accepted',
          actor: 'sender',
          at: NOW + 2,
          set: {
            provider: { name: 'simulator', messageId: 'SM-lost' },
            sentAt: NOW + 2,
            dueAt: NOW + 60_000,
          },
          remove: ['leaseUntil', 'leaseOwner'],
        });
        lossy.loseNextAnswer(mode);

        // Act
        const result = await store().transition(sent);

        // Assess
        expect(result).toMatchObject({ kind: 'written', record: { state: 'sent', version: 3 } });
        expect((await store().evidence(next.idempotencyKey)).map((e) => e.reason)).toEqual([
          'admitted',
          'claimed',
          'provider_accepted',
        ]);
      });

      it('a writer that lost the race still loses it, its answer lost or not', async () => {
        // Prepare
        const { next, evidence } = anAdmission();
        await store().admit(next, evidence, SEALED);
        await store().transition(claim(next, 'sender-a'));
        lossy.loseNextAnswer(mode);

        // Act
        const result = await store().transition(claim(next, 'sender-b'));

        // Assess
        expect(result).toMatchObject({ kind: 'stale', current: { version: 2, leaseOwner: 'sender-a' } });
      });

      it('reschedule: written, the due time moved', async () => {
        // Prepare
        const { next, evidence } = anAdmission();
        await store().admit(next, evidence, SEALED);
        lossy.loseNextAnswer(mode);

        // Act
        const result = await store().reschedule(next, NOW + 77_000);

        // Assess
        expect(result.kind).toBe('written');
        expect((await store().get(next.idempotencyKey))?.record.dueAt).toBe(NOW + 77_000);
      });

      it('reconcile cursor: the pass that wrote it is told so', async () => {
        // Prepare
        const before = await store().readReconcileCursor();
        lossy.loseNextAnswer(mode);

        // Act
        const written = await store().writeReconcileCursor(before.version, { '0': `lost-${mode}` });

        // Assess
        expect(written).toBe(true);
        expect(await store().readReconcileCursor()).toEqual({
          version: before.version + 1,
          shards: { '0': `lost-${mode}` },
        });
      });

      it('poison mark: one failure counts once', async () => {
        // Prepare
        const { next, evidence } = anAdmission();
        await store().admit(next, evidence, SEALED);
        const schedule = (count: number) => ({ dueAt: NOW + count * 1_000, parked: false });
        lossy.loseNextAnswer(mode);

        // Act
        const lost = await store().markPoison(next.idempotencyKey, NOW, schedule);
        const again = await store().markPoison(next.idempotencyKey, NOW, schedule);

        // Assess
        expect([lost?.poisonCount, again?.poisonCount]).toEqual([1, 2]);
      });
    },
  );
}
