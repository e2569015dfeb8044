import { CodedError } from '../domain/errors.js';

/** Where a command writes text: `process.stdout`, `process.stderr`, or a collecting stream in tests. */
export interface TextOut {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
}

/** Collects everything written to it (tests, and commands that post-process output). */
export class BufferOut implements TextOut {
  readonly isTTY = false;
  private readonly chunks: string[] = [];
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  /** Everything written so far. */
  text(): string {
    return this.chunks.join('');
  }
}

/** Writes one JSON document, pretty-printed, followed by a newline. */
export function writeJson(out: TextOut, value: unknown): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Left-aligned columns with two spaces between them; the last column is not padded. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `1h 02m`, `3m 05s`, `4.2s`: a compact duration for humans. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(abs < 10_000 ? 3 : 1)}s`;
  const totalSeconds = Math.floor(abs / 1000);
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  if (h > 0) return `${sign}${h}h ${String(m).padStart(2, '0')}m`;
  return `${sign}${m}m ${String(s).padStart(2, '0')}s`;
}

/** A mistake in how a command was called: reported without a stack trace, exit code 2. */
export class UsageError extends CodedError {
  readonly code = 'usage';
  override readonly name = 'UsageError';
}

/** `9s`, `1m 05s`, `2h 03m`: an age in whole seconds. */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  return formatDuration(s * 1000);
}
