import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../local/resources.js';
import { DynamoNotificationStore } from '../../shared/adapters/dynamodb/store.js';
import { createLocalCipher, parseKey } from '../../shared/adapters/local-cipher.js';
import { manifestPathFor, runExport } from '../../shared/cli/export/export.js';
import { silentProgress, streamProgress } from '../../shared/cli/export/progress.js';
import { EXPORT_COLUMNS, EXPORT_SCHEMA, parseCsvLine } from '../../shared/cli/export/schema.js';
import { createDynamoEvidenceSource } from '../../shared/cli/export/source.js';
import { BufferOut } from '../../shared/cli/output.js';
import { runCli } from '../../shared/cli/program.js';
import { systemClock } from '../../shared/domain/clock.js';
import { createFingerprinter } from '../../shared/domain/fingerprint.js';
import { admit, applyTransition, type NotificationRecord } from '../../shared/domain/notification.js';
import { ALL_STATES } from '../../shared/domain/states.js';
import { sealPayload } from '../../shared/usecases/payload-seal.js';
import { TEST_CODE, TEST_PHONE, testKeys, uniqueName } from '../support/fixtures.js';

/** 250 notifications x 4 records (admitted, claimed, sent, delivered) = 1,000 evidence records. */
const NOTIFICATIONS = 250;
const RECORDS = NOTIFICATIONS * 4;
/** Admissions 1 s apart, transitions up to 4 s later: records of neighbouring keys interleave in time. */
const base = Date.now() - 2 * 86_400_000;
const from = new Date(base).toISOString();
const to = new Date(base + NOTIFICATIONS * 1000 + 60_000).toISOString();

const client = new DynamoDBClient({
  endpoint: inject('dynamodbEndpoint'),
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const tableName = uniqueName('export');
const store = new DynamoNotificationStore({ client, tableName, evidenceRetentionDays: 400 });
const sealed: string[] = [];
let dir: string;

async function seedOne(
  i: number,
  cipher: ReturnType<typeof createLocalCipher>,
  fp: ReturnType<typeof createFingerprinter>,
) {
  const key = `exp-${String(i).padStart(4, '0')}`;
  const at = base + i * 1000;
  const request = {
    idempotencyKey: key,
    eventId: `evt-${i % 50}`,
    channel: 'sms' as const,
    // Several commands per event: one per template (the store admits one per event and template).
    template: `password_reset_${Math.floor(i / 50)}`,
    locale: 'en',
    expiresAt: at + 3_600_000,
    sensitive: { phone: TEST_PHONE, params: { code: TEST_CODE } },
  };
  const { next, evidence } = admit({
    request,
    destinationFingerprint: fp.destination(TEST_PHONE),
    payloadFingerprint: fp.payload(request),
    providerName: 'simulator',
    now: at,
    safetyNetAt: at + 60_000,
  });
  const payload = await sealPayload(cipher, key, request.sensitive);
  sealed.push(payload);
  await store.admit(next, evidence, payload);
  let record: NotificationRecord = next;
  const steps = [
    {
      to: 'dispatching',
      reason: 'claimed',
      actor: 'sender',
      at: at + 1500,
      set: { attempts: 1, leaseUntil: at + 9000, leaseOwner: 'seed' },
    },
    {
      to: 'sent',
      reason: 'provider_accepted',
      actor: 'sender',
      at: at + 2500,
      set: { provider: { name: 'simulator', messageId: `SM${i}` }, sentAt: at + 2500 },
    },
    { to: 'delivered', reason: 'status_polled', actor: 'reconciler', at: at + 4000 },
  ] as const;
  for (const step of steps) {
    const result = await store.transition(applyTransition(record, step));
    if (result.kind !== 'written') throw new Error(`seed transition failed for ${key}`);
    record = result.record;
  }
}

beforeAll(async () => {
  await ensureTable(client, tableName);
  dir = await mkdtemp(join(tmpdir(), 'cli-export-'));
  const keys = testKeys();
  const cipher = createLocalCipher(parseKey(keys.dataKey));
  const fp = createFingerprinter(parseKey(keys.fingerprintKey));
  const indexes = Array.from({ length: NOTIFICATIONS }, (_, i) => i);
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let i = indexes.shift(); i !== undefined; i = indexes.shift()) await seedOne(i, cipher, fp);
    }),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await client.send(new DeleteTableCommand({ TableName: tableName }));
  client.destroy();
});

