import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DueEntry } from '../../../shared/domain/due-lane.js';
import {
  afterReads,
  type DueLanes,
  handOut,
  nextReads,
  observeLags,
  type PassState,
  passLimits,
  pollReserve,
  type ReadResult,
  type RoundState,
  refuse,
  type ShardRead,
  splitQuota,
  startPass,
  startRound,
} from '../../../shared/domain/due-pass.js';
import type { ShardSweep } from '../../../shared/domain/due-sweep.js';
import { NotificationState } from '../../../shared/domain/states.js';

const NOW = 1_000_000;
/** Two urgent shards and two poll shards. */
const LANES: DueLanes = { urgent: [0, 1], poll: [2, 3] };

function anEntry(shard: number, n: number, overrides: Partial<DueEntry> = {}): DueEntry {
  return { idempotencyKey: `k-${shard}-${n}`, shard, dueAt: NOW - 1_000 + n, ...overrides };
}

/**
 * A due index that does not change during the test: shard `s` holds `depths[s]` entries. Positions
 * are offsets. `fullPageCursor`: a full page always has a cursor (DynamoDB's LastEvaluatedKey);
 * otherwise only a page with more after it (the memory store).
 */
function anIndex(depths: readonly number[], fullPageCursor = false) {
  const shards = depths.map((depth, shard) => Array.from({ length: depth }, (_, n) => anEntry(shard, n)));
  return {
    shards,
    read(shard: number, limit: number, position: string | undefined): ReadResult & { entries: DueEntry[] } {
      const all = shards[shard] ?? [];
      const from = position === undefined ? 0 : Number(position);
      const entries = all.slice(from, from + limit);
      const end = String(from + entries.length);
      const more = fullPageCursor ? entries.length === limit : from + entries.length < all.length;
      return {
        entries,
        ...(entries.length ? { resumeAfter: end } : {}),
        ...(more ? { cursor: end } : {}),
      };
    },
  };
}

/** Runs one round's reads against `index` the way the use case does. */
function runRound(index: ReturnType<typeof anIndex>, start: PassState, first: RoundState) {
  let pass = start;
  let round = first;
  const steps: { phase: string; spill: boolean; reads: readonly ShardRead[] }[] = [];
  const entries: DueEntry[] = [];
  for (let step = nextReads(pass, round); step; step = nextReads(pass, round)) {
    const { sweeps } = pass;
    const pages = step.reads.map((r) => index.read(r.shard, r.limit, sweeps[r.shard]?.position));
    steps.push({ phase: step.phase, spill: step.spill, reads: step.reads });
    ({ pass, round } = afterReads(pass, round, step, pages));
    entries.push(...pages.flatMap((p) => p.entries));
  }
  return { pass, round, steps, entries };
}

/** Runs a whole pass (rounds until the planner stops), handing out each round's entries. */
function runPass(
  index: ReturnType<typeof anIndex>,
  options: { maxItems: number; maxRounds: number; lanes?: DueLanes; sweeps?: readonly ShardSweep[] },
) {
  const lanes = options.lanes ?? LANES;
  const sweeps = options.sweeps ?? index.shards.map(() => ({ startedAt: NOW }));
  let pass = startPass({ now: NOW, maxItems: options.maxItems, lanes, sweeps });
  const rounds: { read: RoundState['read']; entries: DueEntry[]; handedOut: DueEntry[] }[] = [];
  for (let n = 1; n <= options.maxRounds; n++) {
    const round = startRound(pass, n);
    if (!round) break;
    const result = runRound(index, pass, round);
    const out = handOut(result.pass, result.entries);
    pass = out.pass;
    rounds.push({ read: result.round.read, entries: result.entries, handedOut: out.entries });
  }
  return { pass, rounds };
}

