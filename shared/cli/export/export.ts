import { createHash } from 'node:crypto';
import { type FileHandle, open, rename, rm, writeFile } from 'node:fs/promises';
import type { Clock } from '../../domain/clock.js';
import { ALL_STATES, type NotificationState } from '../../domain/states.js';
import { UsageError } from '../output.js';
import { ExternalSorter } from './external-sort.js';
import type { Progress } from './progress.js';
import {
  compareRows,
  csvHeader,
  csvLine,
  EXPORT_COLUMNS,
  EXPORT_SCHEMA,
  type ExportRow,
  jsonlLine,
} from './schema.js';
import type { EvidenceQuery, EvidenceSource } from './source.js';

/** What an export needs: where the evidence comes from, "now", and where progress goes. */
export interface ExportDeps {
  readonly source: EvidenceSource;
  readonly clock: Clock;
  readonly progress: Progress;
  /** Configured evidence retention (EVIDENCE_RETENTION_DAYS), recorded in the manifest. */
  readonly retentionDays: number;
  readonly tableName: string;
}

export type ExportFormat = 'jsonl' | 'csv';

/** The `evidence export` flags. */
export interface ExportOptions {
  /** ISO-8601 instant, inclusive. */
  readonly from: string;
  /** ISO-8601 instant, exclusive. */
  readonly to: string;
  readonly eventId?: string;
  readonly state?: string;
  readonly format: string;
  readonly out: string;
  /** Items per DynamoDB request. @default 500 */
  readonly pageSize?: number;
  /** Records held in memory before a sorted run is spilled to a temporary file. @default 50000 */
  readonly chunkSize?: number;
  /** Where the temporary sorted runs go. @default os.tmpdir() */
  readonly tmpDir?: string;
}

/** The trailing manifest (docs/operations.md). */
export interface ExportManifest {
  readonly schema: string;
  readonly format: ExportFormat;
  readonly columns: readonly string[];
  readonly count: number;
  readonly time_range: {
    readonly from: string;
    readonly to: string;
    readonly first_at: string | null;
    readonly last_at: string | null;
  };
  readonly filters: { readonly event_id: string | null; readonly state: string | null };
  readonly sha256: string;
  readonly sha256_scope: string;
  readonly evidence_retention_days: number;
  readonly table: string;
  readonly generated_at: string;
  readonly skipped_corrupt_items: number;
}

function parseInstant(flag: string, value: string): number {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) {
    throw new UsageError(`${flag} must be an ISO-8601 date or instant, got "${value}"`);
  }
  return ms;
}

function validate(options: ExportOptions): { query: Omit<EvidenceQuery, 'pageSize'>; format: ExportFormat } {
  const fromMs = parseInstant('--from', options.from);
  const toMs = parseInstant('--to', options.to);
  if (fromMs >= toMs) throw new UsageError('--from must be before --to');
  if (options.format !== 'jsonl' && options.format !== 'csv') {
    throw new UsageError(`--format must be jsonl or csv, got "${options.format}"`);
  }
  if (options.state !== undefined && !(ALL_STATES as readonly string[]).includes(options.state)) {
    throw new UsageError(`--state must be one of ${ALL_STATES.join(', ')}`);
  }
  return {
    format: options.format,
    query: {
      fromMs,
      toMs,
      ...(options.eventId === undefined ? {} : { eventId: options.eventId }),
      ...(options.state === undefined ? {} : { state: options.state as NotificationState }),
    },
  };
}

/** The sidecar manifest of a CSV export. */
export function manifestPathFor(out: string): string {
  return `${out}.manifest.json`;
}

/**
 * `reset-notifier evidence export`: streams evidence records, ordered by `at` (then key, seq),
 * into `out` with a trailing manifest. The table is read page by page and sorted with a bounded
 * external merge sort, so memory does not grow with the table. The file is written as
 * `<out>.partial` and renamed when complete, so a crashed export never looks finished.
 */
