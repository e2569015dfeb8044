/**
 * Section 4: does a reconciler pass cost the work to do, or the table? Two tables on one
 * DynamoDB Local: 1,000 and 100,000 idle items (final command items, no `due_at`, so not in the
 * sparse due index). Before each pass, 100 due items (`sent`, due now, sealed payload) are added;
 * one pass of the reconciler as production composes it (`composeReconciler`, inline: the pass
 * handles its keys itself, as the operator CLI's and the local stack's `reconcileNow`) then polls
 * them (a fake provider answers `delivered` at once). Passes alternate between the two tables; read
 * capacity comes from the store's `onCapacity` listener.
 */
import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  type ConsumedCapacity,
  DeleteTableCommand,
  type DynamoDBClient,
  GetItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { commandItem } from '../shared/adapters/dynamodb/item-mapping.js';
import { DynamoNotificationStore } from '../shared/adapters/dynamodb/store.js';
import { createLocalCipher, parseKey } from '../shared/adapters/local-cipher.js';
import { composeReconciler } from '../shared/composition/handlers.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import { decideDispatch, recordSendOutcome } from '../shared/domain/dispatch.js';
import { createFingerprinter, type Fingerprinter } from '../shared/domain/fingerprint.js';
import { deriveIdempotencyKey } from '../shared/domain/idempotency-key.js';
import { admit, applyTransition, type NotificationRecord } from '../shared/domain/notification.js';
import { DEFAULT_POLICY } from '../shared/domain/policy.js';
import type { Cipher } from '../shared/ports/cipher.js';
import type { SmsProvider } from '../shared/ports/sms-provider.js';
import type { NotificationStore } from '../shared/ports/store.js';
import { TWILIO_CAPABILITIES } from '../shared/providers/twilio/provider.js';
import { settingsEnv } from '../shared/settings.js';
import { sealPayload } from '../shared/usecases/payload-seal.js';
import type { ReconcileSummary } from '../shared/usecases/reconcile-due.js';
import { fmt, median, nowMs, ratio, rotate, runPool } from './stats.js';
import {
  BENCH_LOGGER,
  BENCH_PHONE,
  benchKeys,
  freshServiceTable,
  localDynamo,
  progress,
  type SectionResult,
} from './support.js';

/** Options of {@link runReconcilerScaling}. */
export interface ReconcilerScalingOptions {
  readonly endpoint: string;
  readonly quick: boolean;
}

const DUE_PER_PASS = 100;
const RATIO_TARGET = 1.1;
const policy = DEFAULT_POLICY;

/** A record as it is after admission, claim and provider acceptance (state `sent`). */
function sentRecord(fingerprinter: Fingerprinter, now: number): NotificationRecord {
  const eventId = `evt-${randomUUID()}`;
  const request = {
    idempotencyKey: deriveIdempotencyKey(eventId, 'sms', 'password_reset'),
    eventId,
    channel: 'sms' as const,
    template: 'password_reset',
    locale: 'en',
    expiresAt: now + 10 * 60_000,
    sensitive: { phone: BENCH_PHONE, params: { code: '483920' } },
  };
  const { next } = admit({
    request,
    destinationFingerprint: fingerprinter.destination(BENCH_PHONE),
    payloadFingerprint: fingerprinter.payload(request),
    providerName: 'simulator',
    now,
    safetyNetAt: now + policy.queueSafetyNetMs,
  });
  const decision = decideDispatch(next, now, policy, 'bench');
  if (decision.kind !== 'claim') throw new Error(`unexpected decision ${decision.kind}`);
  const claimed = applyTransition(next, decision.intent).next;
  const messageId = `SM${randomUUID().replace(/-/g, '')}`;
  return applyTransition(claimed, recordSendOutcome(claimed, { kind: 'accepted', messageId }, now, policy))
    .next;
}

/** An idle item: a delivered command, payload removed, out of the due index (as a final item is). */
function idleItem(template: NotificationRecord): Record<string, AttributeValue> {
  const eventId = `evt-${randomUUID()}`;
  const record: NotificationRecord = {
    ...template,
    idempotencyKey: deriveIdempotencyKey(eventId, 'sms', 'password_reset'),
    eventId,
    state: 'delivered',
    version: template.version + 1,
    lastReason: 'status_polled',
  };
  const { dueAt: _dueAt, ...rest } = record;
  const item = commandItem(rest as NotificationRecord, '', 400);
  delete item.sealed_payload;
  return marshall(item, { removeUndefinedValues: true }) as Record<string, AttributeValue>;
}