describe('passLimits', () => {
  it.each([
    ['inline: one round', { fanOut: false, maxRounds: 5 }, { maxItems: 1_000, maxRounds: 1 }],
    ['fan-out: the default rounds', { fanOut: true }, { maxItems: 1_000, maxRounds: 10 }],
    ['fan-out: at least one round', { fanOut: true, maxRounds: 0 }, { maxItems: 1_000, maxRounds: 1 }],
    ['a round size as given', { fanOut: true, maxItems: 16, maxRounds: 4 }, { maxItems: 16, maxRounds: 4 }],
  ])('%s', (_, options, expected) => {
    // Act
    const limits = passLimits(options);

    // Assess
    expect(limits).toEqual(expected);
  });
});

describe('splitQuota and pollReserve: shares of a round', () => {
  it.each<[readonly number[], number, ShardRead[]]>([
    [
      [0, 1, 2, 3],
      10,
      [
        { shard: 0, limit: 3 },
        { shard: 1, limit: 3 },
        { shard: 2, limit: 2 },
        { shard: 3, limit: 2 },
      ],
    ],
    [
      [4, 7],
      3,
      [
        { shard: 4, limit: 2 },
        { shard: 7, limit: 1 },
      ],
    ],
    [
      [0, 1, 2, 3],
      2,
      [
        { shard: 0, limit: 1 },
        { shard: 1, limit: 1 },
      ],
    ],
    [[0, 1], 0, []],
    [[0, 1], -3, []],
    [[], 5, []],
  ])('splits %j by %i', (shards, quota, expected) => {
    // Act
    const reads = splitQuota(shards, quota);

    // Assess
    expect(reads).toEqual(expected);
  });

  it('shares add up to the quota and differ by at most one', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(15), { minLength: 1 }), fc.nat(5_000), (shards, quota) => {
        // Act
        const limits = splitQuota(shards, quota).map((r) => r.limit);

        // Assess
        expect(limits.reduce((a, b) => a + b, 0)).toBe(quota);
        if (limits.length === shards.length)
          expect(Math.max(...limits) - Math.min(...limits)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it.each([
    [1_000, 250],
    [16, 4],
    [3, 1],
    [1, 1],
  ])('a round of %i keeps %i for status polls', (maxItems, reserve) => {
    // Act
    const kept = pollReserve(maxItems);

    // Assess
    expect(kept).toBe(reserve);
  });
});

describe('nextReads / afterReads: the reads of one round', () => {
  it.each([
    {
      name: 'the urgent lane first, leaving the polls their reserve; what is left unused goes to shards with more',
      depths: [10, 1, 0, 0],
      maxItems: 8,
      steps: [
        {
          phase: 'urgent',
          spill: false,
          reads: [
            { shard: 0, limit: 3 },
            { shard: 1, limit: 3 },
          ],
        },
        { phase: 'urgent', spill: true, reads: [{ shard: 0, limit: 2 }] },
        {
          phase: 'poll',
          spill: false,
          reads: [
            { shard: 2, limit: 1 },
            { shard: 3, limit: 1 },
          ],
        },
        { phase: 'spare', spill: false, reads: [{ shard: 0, limit: 2 }] },
      ],
      read: { urgent: 6, poll: 0, spare: 2 },
    },
    {
      name: 'the polls get what the urgent lane left',
      depths: [1, 0, 10, 10],
      maxItems: 8,
      steps: [
        {
          phase: 'urgent',
          spill: false,
          reads: [
            { shard: 0, limit: 3 },
            { shard: 1, limit: 3 },
          ],
        },
        {
          phase: 'poll',
          spill: false,
          reads: [
            { shard: 2, limit: 4 },
            { shard: 3, limit: 3 },
          ],
        },
      ],
      read: { urgent: 1, poll: 7, spare: 0 },
    },
    {
      name: 'a deep poll lane keeps its reserve under a flood of urgent entries',
      depths: [100, 100, 100, 100],
      maxItems: 8,
      steps: [
        {
          phase: 'urgent',
          spill: false,
          reads: [
            { shard: 0, limit: 3 },
            { shard: 1, limit: 3 },
          ],
        },
        {
          phase: 'poll',
          spill: false,
          reads: [
            { shard: 2, limit: 1 },
            { shard: 3, limit: 1 },
          ],
        },
      ],
      read: { urgent: 6, poll: 2, spare: 0 },
    },
    {
      name: 'nothing due: one read of every shard',
      depths: [0, 0, 0, 0],
      maxItems: 8,
      steps: [
        {
          phase: 'urgent',
          spill: false,
          reads: [
            { shard: 0, limit: 3 },
            { shard: 1, limit: 3 },
          ],
        },
        {
          phase: 'poll',
          spill: false,
          reads: [
            { shard: 2, limit: 4 },
            { shard: 3, limit: 4 },
          ],
        },
      ],
      read: { urgent: 0, poll: 0, spare: 0 },
    },
  ])('$name', ({ depths, maxItems, steps, read }) => {
    // Prepare
    const index = anIndex(depths);
    const pass = startPass({
      now: NOW,
      maxItems,
      lanes: LANES,
      sweeps: depths.map(() => ({ startedAt: NOW })),
    });

    // Act
    const result = runRound(index, pass, startRound(pass, 1) as RoundState);

    // Assess
    expect(result.steps).toEqual(steps);
    expect(result.round.read).toEqual(read);
  });

  it('without poll shards to read, the urgent lane may use the whole round', () => {
    // Prepare
    const index = anIndex([100, 100, 0, 0]);
    const pass = startPass({
      now: NOW,
      maxItems: 8,
      lanes: LANES,
      sweeps: [0, 1, 2, 3].map(() => ({ startedAt: NOW })),
    });
    const laterRound: RoundState = {
      ...(startRound(pass, 1) as RoundState),
      targets: { urgent: [0, 1], poll: [] },
    };

    // Act
    const result = runRound(index, pass, laterRound);

    // Assess
    expect(result.round.read.urgent).toBe(8);
  });

  it('counts entries and wrapped shards, and moves each sweep after what it read', () => {
    // Prepare
    const index = anIndex([5, 1, 0, 0]);
    const pass = startPass({
      now: NOW,
      maxItems: 8,
      lanes: LANES,
      sweeps: [0, 1, 2, 3].map(() => ({ startedAt: NOW })),
    });

    // Act
    const result = runRound(index, pass, startRound(pass, 1) as RoundState);

    // Assess: shard 0 read 3 then 2 (wrapped once), shard 1 once, polls once each.
    expect(result.pass.shardEntries).toEqual([5, 1, 0, 0]);
    expect(result.pass.wrapped).toBe(4);
    expect(result.pass.sweeps.map((s) => s.position)).toEqual(['5', '1', undefined, undefined]);
    expect(result.pass.more).toEqual({ urgent: [], poll: [] });
  });
});

describe('startRound: later rounds read only where more is left', () => {
  it('reads every shard first, then only the shards with more, then stops', () => {
    // Prepare
    const index = anIndex([30, 2, 0, 9]);

    // Act
    const { rounds } = runPass(index, { maxItems: 8, maxRounds: 10 });

    // Assess: 41 entries, 8 a round while rounds come back full.
    expect(rounds.map((r) => r.entries.length)).toEqual([8, 8, 8, 8, 8, 1]);
    expect(rounds.flatMap((r) => r.handedOut)).toHaveLength(41);
  });

  it('stops at once when nothing is left after the first round', () => {
    // Prepare
    const pass = startPass({ now: NOW, maxItems: 8, lanes: LANES, sweeps: [] });

    // Act
    const round = startRound(pass, 2);

    // Assess
    expect(round).toBeUndefined();
  });
});

describe('handOut: each key once, urgent first, shards interleaved', () => {
  it('orders the urgent lane before the polls, round-robin over shards, oldest first', () => {
    // Prepare
    const pass = startPass({ now: NOW, maxItems: 8, lanes: LANES, sweeps: [] });
    const read = [anEntry(2, 0), anEntry(0, 0), anEntry(0, 1), anEntry(1, 0), anEntry(3, 0), anEntry(2, 1)];

    // Act
    const out = handOut(pass, read);

    // Assess
    expect(out.entries.map((e) => e.idempotencyKey)).toEqual([
      'k-0-0',
      'k-1-0',
      'k-0-1',
      'k-2-0',
      'k-3-0',
      'k-2-1',
    ]);
  });

  it('drops a key read twice, and a key handed out by an earlier round', () => {
    // Prepare
    const first = handOut(startPass({ now: NOW, maxItems: 8, lanes: LANES, sweeps: [] }), [anEntry(0, 0)]);

    // Act
    const second = handOut(first.pass, [anEntry(0, 0), anEntry(0, 1), anEntry(0, 1)]);

    // Assess
    expect(second.entries.map((e) => e.idempotencyKey)).toEqual(['k-0-1']);
    expect([...second.pass.handedOut]).toEqual(['k-0-0', 'k-0-1']);
  });

  it('keeps every shard in order and the urgent lane first, for any reads', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ shard: fc.nat(3), n: fc.nat(20) })), (reads) => {
        // Prepare
        const entries = reads.map(({ shard, n }) => anEntry(shard, n));
        const pass = startPass({ now: NOW, maxItems: 8, lanes: LANES, sweeps: [] });

        // Act
        const out = handOut(pass, entries);

        // Assess
        const keys = out.entries.map((e) => e.idempotencyKey);
        expect(new Set(keys).size).toBe(new Set(entries.map((e) => e.idempotencyKey)).size);
        const firstPoll = out.entries.findIndex((e) => LANES.poll.includes(e.shard));
        if (firstPoll >= 0)
          expect(out.entries.slice(firstPoll).every((e) => LANES.poll.includes(e.shard))).toBe(true);
        for (const shard of [0, 1, 2, 3]) {
          const firstSeen = [
            ...new Set(entries.filter((e) => e.shard === shard).map((e) => e.idempotencyKey)),
          ];
          expect(out.entries.filter((e) => e.shard === shard).map((e) => e.idempotencyKey)).toEqual(
            firstSeen,
          );
        }
      }),
    );
  });
});

