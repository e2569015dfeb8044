import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExternalSorter, MinHeap } from '../../../shared/cli/export/external-sort.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'sort-test-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function sortAll(values: readonly number[], chunkSize: number) {
  const sorter = new ExternalSorter<{ v: number }>((a, b) => a.v - b.v, { chunkSize, tmpRoot: root });
  for (const v of values) await sorter.add({ v });
  const spilled = sorter.spilledChunks;
  const out: number[] = [];
  for await (const item of sorter.sorted()) out.push(item.v);
  return { out, spilled };
}

describe('ExternalSorter', () => {
  it('sorts across spilled runs exactly like an in-memory sort', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 300 }),
        fc.integer({ min: 1, max: 40 }),
        async (values, chunkSize) => {
          const { out } = await sortAll(values, chunkSize);
          expect(out).toEqual([...values].sort((a, b) => a - b));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('spills to disk when a chunk fills, and removes its temporary files afterwards', async () => {
    // Prepare
    const values = Array.from({ length: 1000 }, (_, i) => (i * 7919) % 1000);
    // Act
    const { out, spilled } = await sortAll(values, 64);
    // Assess
    expect(spilled).toBe(15);
    expect(out).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(await readdir(root)).toEqual([]);
  });

  it('keeps a small input in memory', async () => {
    const { out, spilled } = await sortAll([3, 1, 2], 10);
    expect(spilled).toBe(0);
    expect(out).toEqual([1, 2, 3]);
    expect(await readdir(root)).toEqual([]);
  });
});

describe('MinHeap', () => {
  it('pops in ascending order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), (values) => {
        const heap = new MinHeap<number>((a, b) => a - b);
        for (const v of values) heap.push(v);
        const out: number[] = [];
        for (let v = heap.pop(); v !== undefined; v = heap.pop()) out.push(v);
        expect(out).toEqual([...values].sort((a, b) => a - b));
      }),
    );
  });
});