async function batchWrite(
  client: DynamoDBClient,
  table: string,
  items: ReadonlyArray<Record<string, AttributeValue>>,
): Promise<void> {
  const chunks: Array<ReadonlyArray<Record<string, AttributeValue>>> = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
  await runPool(chunks.length, 8, async (i) => {
    let pending = (chunks[i] ?? []).map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 20) throw new Error('BatchWriteItem kept returning unprocessed items');
      const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as typeof pending;
      if (pending.length) await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  });
}

/** Loads `count` idle items; returns the time taken and a sample of their keys spread over the load. */
async function loadIdle(client: DynamoDBClient, table: string, count: number, template: NotificationRecord) {
  const start = nowMs();
  const step = 5_000;
  const sample: Array<Record<string, AttributeValue>> = [];
  for (let done = 0; done < count; done += step) {
    const n = Math.min(step, count - done);
    const items = Array.from({ length: n }, () => idleItem(template));
    for (const item of items) {
      if (Math.random() < PROBE_KEYS / count) {
        sample.push({ pk: item.pk as AttributeValue, sk: item.sk as AttributeValue });
      }
    }
    await batchWrite(client, table, items);
    if (count > step) progress(`reconciler: ${table} ${done + n}/${count} idle items`);
  }
  return { ms: nowMs() - start, sample };
}

const PROBE_KEYS = 300;

/**
 * Point-read latency of each table on this DynamoDB Local, interleaved: separates what the
 * emulator's storage does with a bigger table from what the reconciler's design does.
 */
async function pointReads(
  client: DynamoDBClient,
  tables: ReadonlyArray<{
    idle: number;
    table: string;
    sample: ReadonlyArray<Record<string, AttributeValue>>;
  }>,
) {
  const samples = new Map<number, number[]>(tables.map((t) => [t.idle, []]));
  const rounds = Math.min(...tables.map((t) => t.sample.length));
  for (let i = 0; i < rounds; i++) {
    for (const t of rotate(tables, i)) {
      const start = nowMs();
      await client.send(
        new GetItemCommand({
          TableName: t.table,
          Key: t.sample[i] as Record<string, AttributeValue>,
          ConsistentRead: true,
        }),
      );
      samples.get(t.idle)?.push(nowMs() - start);
    }
  }
  return Object.fromEntries([...samples.entries()].map(([idle, list]) => [idle, median(list)]));
}

async function addDue(client: DynamoDBClient, table: string, fingerprinter: Fingerprinter, cipher: Cipher) {
  const now = Date.now();
  const items: Array<Record<string, AttributeValue>> = [];
  for (let i = 0; i < DUE_PER_PASS; i++) {
    // Due a second ago, as a `sent` item waiting for its status poll.
    const record = { ...sentRecord(fingerprinter, now - 2_000), dueAt: now - 1_000 };
    const sealed = await sealPayload(cipher, record.idempotencyKey, {
      phone: BENCH_PHONE,
      params: { code: '483920' },
    });
    items.push(
      marshall(commandItem(record, sealed, 400), { removeUndefinedValues: true }) as Record<
        string,
        AttributeValue
      >,
    );
  }
  await batchWrite(client, table, items);
}

interface PassResult {
  readonly idle: number;
  readonly ms: number;
  readonly rcu: number;
  readonly wcu: number;
  readonly requests: Record<string, number>;
  /** Mean latency (ms) of each store call type during the pass. */
  readonly callMs: Record<string, number>;
  readonly summary: ReconcileSummary;
}

