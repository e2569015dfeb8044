import type { EvidenceView } from '../../usecases/view.js';

/** Version tag of the export format; bump it when a column is added, removed or changes meaning. */
export const EXPORT_SCHEMA = 'reset-notifier.evidence.v2';

/**
 * The exported columns, in order (docs/operations.md). docs/design.md#evidence and nothing else:
 * never a phone number, params, token, URL or credential.
 */
export const EXPORT_COLUMNS = [
  'idempotency_key',
  'event_id',
  'seq',
  'at',
  'from_state',
  'to_state',
  'attempt',
  'reason',
  'reason_detail',
  'actor',
  'provider',
  'provider_message_id',
  'destination_fingerprint',
] as const;

export type ExportColumn = (typeof EXPORT_COLUMNS)[number];

/** One exported record: every column present, `null` when a record has no value for it. */
export type ExportRow = { readonly [C in ExportColumn]: string | number | null };

/** Builds a row from the public evidence view, column by column (a whitelist, not a copy). */
export function toExportRow(view: EvidenceView): ExportRow {
  return {
    idempotency_key: view.idempotency_key,
    event_id: view.event_id,
    seq: view.seq,
    at: view.at,
    from_state: view.from_state,
    to_state: view.to_state,
    attempt: view.attempt,
    reason: view.reason,
    reason_detail: view.reason_detail ?? null,
    actor: view.actor,
    provider: view.provider ?? null,
    provider_message_id: view.provider_message_id ?? null,
    destination_fingerprint: view.destination_fingerprint,
  };
}

const byCodeUnits = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

/**
 * Export order: by time, then key, then seq, so equal timestamps sort the same way every run.
 * `at` is a fixed-width ISO-8601 UTC string, so comparing code units compares instants.
 */
export function compareRows(a: ExportRow, b: ExportRow): number {
  return (
    byCodeUnits(String(a.at), String(b.at)) ||
    byCodeUnits(String(a.idempotency_key), String(b.idempotency_key)) ||
    Number(a.seq) - Number(b.seq)
  );
}

/** One JSON Lines record, keys in column order. */
export function jsonlLine(row: ExportRow): string {
  const ordered: Record<string, string | number | null> = {};
  for (const column of EXPORT_COLUMNS) ordered[column] = row[column];
  return `${JSON.stringify(ordered)}\n`;
}

/** RFC 4180 quoting: a field with a comma, quote, CR or LF is quoted, quotes doubled. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The CSV header line (CRLF line ends, as RFC 4180 says). */
export function csvHeader(): string {
  return `${EXPORT_COLUMNS.join(',')}\r\n`;
}

/** One CSV record line. */
export function csvLine(row: ExportRow): string {
  return `${EXPORT_COLUMNS.map((column) => csvField(row[column])).join(',')}\r\n`;
}

/** Parses one CSV line written by {@link csvLine} (tests and verification; no multi-line fields). */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote === -1) throw new Error('unterminated quoted field');
        value += line.slice(i, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          i = quote + 2;
        } else {
          i = quote + 1;
          break;
        }
      }
      fields.push(value);
      i++; // the comma
    } else {
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? line.length : comma;
      fields.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return fields;
}