describe('refuse: a refused enqueue sends its shard back to the oldest entry', () => {
  it('marks the shard for a restart and reads it no more this pass', () => {
    // Prepare
    const pass: PassState = {
      ...startPass({ now: NOW, maxItems: 8, lanes: LANES, sweeps: [] }),
      more: { urgent: [0, 1], poll: [3] },
    };

    // Act
    const refused = refuse(pass, [1, 3, 1]);

    // Assess
    expect([...refused.restart]).toEqual([1, 3]);
    expect(refused.more).toEqual({ urgent: [0], poll: [] });
    expect(startRound(refuse(refused, [0]), 2)).toBeUndefined();
  });
});

describe('observeLags: the liveness figures', () => {
  it.each<
    [
      string,
      (DueEntry | undefined)[],
      { oldestUnknownAgeMs: number; oldestDueLagMs: number; oldestPollLagMs: number },
    ]
  >([
    ['nothing seen', [undefined], { oldestUnknownAgeMs: 0, oldestDueLagMs: 0, oldestPollLagMs: 0 }],
    [
      'an urgent entry',
      [anEntry(1, 0, { dueAt: NOW - 70 })],
      { oldestUnknownAgeMs: 0, oldestDueLagMs: 70, oldestPollLagMs: 0 },
    ],
    [
      'a poll entry',
      [anEntry(3, 0, { dueAt: NOW - 40 })],
      { oldestUnknownAgeMs: 0, oldestDueLagMs: 0, oldestPollLagMs: 40 },
    ],
    [
      'an unknown',
      [anEntry(0, 0, { dueAt: NOW - 5, state: NotificationState.dispatchUnknown, unknownSince: NOW - 900 })],
      { oldestUnknownAgeMs: 900, oldestDueLagMs: 5, oldestPollLagMs: 0 },
    ],
    [
      'the oldest of several',
      [
        anEntry(0, 0, { dueAt: NOW - 5 }),
        anEntry(1, 0, { dueAt: NOW - 50 }),
        anEntry(0, 1, { dueAt: NOW - 20 }),
      ],
      { oldestUnknownAgeMs: 0, oldestDueLagMs: 50, oldestPollLagMs: 0 },
    ],
  ])('%s', (_, entries, expected) => {
    // Act
    const lags = observeLags(
      { oldestUnknownAgeMs: 0, oldestDueLagMs: 0, oldestPollLagMs: 0 },
      entries,
      NOW,
      LANES,
    );

    // Assess
    expect(lags).toEqual(expected);
  });
});

