import { describe, expect, it } from 'vitest';
import {
  compareRows,
  csvField,
  csvHeader,
  csvLine,
  EXPORT_COLUMNS,
  type ExportRow,
  jsonlLine,
  parseCsvLine,
  toExportRow,
} from '../../../shared/cli/export/schema.js';

const row = (overrides: Partial<Record<keyof ExportRow, string | number | null>> = {}): ExportRow => ({
  idempotency_key: 'k-1',
  event_id: 'evt-1',
  seq: 1,
  at: '2026-01-01T00:00:00.000Z',
  from_state: null,
  to_state: 'accepted',
  attempt: 0,
  reason: 'admitted',
  reason_detail: null,
  actor: 'api',
  provider: 'simulator',
  provider_message_id: null,
  destination_fingerprint: 'fp1:abc',
  ...overrides,
});

describe('export schema', () => {
  it('builds rows from the public evidence view by whitelist, every column present', () => {
    // Prepare
    const view = {
      idempotency_key: 'k',
      event_id: 'e',
      seq: 2,
      at: '2026-01-01T00:00:01.000Z',
      from_state: 'accepted',
      to_state: 'dispatching',
      attempt: 1,
      reason: 'claimed',
      actor: 'sender',
      destination_fingerprint: 'fp1:x',
      phone: '+14155550123',
    };
    // Act
    const exported = toExportRow(view);
    // Assess
    expect(Object.keys(exported)).toEqual([...EXPORT_COLUMNS]);
    expect(exported.provider).toBeNull();
    expect(exported.provider_message_id).toBeNull();
    expect(exported.reason_detail).toBeNull();
    expect(JSON.stringify(exported)).not.toContain('+14155550123');
  });

  it('exports the evidence record’s reason_detail, after its reason', () => {
    // Prepare
    const view = {
      idempotency_key: 'k',
      event_id: 'e',
      seq: 3,
      at: '2026-01-01T00:00:02.000Z',
      from_state: 'dispatching',
      to_state: 'failed',
      attempt: 1,
      reason: 'provider_rejected_permanent',
      reason_detail: 'twilio:21211',
      actor: 'sender',
      destination_fingerprint: 'fp1:x',
    };

    // Act
    const exported = toExportRow(view);

    // Assess
    expect(exported.reason_detail).toBe('twilio:21211');
    expect(EXPORT_COLUMNS.indexOf('reason_detail')).toBe(EXPORT_COLUMNS.indexOf('reason') + 1);
  });

  it('writes JSON Lines with keys in column order', () => {
    const line = jsonlLine(row());
    expect(line.endsWith('\n')).toBe(true);
    expect(Object.keys(JSON.parse(line))).toEqual([...EXPORT_COLUMNS]);
  });

  it('quotes CSV fields per RFC 4180 and reads them back', () => {
    // Prepare
    const tricky = row({ idempotency_key: 'a,b', event_id: 'say "hi"', reason: 'x\ny' });
    // Act
    const line = csvLine(tricky);
    // Assess
    expect(line.endsWith('\r\n')).toBe(true);
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField(null)).toBe('');
    expect(parseCsvLine(csvLine(row({ event_id: 'say "hi", twice' })).trimEnd())[1]).toBe('say "hi", twice');
    expect(parseCsvLine(csvHeader().trimEnd())).toEqual([...EXPORT_COLUMNS]);
  });

  it('orders by time, then key, then seq', () => {
    // Prepare
    const rows = [
      row({ at: '2026-01-01T00:00:02.000Z', idempotency_key: 'a', seq: 1 }),
      row({ at: '2026-01-01T00:00:01.000Z', idempotency_key: 'b', seq: 2 }),
      row({ at: '2026-01-01T00:00:01.000Z', idempotency_key: 'a', seq: 3 }),
      row({ at: '2026-01-01T00:00:01.000Z', idempotency_key: 'a', seq: 2 }),
    ];
    // Act
    const sorted = [...rows].sort(compareRows);
    // Assess
    expect(sorted.map((r) => `${String(r.at).slice(17, 19)}:${r.idempotency_key}:${r.seq}`)).toEqual([
      '01:a:2',
      '01:a:3',
      '01:b:2',
      '02:a:1',
    ]);
  });
});