/** Wraps a store to time each call type (the pass runs 8 items at once, so these overlap). */
function timedStore(store: NotificationStore, times: Record<string, number[]>): NotificationStore {
  const time =
    <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const start = nowMs();
      try {
        return await fn(...args);
      } finally {
        const list = times[name] ?? [];
        list.push(nowMs() - start);
        times[name] = list;
      }
    };
  return {
    admit: time('admit', store.admit.bind(store)),
    get: time('get', store.get.bind(store)),
    evidence: time('evidence', store.evidence.bind(store)),
    byEvent: time('byEvent', store.byEvent.bind(store)),
    transition: time('transition', store.transition.bind(store)),
    reschedule: time('reschedule', store.reschedule.bind(store)),
    due: time('due', store.due.bind(store)),
    dueShardCount: store.dueShardCount,
    dueLanes: store.dueLanes,
    dueInShard: time('due', store.dueInShard.bind(store)),
    oldestDue: time('oldestDue', store.oldestDue.bind(store)),
    readReconcileCursor: time('cursor', store.readReconcileCursor.bind(store)),
    writeReconcileCursor: time('cursor', store.writeReconcileCursor.bind(store)),
    markPoison: time('poison', store.markPoison.bind(store)),
  };
}

/** Fake provider: every lookup finds the message delivered, at once. */
const provider: SmsProvider = {
  name: 'simulator',
  capabilities: TWILIO_CAPABILITIES,
  send: () => Promise.reject(new Error('the reconciler never sends')),
  lookup: async (ref) => ({ kind: 'found', messageId: ref.messageId ?? 'SMx', status: 'delivered' }),
};

async function pass(endpoint: string, table: string, idle: number, cipher: Cipher): Promise<PassResult> {
  const reads = new Set(['get', 'due', 'query']);
  let rcu = 0;
  let wcu = 0;
  const requests: Record<string, number> = {};
  const client = localDynamo(endpoint);
  const times: Record<string, number[]> = {};
  const dynamoStore = new DynamoNotificationStore({
    client,
    tableName: table,
    evidenceRetentionDays: 400,
    onCapacity: (op: string, capacity: readonly ConsumedCapacity[]) => {
      const units = capacity.reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
      if (reads.has(op)) rcu += units;
      else wcu += units;
      requests[op] = (requests[op] ?? 0) + 1;
    },
  });
  const queue = { enqueue: async () => ({ failed: [] }) };
  const reconciler = await composeReconciler(
    // The items are due for their status poll: no receipt grace holds them back.
    loadConfig(settingsEnv({ tableName: table, receiptGrace: 0 })),
    {
      store: timedStore(dynamoStore, times),
      cipher,
      provider,
      queue,
      clock: systemClock,
      logger: BENCH_LOGGER,
    },
    { reconcileQueue: null },
  );
  const start = nowMs();
  const summary = await reconciler();
  const ms = nowMs() - start;
  client.destroy();
  if (summary.transitioned !== DUE_PER_PASS) {
    throw new Error(
      `pass on ${table} transitioned ${summary.transitioned} of ${DUE_PER_PASS}: ${JSON.stringify(summary)}`,
    );
  }
  const callMs = Object.fromEntries(
    Object.entries(times).map(([k, v]) => [k, v.reduce((n, x) => n + x, 0) / v.length]),
  );
  return { idle, ms, rcu, wcu, requests, callMs, summary };
}

