/**
 * Model-based test (fast-check `fc.commands`) of the store and the state machine through the real
 * use cases: random sequences of admissions (duplicates, conflicts, late ones), sender invocations
 * (every provider fault, crashes at every step), reconciler passes, delivery receipts, provider
 * status outages, throttled store calls and clock jumps. After every command the promise must hold; after a fault-free tail every key is final.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DispatchStep } from '../../../local/faults/dispatch-crash.js';
import { isFinal } from '../../../shared/domain/notification.js';
import { dispatchDeadline } from '../../../shared/domain/policy.js';
import { readSetting, SETTINGS } from '../../../shared/settings.js';
import {
  breaches,
  createWorld,
  drain,
  requestFor,
  SEND_FAULTS,
  type SendFault,
  T0,
  type World,
} from './world.js';

/** Runs per property: at least 1,000 in `npm test`; `MODEL_RUNS` (set by `npm run chaos`) asks for more. */
const RUNS = Math.max(1_000, readSetting(process.env, SETTINGS.modelRuns) ?? 0);
/**
 * A hang guard, not a budget: CPU-bound runs on a loaded 2-core machine (a chaos soak beside `npm test`)
 * took 130 s for 5,000 runs, so the guard grows with the runs asked for (docs/testing.md#hang-guards).
 */
const HANG_GUARD_MS = Math.max(120_000, RUNS * 200);
const KEYS = 3;

/** What the model knows: which keys were admitted, with which payload, and their expiry. */
interface Model {
  readonly lifeMs: readonly number[];
  readonly admitted: Map<number, number>;
}

interface Real {
  readonly world: World;
}

const expiresAtOf = (model: Model, key: number) => T0 + (model.lifeMs[key] ?? 0);

class Admit implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly key: number,
    readonly variant: number,
  ) {}
  check = () => true;
  async run(model: Model, { world }: Real) {
    // Act
    const request = requestFor(this.key, this.variant, expiresAtOf(model, this.key));
    const outcome = await world.admit(request);
    // Assess: the model predicts the outcome from what was admitted before.
    const previous = model.admitted.get(this.key);
    const tooLate = world.clock.now() >= dispatchDeadline(request, world.policy);
    if (outcome === 'throttled') {
      // A failed request stores nothing new; the client retries it later.
    } else if (previous === undefined) {
      expect(outcome.kind).toBe(tooLate ? 'expired' : 'admitted');
      if (!tooLate) model.admitted.set(this.key, this.variant);
    } else {
      expect(outcome.kind).toBe(previous === this.variant ? 'replayed' : 'conflict');
    }
    expect(
      world.store
        .records()
        .map((r) => r.idempotencyKey)
        .sort(),
    ).toEqual([...model.admitted.keys()].map((k) => `key-${k}`).sort());
    expect(breaches(world)).toEqual([]);
  }
  toString = () => `admit(${this.key}, v${this.variant})`;
}

class Dispatch implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly key: number,
    readonly fault: SendFault,
    readonly crashAt: DispatchStep | undefined,
  ) {}
  check = () => true;
  async run(_model: Model, { world }: Real) {
    // Prepare
    world.provider.plan = [this.fault];
    if (this.crashAt !== undefined) world.crashAt.set(`key-${this.key}`, this.crashAt);
    // Act: a queue delivery for the key, whatever its state (duplicates and stale messages included).
    await world.dispatch(`key-${this.key}`);
    // Assess
    expect(breaches(world)).toEqual([]);
  }
  toString = () => `dispatch(${this.key}, ${this.fault}${this.crashAt ? `, crash ${this.crashAt}` : ''})`;
}

class Reconcile implements fc.AsyncCommand<Model, Real> {
  constructor(readonly lookupsDown: boolean) {}
  check = () => true;
  async run(_model: Model, { world }: Real) {
    world.provider.lookupsDown = this.lookupsDown;
    await world.reconcile();
    world.provider.lookupsDown = false;
    expect(breaches(world)).toEqual([]);
  }
  toString = () => `reconcile(${this.lookupsDown ? 'lookups down' : 'ok'})`;
}

class Receipt implements fc.AsyncCommand<Model, Real> {
  constructor(readonly key: number) {}
  check = () => true;
  async run(_model: Model, { world }: Real) {
    await world.receipt(`key-${this.key}`);
    expect(breaches(world)).toEqual([]);
  }
  toString = () => `receipt(${this.key})`;
}

class Throttle implements fc.AsyncCommand<Model, Real> {
  constructor(readonly count: number) {}
  check = () => true;
  async run(_model: Model, { world }: Real) {
    world.throttle(this.count);
  }
  toString = () => `throttle(next ${this.count} store calls)`;
}

class Advance implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(_model: Model, { world }: Real) {
    world.clock.advance(this.ms);
  }
  toString = () => `advance(${this.ms})`;
}

const keyArb = fc.integer({ min: 0, max: KEYS - 1 });
const commandsArb = fc.commands(
  [
    fc.tuple(keyArb, fc.integer({ min: 0, max: 1 })).map(([k, v]) => new Admit(k, v)),
    fc
      .tuple(
        keyArb,
        fc.constantFrom(...SEND_FAULTS),
        fc.option(fc.constantFrom(...Object.values(DispatchStep)), { freq: 4, nil: undefined }),
      )
      .map(([k, f, c]) => new Dispatch(k, f, c)),
    fc.boolean().map((down) => new Reconcile(down)),
    keyArb.map((k) => new Receipt(k)),
    fc.integer({ min: 1, max: 3 }).map((n) => new Throttle(n)),
    fc.constantFrom(200, 1_000, 3_000, 8_000, 11_000, 30_000, 120_000).map((ms) => new Advance(ms)),
  ],
  { maxCommands: 40 },
);
// Lives from "already inside the margin" to 10 minutes: some keys expire before, during and after dispatch.
const livesArb = fc.array(fc.constantFrom(3_000, 6_500, 9_000, 20_000, 60_000, 600_000), {
  minLength: KEYS,
  maxLength: KEYS,
});

describe('model: store and state machine through the real use cases', () => {
  it(
    `keeps the promise under any sequence of api, sender, reconciler and clock steps (${RUNS} runs)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(livesArb, commandsArb, async (lifeMs, commands) => {
          // Prepare
          const world = createWorld();
          const model: Model = { lifeMs, admitted: new Map() };
          // Act
          await fc.asyncModelRun(() => ({ model, real: { world } }), commands);
          const open = await drain(
            world,
            Array.from({ length: KEYS }, (_, k) => `key-${k}`),
          );
          // Assess: eventually final, and the promise held all along.
          expect(open).toEqual([]);
          expect(breaches(world)).toEqual([]);
          expect(world.store.records().every(isFinal)).toBe(true);
        }),
        { numRuns: RUNS },
      );
    },
    HANG_GUARD_MS,
  );
});
