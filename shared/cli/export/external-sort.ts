import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';

/**
 * Sorts a stream that may not fit in memory: items are buffered up to `chunkSize`, each full
 * buffer is sorted and spilled to a temporary JSON Lines file, and the files are k-way merged
 * with a binary heap. Memory is bounded by `chunkSize` items plus one item per spilled chunk.
 * When everything fits in one chunk nothing touches the disk.
 */
export class ExternalSorter<T> {
  private buffer: T[] = [];
  private readonly chunks: string[] = [];
  private dir: string | undefined;
  private total = 0;

  constructor(
    private readonly compare: (a: T, b: T) => number,
    private readonly options: { readonly chunkSize: number; readonly tmpRoot?: string },
  ) {
    if (!Number.isInteger(options.chunkSize) || options.chunkSize < 1)
      throw new Error('chunkSize must be >= 1');
  }

  /** How many items were added. */
  get count(): number {
    return this.total;
  }

  /** How many sorted runs went to disk so far. */
  get spilledChunks(): number {
    return this.chunks.length;
  }

  /** Adds one item; spills a sorted chunk when the buffer is full. */
  async add(item: T): Promise<void> {
    this.buffer.push(item);
    this.total++;
    if (this.buffer.length >= this.options.chunkSize) await this.spill();
  }

  /** Yields every item in order, then removes the temporary files. */
  async *sorted(): AsyncGenerator<T> {
    try {
      if (this.chunks.length === 0) {
        this.buffer.sort(this.compare);
        yield* this.buffer;
        return;
      }
      if (this.buffer.length > 0) await this.spill();
      yield* this.merge();
    } finally {
      await this.dispose();
    }
  }

  /** Removes the temporary files (also called by {@link sorted} when it ends or is abandoned). */
  async dispose(): Promise<void> {
    this.buffer = [];
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  private async spill(): Promise<void> {
    this.buffer.sort(this.compare);
    this.dir ??= await mkdtemp(join(this.options.tmpRoot ?? tmpdir(), 'reset-notifier-export-'));
    const file = join(this.dir, `chunk-${this.chunks.length}.jsonl`);
    const stream = createWriteStream(file);
    for (const item of this.buffer) {
      if (!stream.write(`${JSON.stringify(item)}\n`)) await once(stream, 'drain');
    }
    stream.end();
    await finished(stream);
    this.chunks.push(file);
    this.buffer = [];
  }

  private async *merge(): AsyncGenerator<T> {
    const readers = this.chunks.map((file) =>
      createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })[
        Symbol.asyncIterator
      ](),
    );
    try {
      const heap = new MinHeap<{ item: T; source: number }>((a, b) => this.compare(a.item, b.item));
      const pull = async (source: number) => {
        const next = await readers[source]?.next();
        if (next && !next.done) heap.push({ item: JSON.parse(next.value) as T, source });
      };
      for (let i = 0; i < readers.length; i++) await pull(i);
      for (let top = heap.pop(); top; top = heap.pop()) {
        yield top.item;
        await pull(top.source);
      }
    } finally {
      for (const reader of readers) await reader.return?.();
    }
  }
}

/** A binary min-heap. */
export class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly compare: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(items[i] as T, items[parent] as T) >= 0) break;
      [items[i], items[parent]] = [items[parent] as T, items[i] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < items.length && this.compare(items[left] as T, items[smallest] as T) < 0) smallest = left;
        if (right < items.length && this.compare(items[right] as T, items[smallest] as T) < 0)
          smallest = right;
        if (smallest === i) break;
        [items[i], items[smallest]] = [items[smallest] as T, items[i] as T];
        i = smallest;
      }
    }
    return top;
  }
}
