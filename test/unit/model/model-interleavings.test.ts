/**
 * Model-based test of concurrency (fast-check scheduler): the api, several senders, reconciler
 * passes, delivery receipts and the clock run at the same time, and the scheduler picks the order in which every
 * store operation and provider call proceeds. Whatever the interleaving, the promise holds and,
 * after a fault-free tail, every key is final.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DispatchStep } from '../../../local/faults/dispatch-crash.js';
import { readSetting, SETTINGS } from '../../../shared/settings.js';
import { breaches, createWorld, drain, requestFor, SEND_FAULTS, T0 } from './world.js';

/** Runs per property: at least 1,000 in `npm test`; `MODEL_RUNS` (set by `npm run chaos`) asks for more. */
const RUNS = Math.max(1_000, readSetting(process.env, SETTINGS.modelRuns) ?? 0);
/**
 * A hang guard, not a budget: CPU-bound runs on a loaded 2-core machine (a chaos soak beside `npm test`)
 * took 130 s for 5,000 runs, so the guard grows with the runs asked for (docs/testing.md#hang-guards).
 */
const HANG_GUARD_MS = Math.max(120_000, RUNS * 200);

const scenarioArb = fc.record({
  /** From "expires during dispatch" to "plenty of time". */
  lifeMs: fc.constantFrom(6_500, 9_000, 14_000, 600_000),
  /** Concurrent identical POSTs, and maybe one with a conflicting payload. */
  duplicates: fc.integer({ min: 1, max: 4 }),
  conflict: fc.boolean(),
  /** Concurrent sender invocations for the key (SQS duplicates), each with its provider outcome and maybe a crash. */
  senders: fc.array(
    fc.record({
      fault: fc.constantFrom(...SEND_FAULTS),
      crash: fc.option(fc.constantFrom(...Object.values(DispatchStep)), { nil: undefined, freq: 3 }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  /** Concurrent reconciler passes (an overlapping schedule). */
  reconcilers: fc.integer({ min: 0, max: 3 }),
  /** Delivery receipts arriving while all of that runs. */
  receipts: fc.integer({ min: 0, max: 2 }),
  lookupsDown: fc.boolean(),
  /** Clock jumps that land between any two operations (a slow call, a paused container). */
  advances: fc.array(fc.constantFrom(300, 1_500, 4_000, 11_000), { maxLength: 4 }),
  /** Store operations that fail as throttled, counted from the start of the concurrent phase. */
  throttled: fc.integer({ min: 0, max: 2 }),
  finalStatus: fc.constantFrom('delivered' as const, 'undelivered' as const, 'never' as const),
});

describe('model: interleavings of api, senders, reconciler and clock', () => {
  it(
    `keeps the promise under any interleaving (${RUNS} runs)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), scenarioArb, async (s, scenario) => {
          // Prepare: every store operation and provider call waits for the scheduler while it is on.
          let scheduled = true;
          const world = createWorld({
            pause: (what) => (scheduled ? s.schedule(Promise.resolve(), what) : Promise.resolve()),
          });
          world.provider.finalStatus = scenario.finalStatus;
          world.provider.plan = scenario.senders.map((sender) => sender.fault);
          world.provider.lookupsDown = scenario.lookupsDown;
          const expiresAt = T0 + scenario.lifeMs;
          const key = 'key-0';

          // Act: admission races with its duplicates (and a conflict), then everything races at once.
          const variants = [
            ...Array.from({ length: scenario.duplicates }, () => 0),
            ...(scenario.conflict ? [1] : []),
          ];
          const admissions = await s.waitFor(
            Promise.all(variants.map((variant) => world.admit(requestFor(0, variant, expiresAt)))),
          );
          world.throttle(scenario.throttled);
          const actors: Promise<unknown>[] = [
            ...scenario.senders.map((sender) => world.dispatch(key, sender.crash)),
            ...Array.from({ length: scenario.reconcilers }, () => world.reconcile()),
            // A receipt is retried (as a provider retries its callbacks) until it applies or gives up.
            ...Array.from({ length: scenario.receipts }, async () => {
              for (let attempt = 0; attempt < 3; attempt++) {
                await s.schedule(Promise.resolve(), 'receipt');
                if ((await world.receipt(key)) === true) return;
              }
            }),
            ...scenario.advances.map((ms) =>
              s.schedule(Promise.resolve(), `advance ${ms}`).then(() => world.clock.advance(ms)),
            ),
            world.admit(requestFor(0, 0, expiresAt)),
          ];
          await s.waitFor(Promise.all(actors));
          const duringRace = breaches(world);
          scheduled = false;
          const open = await drain(world, [key]);

          // Assess
          // Exactly one request is admitted; its payload's duplicates replay, the other payload conflicts.
          const kinds = admissions.map((a) => (a === 'throttled' ? a : a.kind));
          const winner = variants[kinds.indexOf('admitted')];
          expect(kinds.filter((k) => k === 'admitted')).toHaveLength(1);
          expect(kinds).toEqual(
            variants.map((v, i) =>
              i === kinds.indexOf('admitted') ? 'admitted' : v === winner ? 'replayed' : 'conflict',
            ),
          );
          expect(duringRace).toEqual([]);
          expect(open).toEqual([]);
          expect(breaches(world)).toEqual([]);
        }),
        { numRuns: RUNS },
      );
    },
    HANG_GUARD_MS,
  );

  it(
    `a delivery receipt racing status polls and late senders is applied exactly once (${RUNS} runs)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          fc.record({
            status: fc.constantFrom('delivered' as const, 'undelivered' as const),
            receipts: fc.integer({ min: 1, max: 3 }),
            reconcilers: fc.integer({ min: 1, max: 3 }),
            senders: fc.integer({ min: 0, max: 2 }),
          }),
          async (s, scenario) => {
            // Prepare: a key sent, its message final at the provider, its status poll due.
            let scheduled = false;
            const world = createWorld({
              pause: (what) => (scheduled ? s.schedule(Promise.resolve(), what) : Promise.resolve()),
            });
            world.provider.finalStatus = scenario.status;
            const key = 'key-0';
            await world.admit(requestFor(0, 0, T0 + 600_000));
            await world.dispatch(key);
            world.clock.advance(world.policy.statusPollMs + world.provider.finalAfterMs);
            scheduled = true;

            // Act: receipts, status polls and stale queue deliveries all at once.
            const results = await s.waitFor(
              Promise.all([
                ...Array.from({ length: scenario.receipts }, () => world.receipt(key)),
                ...Array.from({ length: scenario.reconcilers }, () => world.reconcile()),
                ...Array.from({ length: scenario.senders }, () => world.dispatch(key)),
              ]),
            );
            scheduled = false;

            // Assess: one final transition, by whichever writer won the guard; the promise held.
            const record = world.store.records()[0];
            const trail = world.store.allEvidence().filter((e) => e.toState === scenario.status);
            expect(record?.state).toBe(scenario.status);
            expect(trail).toHaveLength(1);
            expect(results.slice(0, scenario.receipts).filter((r) => r === true).length).toBe(
              trail[0]?.actor === 'receipt' ? 1 : 0,
            );
            expect(world.provider.ledger).toHaveLength(1);
            expect(breaches(world)).toEqual([]);
          },
        ),
        { numRuns: RUNS },
      );
    },
    HANG_GUARD_MS,
  );
});
