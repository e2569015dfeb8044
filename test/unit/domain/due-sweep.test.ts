import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  advanceSweep,
  cursorPositions,
  FORCED_RESWEEP_FACTOR,
  formatSweep,
  type LaneBacklogs,
  parseSweep,
  previousSweeps,
  resweepDue,
  type ShardSweep,
  startSweeps,
} from '../../../shared/domain/due-sweep.js';

const NOW = 1_000_000;
const RESWEEP = 10_000;
const NO_BACKLOG: LaneBacklogs = { urgent: undefined, poll: undefined };

/** Sweep rules for shards 0-3 urgent, 4-7 polls, rounds of 100. */
function rules(backlogs: LaneBacklogs = NO_BACKLOG) {
  return { now: NOW, resweepMs: RESWEEP, maxItems: 100, pollShards: [4, 5, 6, 7], backlogs };
}

describe('parseSweep / formatSweep: the cursor item, one value per shard', () => {
  it.each<[string, string | undefined, ShardSweep | undefined]>([
    ['no value: never swept', undefined, undefined],
    ['start time and position', '{"t":5,"p":"abc"}', { startedAt: 5, position: 'abc' }],
    ['start time only: at the oldest entry', '{"t":5}', { startedAt: 5 }],
    ['a bare position of an earlier release: an old sweep', 'abc', { startedAt: 0 }],
    ['JSON without a start time: an old sweep', '{"p":"abc"}', { startedAt: 0 }],
    ['a position that is not a string is dropped', '{"t":5,"p":7}', { startedAt: 5 }],
  ])('%s', (_, value, expected) => {
    // Act
    const sweep = parseSweep(value);

    // Assess
    expect(sweep).toEqual(expected);
  });

  it('reads back every sweep it writes', () => {
    fc.assert(
      fc.property(fc.nat(), fc.option(fc.string(), { nil: undefined }), (startedAt, position) => {
        // Prepare
        const sweep: ShardSweep = position === undefined ? { startedAt } : { startedAt, position };

        // Act
        const read = parseSweep(formatSweep(sweep));

        // Assess
        expect(read).toEqual(sweep);
      }),
    );
  });

  it('writes a sweep that never started as one started long ago (t: 0)', () => {
    // Act
    const value = formatSweep({ startedAt: Number.NEGATIVE_INFINITY });

    // Assess
    expect(value).toBe('{"t":0}');
  });

  it('gives every shard its previous sweep, undefined where none was stored', () => {
    // Act
    const sweeps = previousSweeps({ 1: '{"t":5,"p":"x"}' }, 3);

    // Assess
    expect(sweeps).toEqual([undefined, { startedAt: 5, position: 'x' }, undefined]);
  });
});

describe('resweepDue: a queue backlog is read only when a fresh sweep may start', () => {
  it.each<[string, (ShardSweep | undefined)[], boolean]>([
    ['a shard never swept', [undefined, { startedAt: NOW }], true],
    ['a sweep as old as the resweep time', [{ startedAt: NOW - RESWEEP }, { startedAt: NOW }], true],
    ['every sweep younger', [{ startedAt: NOW - RESWEEP + 1 }, { startedAt: NOW }], false],
  ])('%s: %s', (_, previous, expected) => {
    // Act
    const due = resweepDue(previous, [0, 1], NOW, RESWEEP);

    // Assess
    expect(due).toBe(expected);
  });

  it('looks only at the shards of the lane asked about', () => {
    // Prepare: shard 2 is due, but it is not in the lane.
    const previous = [{ startedAt: NOW }, { startedAt: NOW }, undefined];

    // Act
    const due = resweepDue(previous, [0, 1], NOW, RESWEEP);

    // Assess
    expect(due).toBe(false);
  });
});

