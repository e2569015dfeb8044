/**
 * Small statistics and formatting helpers for the benchmarks. Medians and nearest-rank
 * percentiles only: the machine is shared and noisy, so means would mostly measure the neighbours.
 */

/** Nearest-rank percentile of `values` (0 < p <= 100); NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** The median (average of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Latency summary in milliseconds. */
export interface LatencySummary {
  readonly n: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly min: number;
  readonly max: number;
}

/** Summarises a list of latencies (ms). */
export function summarize(samples: readonly number[]): LatencySummary {
  return {
    n: samples.length,
    p50: round(median(samples)),
    p90: round(percentile(samples, 90)),
    p99: round(percentile(samples, 99)),
    min: round(Math.min(...samples)),
    max: round(Math.max(...samples)),
  };
}

/** Rounds to `digits` decimals (default 2), keeping JSON and tables readable. */
export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** `a / b`, rounded; NaN when b is 0. */
export function ratio(a: number, b: number): number {
  return b === 0 ? Number.NaN : round(a / b, 3);
}

/** Milliseconds since an arbitrary origin, with sub-millisecond resolution. */
export function nowMs(): number {
  return performance.now();
}

/** Times one async call; returns its result and the elapsed milliseconds. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = nowMs();
  const value = await work();
  return { value, ms: nowMs() - start };
}

/** Runs `work(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function runPool(
  count: number,
  concurrency: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const index = next++;
      await work(index);
    }
  });
  await Promise.all(workers);
}

/** Rotates a list by `by` places: round-robin interleaving without a fixed first variant. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** A plain text table with right-aligned numeric columns. */
export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.every((r) => /^[-+~<>=]?[\d.,]+\s*\S*$/.test(r[i] ?? '')));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The same table as GitHub-flavoured Markdown (for docs/performance.md). */
export function renderMarkdownTable(
  headers: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${headers.map(esc).join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

/** `12.3` style number for tables; `-` for NaN/undefined. */
export function fmt(value: number | undefined, digits = 2): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return round(value, digits).toFixed(digits);
}