describe('the planner over any due index (fast-check)', () => {
  const depths = fc.array(fc.nat(60), { minLength: 4, maxLength: 4 });
  const maxItems = fc.integer({ min: 4, max: 40 });

  it('never reads more than a round, and leaves the polls their reserve while they have shards to read', () => {
    fc.assert(
      fc.property(depths, maxItems, fc.boolean(), fc.integer({ min: 1, max: 5 }), (d, max, full, rounds) => {
        // Act
        const { rounds: done } = runPass(anIndex(d, full), { maxItems: max, maxRounds: rounds });

        // Assess
        done.forEach((round, i) => {
          expect(round.entries.length).toBeLessThanOrEqual(max);
          expect(round.read.urgent + round.read.poll + round.read.spare).toBe(round.entries.length);
          if (i === 0) expect(round.read.urgent).toBeLessThanOrEqual(max - pollReserve(max));
        });
      }),
    );
  });

  it('reads each shard in order from where its sweep stands, never an entry twice in a pass', () => {
    fc.assert(
      fc.property(
        depths,
        maxItems,
        fc.boolean(),
        fc.array(fc.nat(60), { minLength: 4, maxLength: 4 }),
        (d, max, full, at) => {
          // Prepare: each sweep stands somewhere in its shard.
          const sweeps = at.map((p, shard) => ({
            startedAt: NOW,
            position: String(Math.min(p, d[shard] ?? 0)),
          }));

          // Act
          const { rounds } = runPass(anIndex(d, full), { maxItems: max, maxRounds: 10, sweeps });

          // Assess
          const read = rounds.flatMap((r) => r.entries);
          expect(new Set(read.map((e) => e.idempotencyKey)).size).toBe(read.length);
          d.forEach((_, shard) => {
            const offsets = read.filter((e) => e.shard === shard).map((e) => e.dueAt - (NOW - 1_000));
            const from = Number(sweeps[shard]?.position);
            expect(offsets).toEqual(offsets.map((_, i) => from + i));
          });
        },
      ),
    );
  });

  it('hands out every due entry once over successive passes, each pass making progress', () => {
    fc.assert(
      fc.property(depths, maxItems, fc.boolean(), fc.integer({ min: 1, max: 3 }), (d, max, full, rounds) => {
        // Prepare
        const index = anIndex(d, full);
        const total = d.reduce((a, b) => a + b, 0);
        let sweeps: readonly ShardSweep[] = d.map(() => ({ startedAt: NOW }));
        const handedOut: string[] = [];

        // Act: passes carry their sweeps (no resweep) until every shard is read to its end.
        for (let passes = 0; handedOut.length < total; passes++) {
          expect(passes).toBeLessThan(total);
          const before = handedOut.length;
          const result = runPass(index, { maxItems: max, maxRounds: rounds, sweeps });
          handedOut.push(...result.rounds.flatMap((r) => r.handedOut.map((e) => e.idempotencyKey)));
          sweeps = result.pass.sweeps;
          expect(handedOut.length).toBeGreaterThan(before);
        }

        // Assess
        expect(new Set(handedOut).size).toBe(total);
      }),
    );
  });
});