describe('startSweeps: where each shard starts this pass', () => {
  const age = (ms: number): ShardSweep => ({ startedAt: NOW - ms, position: 'p' });

  it.each<[string, ShardSweep | undefined, LaneBacklogs, ShardSweep, number]>([
    ['never swept: at the oldest, not counted as a resweep', undefined, NO_BACKLOG, { startedAt: NOW }, 0],
    ['a young sweep goes on', age(RESWEEP - 1), NO_BACKLOG, age(RESWEEP - 1), 0],
    ['an old sweep starts again', age(RESWEEP), NO_BACKLOG, { startedAt: NOW }, 1],
    [
      'a backlog of a round or less does not hold it',
      age(RESWEEP),
      { urgent: 100, poll: 0 },
      { startedAt: NOW },
      1,
    ],
    ['a backlog over a round holds it', age(RESWEEP), { urgent: 101, poll: 0 }, age(RESWEEP), 0],
    [
      'until the forced resweep time',
      age(RESWEEP * FORCED_RESWEEP_FACTOR),
      { urgent: 101, poll: 0 },
      { startedAt: NOW },
      1,
    ],
    [
      'the poll lane backlog does not hold the urgent lane',
      age(RESWEEP),
      { urgent: 0, poll: 500 },
      { startedAt: NOW },
      1,
    ],
  ])('%s', (_, previous, backlogs, expected, resweeps) => {
    // Act
    const start = startSweeps([previous], rules(backlogs));

    // Assess
    expect(start.sweeps[0]).toEqual(expected);
    expect(start.resweeps).toBe(resweeps);
  });

  it("holds a poll shard on its own lane's backlog", () => {
    // Prepare: shard 4 is a poll shard.
    const previous = [age(RESWEEP), age(RESWEEP), age(RESWEEP), age(RESWEEP), age(RESWEEP)];

    // Act
    const start = startSweeps(previous, rules({ urgent: 0, poll: 500 }));

    // Assess
    expect(start.sweeps.map((s) => s.startedAt === NOW)).toEqual([true, true, true, true, false]);
    expect(start.resweeps).toBe(4);
  });

  it('never starts a sweep in the future nor moves a position it keeps', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.option(fc.record({ startedAt: fc.integer({ min: 0, max: NOW }), position: fc.string() })),
          {
            maxLength: 8,
          },
        ),
        fc.option(fc.nat(), { nil: undefined }),
        fc.option(fc.nat(), { nil: undefined }),
        (stored, urgent, poll) => {
          // Prepare
          const previous = stored.map((s) => s ?? undefined);

          // Act
          const start = startSweeps(previous, rules({ urgent, poll }));

          // Assess
          expect(start.sweeps).toHaveLength(previous.length);
          // A kept sweep is the stored one itself (it may have started at NOW too: fast-check found
          // seed 615227182); any other starts now, at the oldest entry.
          const restarted = start.sweeps.map((sweep, shard) => sweep !== previous[shard]);
          start.sweeps.forEach((sweep, shard) => {
            if (!restarted[shard]) return;
            expect(sweep.startedAt).toBe(NOW);
            expect(sweep.position).toBeUndefined();
          });
          expect(start.resweeps).toBe(
            restarted.filter((again, shard) => again && previous[shard] !== undefined).length,
          );
        },
      ),
    );
  });
});

describe('advanceSweep: a shard goes on after what it read', () => {
  it.each<[string, ShardSweep, { cursor?: string; resumeAfter?: string }, ShardSweep]>([
    [
      'a full page: after its cursor',
      { startedAt: 1 },
      { cursor: 'c', resumeAfter: 'c' },
      { startedAt: 1, position: 'c' },
    ],
    [
      'the end of the shard: after its last entry',
      { startedAt: 1, position: 'a' },
      { resumeAfter: 'b' },
      { startedAt: 1, position: 'b' },
    ],
    ['nothing read: stays', { startedAt: 1, position: 'a' }, {}, { startedAt: 1, position: 'a' }],
    ['nothing read at the oldest: stays at the oldest', { startedAt: 1 }, {}, { startedAt: 1 }],
  ])('%s', (_, sweep, page, expected) => {
    // Act
    const next = advanceSweep(sweep, page);

    // Assess
    expect(next).toEqual(expected);
  });
});

describe('cursorPositions: what the pass writes back', () => {
  it('writes every shard, and a refused shard as started long ago at its oldest entry', () => {
    // Prepare
    const sweeps: ShardSweep[] = [
      { startedAt: 7, position: 'a' },
      { startedAt: 7, position: 'b' },
      { startedAt: 7 },
    ];

    // Act
    const positions = cursorPositions(sweeps, new Set([1]));

    // Assess
    expect(positions).toEqual({ 0: '{"t":7,"p":"a"}', 1: '{"t":0}', 2: '{"t":7}' });
  });
});