export async function runExport(deps: ExportDeps, options: ExportOptions): Promise<ExportManifest> {
  const { query, format } = validate(options);
  const sorter = new ExternalSorter<ExportRow>(compareRows, {
    chunkSize: options.chunkSize ?? 50_000,
    ...(options.tmpDir ? { tmpRoot: options.tmpDir } : {}),
  });
  const partial = `${options.out}.partial`;
  let file: BufferedFile | undefined;
  try {
    let itemsRead = 0;
    let corrupt = 0;
    for await (const page of deps.source.pages({ ...query, pageSize: options.pageSize ?? 500 })) {
      itemsRead += page.itemsRead;
      corrupt += page.corrupt;
      for (const row of page.rows) await sorter.add(row);
      deps.progress.update(
        `reading: ${itemsRead} items read, ${sorter.count} records match` +
          (sorter.spilledChunks ? `, ${sorter.spilledChunks} sorted runs on disk` : ''),
      );
    }
    const total = sorter.count;
    deps.progress.done(`read ${itemsRead} items: ${total} records match`);

    const hash = createHash('sha256');
    file = new BufferedFile(await open(partial, 'w', 0o600));
    const output = file;
    const write = async (text: string, hashed: boolean) => {
      if (hashed) hash.update(text, 'utf8');
      await output.write(text);
    };
    let written = 0;
    let firstAt: string | null = null;
    let lastAt: string | null = null;
    if (format === 'csv') await write(csvHeader(), true);
    for await (const row of sorter.sorted()) {
      await write(format === 'csv' ? csvLine(row) : jsonlLine(row), true);
      firstAt ??= String(row.at);
      lastAt = String(row.at);
      written++;
      deps.progress.update(
        `writing: ${written}/${total} (${Math.floor((written / Math.max(total, 1)) * 100)}%)`,
      );
    }
    const manifest: ExportManifest = {
      schema: EXPORT_SCHEMA,
      format,
      columns: [...EXPORT_COLUMNS],
      count: written,
      time_range: {
        from: new Date(query.fromMs).toISOString(),
        to: new Date(query.toMs).toISOString(),
        first_at: firstAt,
        last_at: lastAt,
      },
      filters: { event_id: query.eventId ?? null, state: query.state ?? null },
      sha256: hash.digest('hex'),
      sha256_scope:
        format === 'jsonl' ? 'every byte before the manifest line' : 'the whole CSV file, header included',
      evidence_retention_days: deps.retentionDays,
      table: deps.tableName,
      generated_at: new Date(deps.clock.now()).toISOString(),
      skipped_corrupt_items: corrupt,
    };
    if (format === 'jsonl') await write(`${JSON.stringify({ manifest })}\n`, false);
    await output.close();
    file = undefined;
    if (format === 'csv') {
      await writeFile(manifestPathFor(options.out), `${JSON.stringify({ manifest }, null, 2)}\n`, {
        mode: 0o600,
      });
    }
    await rename(partial, options.out);
    deps.progress.done(
      `exported ${written} records to ${options.out}` +
        (format === 'csv' ? ` (manifest ${manifestPathFor(options.out)})` : '') +
        `, sha256 ${manifest.sha256}` +
        (corrupt ? `; WARNING: ${corrupt} unreadable items skipped` : ''),
    );
    return manifest;
  } catch (error) {
    await file?.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw error;
  } finally {
    await sorter.dispose();
  }
}

/** Batches small writes into ~64 KiB file writes; every error surfaces as a rejected promise. */
class BufferedFile {
  private pending: string[] = [];
  private size = 0;
  constructor(private readonly handle: FileHandle) {}

  async write(text: string): Promise<void> {
    this.pending.push(text);
    this.size += text.length;
    if (this.size >= 64 * 1024) await this.flush();
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.handle.close();
    }
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = this.pending.join('');
    this.pending = [];
    this.size = 0;
    await this.handle.write(chunk, null, 'utf8');
  }
}