/** Runs section 4. */
export async function runReconcilerScaling(options: ReconcilerScalingOptions): Promise<SectionResult> {
  const admin = localDynamo(options.endpoint);
  const keys = benchKeys();
  const cipher = createLocalCipher(parseKey(keys.dataKey));
  const fingerprinter = createFingerprinter(parseKey(keys.fingerprintKey));
  const sizes = options.quick ? [1_000, 10_000] : [1_000, 100_000];
  const passesPerSize = options.quick ? 2 : 5;
  const tables: Array<{
    idle: number;
    table: string;
    loadMs: number;
    sample: Array<Record<string, AttributeValue>>;
  }> = [];
  const template = sentRecord(fingerprinter, Date.now());
  try {
    for (const idle of sizes) {
      const table = await freshServiceTable(admin, `bench-rec-${idle}`);
      progress(`reconciler: loading ${idle} idle items into ${table}`);
      const { ms: loadMs, sample } = await loadIdle(admin, table, idle, template);
      tables.push({ idle, table, loadMs, sample });
    }
    // One warm-up pass per table (JIT, connections, Local's query plans), then interleaved passes.
    const results: PassResult[] = [];
    for (let round = -1; round < passesPerSize; round++) {
      for (const t of rotate(tables, Math.max(0, round))) {
        await addDue(admin, t.table, fingerprinter, cipher);
        const r = await pass(options.endpoint, t.table, t.idle, cipher);
        if (round >= 0) results.push(r);
      }
      if (round >= 0) progress(`reconciler: round ${round + 1}/${passesPerSize}`);
    }

    progress('reconciler: point-read latency per table');
    const getMs = await pointReads(admin, tables);
    const per = (idle: number) => {
      const list = results.filter((r) => r.idle === idle);
      return {
        idle,
        passes: list.length,
        msP50: median(list.map((r) => r.ms)),
        rcuP50: median(list.map((r) => r.rcu)),
        wcuP50: median(list.map((r) => r.wcu)),
        requests: list[0]?.requests ?? {},
        callMs: Object.fromEntries(
          Object.keys(list[0]?.callMs ?? {}).map((k) => [k, median(list.map((r) => r.callMs[k] ?? 0))]),
        ),
      };
    };
    const [small, large] = sizes.map(per) as [ReturnType<typeof per>, ReturnType<typeof per>];
    const rcuRatio = ratio(large.rcuP50, small.rcuP50);
    const timeRatio = ratio(large.msP50, small.msP50);
    const rows = [small, large].map((s) => [
      s.idle.toLocaleString('en-US'),
      String(DUE_PER_PASS),
      String(s.passes),
      fmt(s.msP50, 1),
      fmt(s.rcuP50, 1),
      fmt(s.wcuP50, 1),
      Object.entries(s.callMs)
        .map(([op, ms]) => `${op} ${fmt(ms, 1)}`)
        .join(', '),
      Object.entries(s.requests)
        .map(([op, n]) => `${op} x${n}`)
        .join(', '),
    ]);
    rows.push(['ratio large/small', '', '', fmt(timeRatio, 3), fmt(rcuRatio, 3), '', '', '']);
    const [getSmall, getLarge] = sizes.map((n) => getMs[n] ?? Number.NaN) as [number, number];
    const getRatio = ratio(getLarge, getSmall);
    return {
      title: '4. Reconciler pass: 100 due items among idle items',
      tables: [
        {
          caption: 'One reconciler pass (median of the passes; capacity as DynamoDB Local reports it)',
          headers: [
            'idle items',
            'due',
            'passes',
            'time ms',
            'RCU',
            'WCU',
            'mean ms per call',
            'store calls per pass',
          ],
          rows,
        },
      ],
      notes: [
        `Idle items were loaded with BatchWriteItem (${tables.map((t) => `${t.idle.toLocaleString('en-US')} in ${fmt(t.loadMs / 1000, 1)} s`).join(', ')}). Passes alternate between the two tables; one warm-up pass each is discarded.`,
        `Emulator storage, measured apart: a strongly consistent GetItem of an idle key (outside any pass, ${PROBE_KEYS} interleaved) takes p50 ${fmt(getSmall, 2)} ms on the small table and ${fmt(getLarge, 2)} ms on the large one (ratio ${fmt(getRatio, 3)}).`,
        'The reads are the 4 due-index shard queries plus one strongly consistent GetItem per due item (the reconciler re-reads before acting); the writes are one transition (command update + evidence put) per item.',
      ],
      targets: [
        {
          name: 'reconciler read capacity, large/small',
          target: `<= ${RATIO_TARGET}`,
          measured: fmt(rcuRatio, 3),
          met: rcuRatio <= RATIO_TARGET,
        },
        {
          name: 'reconciler pass time, large/small',
          target: `<= ${RATIO_TARGET}`,
          measured: fmt(timeRatio, 3),
          met: timeRatio <= RATIO_TARGET,
        },
      ],
      data: {
        sizes,
        passesPerSize,
        tables: tables.map(({ sample: _sample, ...t }) => t),
        results,
        small,
        large,
        rcuRatio,
        timeRatio,
        pointReadP50Ms: getMs,
        pointReadRatio: getRatio,
      },
    };
  } finally {
    // Free DynamoDB Local's memory for the sections that follow.
    for (const t of tables)
      await admin.send(new DeleteTableCommand({ TableName: t.table })).catch(() => undefined);
    admin.destroy();
  }
}