function deps(progress = silentProgress) {
  return {
    source: createDynamoEvidenceSource(client, tableName),
    clock: systemClock,
    progress,
    retentionDays: 400,
    tableName,
  };
}

function expectNoSensitiveData(text: string): void {
  expect(text).not.toContain(TEST_PHONE);
  expect(text).not.toContain(TEST_PHONE.slice(1));
  expect(text).not.toContain(TEST_CODE);
  expect(text).not.toContain('sealed_payload');
  expect(text).not.toContain('payload_fingerprint');
  for (const payload of sealed.slice(0, 20)) expect(text).not.toContain(payload.slice(0, 24));
}

function expectTimeOrder(rows: readonly { at: string; idempotency_key: string; seq: number }[]): void {
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1], rows[i]];
    if (!a || !b) throw new Error('missing row');
    const ordered =
      a.at < b.at ||
      (a.at === b.at &&
        (a.idempotency_key < b.idempotency_key ||
          (a.idempotency_key === b.idempotency_key && a.seq < b.seq)));
    expect(ordered, `row ${i} out of order`).toBe(true);
  }
}

describe('evidence export against DynamoDB Local', () => {
  let jsonlRows: Record<string, unknown>[] = [];

  it('exports 1,000 records as JSON Lines in time order with a verifiable manifest', async () => {
    // Prepare
    const out = join(dir, 'evidence.jsonl');
    const progressOut = new BufferOut();
    // Act: small pages and chunks, so the scan paginates and the sort merges many runs from disk.
    const manifest = await runExport(deps(streamProgress(progressOut, { intervalMs: 0 })), {
      from,
      to,
      format: 'jsonl',
      out,
      pageSize: 100,
      chunkSize: 128,
      tmpDir: dir,
    });
    // Assess
    const text = await readFile(out, 'utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(RECORDS + 1);
    const last = JSON.parse(lines.at(-1) ?? '') as { manifest: typeof manifest };
    expect(last.manifest).toEqual(manifest);
    expect(manifest).toMatchObject({
      schema: EXPORT_SCHEMA,
      format: 'jsonl',
      count: RECORDS,
      evidence_retention_days: 400,
      filters: { event_id: null, state: null },
      columns: [...EXPORT_COLUMNS],
      skipped_corrupt_items: 0,
    });
    const recordsPortion = text.slice(0, text.length - (lines.at(-1)?.length ?? 0) - 1);
    expect(createHash('sha256').update(recordsPortion).digest('hex')).toBe(manifest.sha256);

    jsonlRows = lines.slice(0, -1).map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const row of jsonlRows) {
      expect(Object.keys(row)).toEqual([...EXPORT_COLUMNS]);
      expect(row.seq).toEqual(expect.any(Number));
      expect(row.attempt).toEqual(expect.any(Number));
      expect(String(row.at)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(ALL_STATES).toContain(row.to_state);
      expect(String(row.destination_fingerprint)).toMatch(/^fp1:/);
    }
    expectTimeOrder(jsonlRows as never);
    expect(manifest.time_range.first_at).toBe(jsonlRows[0]?.at);
    expect(manifest.time_range.last_at).toBe(jsonlRows.at(-1)?.at);
    // Every notification's trail is complete and gap-free, admission (read off the command item) included.
    const perKey = new Map<string, number[]>();
    for (const row of jsonlRows)
      perKey.set(String(row.idempotency_key), [
        ...(perKey.get(String(row.idempotency_key)) ?? []),
        Number(row.seq),
      ]);
    expect(perKey.size).toBe(NOTIFICATIONS);
    for (const seqs of perKey.values()) expect(seqs).toEqual([1, 2, 3, 4]);
    expectNoSensitiveData(text);
    expect(progressOut.text()).toContain('reading:');
    expect(progressOut.text()).toContain(`exported ${RECORDS} records`);
    // Nothing left behind: no temporary runs, no partial file.
    expect((await readdir(dir)).sort()).toEqual(['evidence.jsonl']);
  });

  it('exports the same 1,000 records as CSV with a sidecar manifest', async () => {
    // Prepare
    const out = join(dir, 'evidence.csv');
    // Act
    const manifest = await runExport(deps(), { from, to, format: 'csv', out, pageSize: 100, chunkSize: 128 });
    // Assess
    const bytes = await readFile(out);
    const sidecar = JSON.parse(await readFile(manifestPathFor(out), 'utf8')) as { manifest: typeof manifest };
    expect(sidecar.manifest).toEqual(manifest);
    expect(manifest).toMatchObject({ format: 'csv', count: RECORDS, evidence_retention_days: 400 });
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(manifest.sha256);
    const lines = bytes.toString('utf8').split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(parseCsvLine(lines[0] ?? '')).toEqual([...EXPORT_COLUMNS]);
    const rows = lines.slice(1, -1).map(parseCsvLine);
    expect(rows).toHaveLength(RECORDS);
    // Same records, same order as the JSON Lines export; null is an empty field.
    expect(jsonlRows).toHaveLength(RECORDS);
    rows.forEach((fields, i) => {
      expect(fields).toEqual(
        EXPORT_COLUMNS.map((c) => (jsonlRows[i]?.[c] === null ? '' : String(jsonlRows[i]?.[c]))),
      );
    });
    expectNoSensitiveData(bytes.toString('utf8'));
  });

  it('filters by time range, state and event id', async () => {
    // Act
    const firstTen = await runExport(deps(), {
      from,
      to: new Date(base + 10_000).toISOString(),
      format: 'jsonl',
      out: join(dir, 'first.jsonl'),
    });
    const delivered = await runExport(deps(), {
      from,
      to,
      state: 'delivered',
      format: 'jsonl',
      out: join(dir, 'delivered.jsonl'),
    });
    const admitted = await runExport(deps(), {
      from,
      to,
      state: 'accepted',
      format: 'jsonl',
      out: join(dir, 'accepted.jsonl'),
    });
    const event = await runExport(deps(), {
      from,
      to,
      eventId: 'evt-7',
      format: 'csv',
      out: join(dir, 'event.csv'),
    });
    // Assess: keys 0..9 admitted in the first 10 s; records of key 9 after that are outside; admissions of keys 0..9, claims 0..8, sends 0..7, deliveries 0..5.
    expect(firstTen.count).toBe(10 + 9 + 8 + 6);
    expect(delivered.count).toBe(NOTIFICATIONS);
    expect(admitted.count).toBe(NOTIFICATIONS);
    expect(event.count).toBe((NOTIFICATIONS / 50) * 4);
    expect(event.filters).toEqual({ event_id: 'evt-7', state: null });
    const eventRows = (await readFile(join(dir, 'event.csv'), 'utf8'))
      .split('\r\n')
      .slice(1, -1)
      .map(parseCsvLine);
    expect(new Set(eventRows.map((r) => r[1]))).toEqual(new Set(['evt-7']));
  });

  it('runs through the CLI: flags, configured retention in the manifest, usage errors', async () => {
    // Prepare
    const out = join(dir, 'cli.jsonl');
    const stdout = new BufferOut();
    const stderr = new BufferOut();
    const io = {
      out: stdout,
      err: stderr,
      env: { DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'), EVIDENCE_RETENTION_DAYS: '30' },
      clock: systemClock,
    };
    // Act
    const code = await runCli(
      [
        'evidence',
        'export',
        '--table',
        tableName,
        '--from',
        from,
        '--to',
        to,
        '--format',
        'jsonl',
        '--out',
        out,
        '--page-size',
        '200',
      ],
      io,
    );
    const bad = await runCli(
      [
        'evidence',
        'export',
        '--table',
        tableName,
        '--from',
        to,
        '--to',
        from,
        '--format',
        'csv',
        '--out',
        out,
      ],
      {
        ...io,
        err: new BufferOut(),
      },
    );
    // Assess
    expect(code).toBe(0);
    const manifest = JSON.parse(stdout.text()) as {
      manifest: { count: number; evidence_retention_days: number; table: string };
    };
    expect(manifest.manifest).toMatchObject({
      count: RECORDS,
      evidence_retention_days: 30,
      table: tableName,
    });
    expect(stderr.text()).toContain(`exported ${RECORDS} records`);
    expect(bad).toBe(2);
  });
});
