/**
 * Section 1: admission at the DynamoDB limit. Three variants run round-robin in the same loop,
 * against one DynamoDB Local, each with its own client and table of the service's schema:
 *
 * (a) the limit: a bare conditional PutItem of a real admitted command item (same size, same GSIs);
 * (b) our API handler in-process as production composes it (`composeApi`), fed API Gateway v2
 *     events (validation, fingerprint, AES-GCM seal,
 *     one TransactWriteItems of the command put and its event guard put, ALL_OLD on failure);
 * (c) the same handler with a plain PutItem, wrapped in Powertools `makeIdempotent`.
 *
 * Then, untimed, one fresh and one duplicate admission per variant with capacity recording.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type AttributeValue,
  type ConsumedCapacity,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { localContext } from '../local/runtime/lambda-context.js';
import { TableSchema } from '../shared/adapters/dynamodb/schema.js';
import { DynamoNotificationStore } from '../shared/adapters/dynamodb/store.js';
import { createLocalCipher, parseKey } from '../shared/adapters/local-cipher.js';
import { composeApi } from '../shared/composition/handlers.js';
import { loadConfig } from '../shared/config.js';
import {
  type AdmissionLog,
  budgetCounters,
  DEFAULT_DESTINATION_LIMITS,
  parseDestinationLimits,
} from '../shared/domain/budgets.js';
import { systemClock } from '../shared/domain/clock.js';
import { createFingerprinter } from '../shared/domain/fingerprint.js';
import { deriveIdempotencyKey } from '../shared/domain/idempotency-key.js';
import { admit } from '../shared/domain/notification.js';
import { DEFAULT_POLICY } from '../shared/domain/policy.js';
import { settingsEnv } from '../shared/settings.js';
import { CapacityRecorder, totals } from './capacity-model.js';
import { profileOps } from './cpu-profile.js';
import { createPowertoolsApiHandler, ensureIdempotencyTable } from './powertools-admission.js';
import { fmt, type LatencySummary, median, nowMs, ratio, rotate, runPool, summarize } from './stats.js';
import {
  apiEvent,
  BENCH_LOGGER,
  benchKeys,
  distinctPhones,
  freshServiceTable,
  localDynamo,
  progress,
  requestBody,
  type SectionResult,
  type TargetResult,
} from './support.js';

/** Options of {@link runAdmission}. */
export interface AdmissionOptions {
  readonly endpoint: string;
  /** Fewer rounds, for a smoke run. */
  readonly quick: boolean;
}

type VariantId = 'a' | 'b' | 'c';
const LABELS: Record<VariantId, string> = {
  a: '(a) bare conditional PutItem',
  b: '(b) our API handler',
  c: '(c) Powertools makeIdempotent',
};

/** A prepared operation: built outside the timed region, run inside it. */
type Prepared = () => Promise<void>;

interface Variant {
  readonly id: VariantId;
  /** Builds the next operation's input (not timed) and returns the timed call. */
  prepare(): Prepared;
}

const RETENTION_DAYS = 400;

/** The variants of the budgets section's second loop (where the time goes, no handler). */
const FLOOR_LABELS: Record<VariantId, string> = {
  a: '(a) bare conditional PutItem',
  b: '(t) the same put alone in a TransactWriteItems',
  c: "(s) the store's guarded admission alone (put, event guard, log)",
};
/**
 * The variants of the budgets section's third loop: the floor of an admission without a
 * transaction (the command keyed by its event, so its own key guard is the event guard, and the
 * number's log updated on its own), sequential and in parallel.
 */
const TWO_WRITE_LABELS: Record<VariantId, string> = {
  a: '(a) bare conditional PutItem',
  b: "(u) the number's log UpdateItem, then the command PutItem",
  c: '(p) the same two writes sent in parallel',
};
const CONCURRENCY = 16;

function expectStatus(result: APIGatewayProxyStructuredResultV2, status: number, variant: string): void {
  if (result.statusCode !== status) {
    throw new Error(
      `${variant}: expected ${status}, got ${result.statusCode} ${String(result.body).slice(0, 200)}`,
    );
  }
}

/** Everything the three variants need, built once. */
async function setUp(endpoint: string) {
  const keys = benchKeys();
  const cipher = createLocalCipher(parseKey(keys.dataKey));
  const fingerprinter = createFingerprinter(parseKey(keys.fingerprintKey));
  const common = {
    cipher,
    fingerprinter,
    clock: systemClock,
    policy: DEFAULT_POLICY,
    providerName: 'simulator',
    maxExpiryMs: 24 * 3_600_000,
    logError: (error: unknown) => progress(`handler error: ${(error as Error).message}`),
  };
  const admin = localDynamo(endpoint);
  const [tableA, tableB, tableC] = [
    await freshServiceTable(admin, 'bench-adm-a'),
    await freshServiceTable(admin, 'bench-adm-b'),
    await freshServiceTable(admin, 'bench-adm-c'),
  ];
  const idempotencyTable = `bench-idem-${randomUUID().slice(0, 8)}`;
  await ensureIdempotencyTable(admin, idempotencyTable);
  return { keys, common, admin, tableA, tableB, tableC, idempotencyTable };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

/**
 * Our API handler as production composes it (`composeApi` over the settings), on `tableName`
 * through `client`: destination budgets `off` (b) or at their defaults (d); every other guard at
 * its default.
 */
function ourApi(
  setup: Setup,
  target: { client: DynamoDBClient; tableName: string; budgets: 'off' | 'defaults' },
  onCapacity?: (op: string, c: readonly ConsumedCapacity[]) => void,
) {
  const { client, tableName } = target;
  const config = loadConfig(
    settingsEnv({ tableName, ...(target.budgets === 'off' ? { destinationLimits: 'off' } : {}) }),
  );
  const store = new DynamoNotificationStore({
    client,
    tableName,
    evidenceRetentionDays: RETENTION_DAYS,
    ...(onCapacity ? { onCapacity } : {}),
  });
  const { cipher, fingerprinter, clock } = setup.common;
  return composeApi(config, { store, cipher, fingerprinter, clock, logger: BENCH_LOGGER });
}

type OurApi = Awaited<ReturnType<typeof ourApi>>;

function handlerB(
  setup: Setup,
  client: DynamoDBClient,
  onCapacity?: (op: string, c: readonly ConsumedCapacity[]) => void,
): Promise<OurApi> {
  return ourApi(setup, { client, tableName: setup.tableB, budgets: 'off' }, onCapacity);
}

function handlerC(setup: Setup, client: DynamoDBClient) {
  return createPowertoolsApiHandler({
    ...setup.common,
    client,
    commandTable: setup.tableC,
    idempotencyTable: setup.idempotencyTable,
    retentionDays: RETENTION_DAYS,
  });
}

/** A real command item as (b) stored it: the template for (a)'s bare put. */
async function templateItem(setup: Setup): Promise<Record<string, AttributeValue>> {
  const body = requestBody();
  const handler = await handlerB(setup, setup.admin);
  expectStatus(
    await handler(apiEvent('POST', '/v1/notifications', JSON.stringify(body)), localContext('api')),
    202,
    'template',
  );
  const key = deriveIdempotencyKey(String(body.event_id), 'sms', 'password_reset');
  const out = await setup.admin.send(
    new GetItemCommand({
      TableName: setup.tableB,
      Key: { pk: { S: key }, sk: { S: 'CMD' } },
      ConsistentRead: true,
    }),
  );
  if (!out.Item) throw new Error('template item not found');
  return out.Item;
}

/** Builds the three variants, each with its own client (own sockets), on its own table. */
async function buildVariants(
  endpoint: string,
  setup: Setup,
  template: Record<string, AttributeValue>,
): Promise<Variant[]> {
  const clientA = localDynamo(endpoint);
  const b = await handlerB(setup, localDynamo(endpoint));
  const c = handlerC(setup, localDynamo(endpoint));
  const post =
    (
      handler: (e: APIGatewayProxyEventV2, c: Context) => Promise<APIGatewayProxyStructuredResultV2>,
      id: string,
    ) =>
    (): Prepared => {
      const event = apiEvent('POST', '/v1/notifications', JSON.stringify(requestBody()));
      const context = localContext('api');
      return async () => expectStatus(await handler(event, context), 202, id);
    };
  return [
    {
      id: 'a',
      prepare() {
        // A fresh key and event id of the same length as ours: same item size, same index fan-out.
        const eventId = `evt-${randomUUID()}`;
        const item = {
          ...template,
          pk: { S: deriveIdempotencyKey(eventId, 'sms', 'password_reset') },
          gsi_event_id: { S: eventId },
          event_id: { S: eventId },
        };
        const command = new PutItemCommand({
          TableName: setup.tableA,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': 'pk' },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        });
        return async () => {
          await clientA.send(command);
        };
      },
    },
    { id: 'b', prepare: post(b, 'b') },
    { id: 'c', prepare: post(c, 'c') },
  ];
}

interface ModeResult {
  readonly latency: Record<VariantId, LatencySummary>;
  readonly opsPerSecond: Record<VariantId, number>;
  /** Node process CPU (user + system) per operation, microseconds (sequential mode only). */
  readonly cpuUsPerOp?: Record<VariantId, number>;
  /** Per-round (sequential) or per-burst (concurrent) ratios of p50s, then their median. */
  readonly pairedRatios: { readonly bOverA: number; readonly cOverB: number };
}

async function sequential(list: readonly Variant[], rounds: number): Promise<ModeResult> {
  const samples: Record<VariantId, number[]> = { a: [], b: [], c: [] };
  const perRound: Array<Record<VariantId, number>> = [];
  const cpu = { a: 0, b: 0, c: 0 };
  for (let r = 0; r < rounds; r++) {
    const round = { a: 0, b: 0, c: 0 };
    for (const v of rotate(list, r)) {
      const op = v.prepare();
      const cpuStart = process.cpuUsage();
      const start = nowMs();
      await op();
      const ms = nowMs() - start;
      const used = process.cpuUsage(cpuStart);
      cpu[v.id] += used.user + used.system;
      samples[v.id].push(ms);
      round[v.id] = ms;
    }
    perRound.push(round);
  }
  const ops = (id: VariantId) => (samples[id].length / samples[id].reduce((n, x) => n + x, 0)) * 1000;
  return {
    latency: { a: summarize(samples.a), b: summarize(samples.b), c: summarize(samples.c) },
    opsPerSecond: { a: ops('a'), b: ops('b'), c: ops('c') },
    cpuUsPerOp: { a: cpu.a / rounds, b: cpu.b / rounds, c: cpu.c / rounds },
    pairedRatios: {
      bOverA: median(perRound.map((x) => x.b / x.a)),
      cOverB: median(perRound.map((x) => x.c / x.b)),
    },
  };
}

async function concurrent(list: readonly Variant[], bursts: number, burstSize: number): Promise<ModeResult> {
  const samples: Record<VariantId, number[]> = { a: [], b: [], c: [] };
  const rates: Record<VariantId, number[]> = { a: [], b: [], c: [] };
  const perBurst: Array<Record<VariantId, number>> = [];
  for (let r = 0; r < bursts; r++) {
    const p50s = { a: 0, b: 0, c: 0 };
    for (const v of rotate(list, r)) {
      const ops = Array.from({ length: burstSize }, () => v.prepare());
      const latencies: number[] = [];
      const start = nowMs();
      await runPool(burstSize, CONCURRENCY, async (i) => {
        const t = nowMs();
        await (ops[i] as Prepared)();
        latencies.push(nowMs() - t);
      });
      rates[v.id].push((burstSize / (nowMs() - start)) * 1000);
      samples[v.id].push(...latencies);
      p50s[v.id] = median(latencies);
    }
    perBurst.push(p50s);
  }
  return {
    latency: { a: summarize(samples.a), b: summarize(samples.b), c: summarize(samples.c) },
    opsPerSecond: { a: median(rates.a), b: median(rates.b), c: median(rates.c) },
    pairedRatios: {
      bOverA: median(perBurst.map((x) => x.b / x.a)),
      cOverB: median(perBurst.map((x) => x.c / x.b)),
    },
  };
}

interface CapacityRow {
  readonly variant: VariantId;
  readonly kind: 'fresh' | 'duplicate';
  readonly status: number;
  readonly requests: Record<string, number>;
  readonly failedConditional: number;
  readonly reported: number | undefined;
  readonly modelWcu: number;
  readonly modelRcu: number;
  readonly onCapacityCalls?: number;
  readonly details: readonly string[];
}

/** One fresh and one duplicate admission per variant, every DynamoDB request recorded. */
async function capacityPerAdmission(
  endpoint: string,
  setup: Setup,
  template: Record<string, AttributeValue>,
): Promise<CapacityRow[]> {
  const recorder = new CapacityRecorder(setup.admin);
  const rows: CapacityRow[] = [];
  const summarizeRows = (variant: VariantId, kind: 'fresh' | 'duplicate', status: number, extra = {}) => {
    const entries = recorder.entries.filter((e) => e.phase === `${variant}-${kind}`);
    const t = totals(entries);
    const reported = entries.some((e) => e.reported !== undefined) ? t.reported : undefined;
    rows.push({
      variant,
      kind,
      status,
      requests: t.byOperation,
      failedConditional: entries.filter((e) => e.failed === 'ConditionalCheckFailedException').length,
      reported,
      modelWcu: t.modelWcu,
      modelRcu: t.modelRcu,
      details: entries.map((e) => `${e.operation}${e.failed ? ` (${e.failed})` : ''}: ${e.detail}`),
      ...extra,
    });
  };

  // (a) the bare put, twice with the same key: the second fails its condition.
  const clientA = localDynamo(endpoint);
  recorder.attach(clientA, { inject: true });
  const eventId = `evt-${randomUUID()}`;
  const put = () =>
    clientA.send(
      new PutItemCommand({
        TableName: setup.tableA,
        Item: {
          ...template,
          pk: { S: deriveIdempotencyKey(eventId, 'sms', 'password_reset') },
          gsi_event_id: { S: eventId },
        },
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': 'pk' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
  recorder.phase = 'a-fresh';
  await put();
  summarizeRows('a', 'fresh', 200);
  recorder.phase = 'a-duplicate';
  await put().catch(() => undefined);
  summarizeRows('a', 'duplicate', 400);

  // (b) our handler with the store's onCapacity listener (the figure the service itself can log).
  const clientB = localDynamo(endpoint);
  recorder.attach(clientB);
  const calls: Array<{ op: string; units: number }> = [];
  const b = await handlerB(setup, clientB, (op, capacity) =>
    calls.push({ op, units: capacity.reduce((n, c) => n + (c.CapacityUnits ?? 0), 0) }),
  );
  const body = JSON.stringify(requestBody());
  for (const kind of ['fresh', 'duplicate'] as const) {
    recorder.phase = `b-${kind}`;
    calls.length = 0;
    const result = await b(apiEvent('POST', '/v1/notifications', body), localContext('api'));
    expectStatus(result, kind === 'fresh' ? 202 : 200, `b-${kind}`);
    summarizeRows('b', kind, result.statusCode ?? 0, { onCapacityCalls: calls.length });
  }

  // (c) Powertools: capacity is requested on its behalf by the recorder.
  const clientC = localDynamo(endpoint);
  recorder.attach(clientC, { inject: true });
  const c = handlerC(setup, clientC);
  const bodyC = JSON.stringify(requestBody());
  for (const kind of ['fresh', 'duplicate'] as const) {
    recorder.phase = `c-${kind}`;
    const result = await c(apiEvent('POST', '/v1/notifications', bodyC), localContext('api'));
    summarizeRows('c', kind, result.statusCode ?? 0);
  }
  return rows;
}

/** Profiles (a) and (b), alternating halves, and lists the buckets by the difference per op. */
async function profileAB(list: readonly Variant[], opsPerVariant: number) {
  const root = `${join(dirname(fileURLToPath(import.meta.url)), '..')}/`;
  const totals: Record<'a' | 'b', Map<string, number>> = { a: new Map(), b: new Map() };
  for (const half of [0, 1]) {
    for (const id of half === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
      const variant = list.find((v) => v.id === id) as Variant;
      const ops = Array.from({ length: opsPerVariant / 2 }, () => variant.prepare());
      for (const [bucket, us] of await profileOps(ops, root)) {
        totals[id].set(bucket, (totals[id].get(bucket) ?? 0) + us / 2);
      }
    }
  }
  const buckets = [...new Set([...totals.a.keys(), ...totals.b.keys()])];
  const diff = (k: string) => (totals.b.get(k) ?? 0) - (totals.a.get(k) ?? 0);
  const sorted = buckets.sort((x, y) => Math.abs(diff(y)) - Math.abs(diff(x)));
  const sum = (m: Map<string, number>, busy: boolean) =>
    [...m.entries()].filter(([k]) => !busy || !k.startsWith('(idle')).reduce((n, [, v]) => n + v, 0);
  const rows = sorted
    .slice(0, 12)
    .map((k) => [k, fmt(totals.a.get(k) ?? 0, 0), fmt(totals.b.get(k) ?? 0, 0), fmt(diff(k), 0)]);
  rows.push([
    'total busy (not idle)',
    fmt(sum(totals.a, true), 0),
    fmt(sum(totals.b, true), 0),
    fmt(sum(totals.b, true) - sum(totals.a, true), 0),
  ]);
  rows.push([
    'total wall',
    fmt(sum(totals.a, false), 0),
    fmt(sum(totals.b, false), 0),
    fmt(sum(totals.b, false) - sum(totals.a, false), 0),
  ]);
  return { rows, data: { a: Object.fromEntries(totals.a), b: Object.fromEntries(totals.b), opsPerVariant } };
}

/** Runs section 1 and returns its tables, targets and raw data. */
export async function runAdmission(options: AdmissionOptions): Promise<SectionResult> {
  const setup = await setUp(options.endpoint);
  const template = await templateItem(setup);
  const list = await buildVariants(options.endpoint, setup, template);
  const seqRounds = options.quick ? 60 : 1000;
  const bursts = options.quick ? 4 : 24;
  const burstSize = 128;

  progress('admission: warm-up');
  await sequential(list, options.quick ? 20 : 150);
  await concurrent(list, 2, burstSize);
  progress(`admission: sequential, ${seqRounds} rounds x 3 variants`);
  const seq = await sequential(list, seqRounds);
  progress(`admission: concurrency ${CONCURRENCY}, ${bursts} bursts of ${burstSize} x 3 variants`);
  const conc = await concurrent(list, bursts, burstSize);
  progress('admission: CPU profile of (a) and (b)');
  const profile = await profileAB(list, options.quick ? 200 : 1000);
  progress('admission: capacity of fresh and duplicate admissions');
  const capacity = await capacityPerAdmission(options.endpoint, setup, template);

  const modes = [
    ['sequential', seq],
    [`concurrency ${CONCURRENCY}`, conc],
  ] as const;
  const latencyRows = modes.flatMap(([mode, m]) =>
    (['a', 'b', 'c'] as const).map((id) => [
      LABELS[id],
      mode,
      fmt(m.latency[id].p50),
      fmt(m.latency[id].p99),
      fmt(m.opsPerSecond[id], 0),
      m.cpuUsPerOp ? fmt(m.cpuUsPerOp[id], 0) : '-',
      String(m.latency[id].n),
    ]),
  );
  const ratioRows = modes.flatMap(([mode, m]) => [
    [
      '(b)/(a) p50',
      mode,
      fmt(ratio(m.latency.b.p50, m.latency.a.p50), 3),
      fmt(m.pairedRatios.bOverA, 3),
      '<= 1.25',
    ],
    [
      '(c)/(b) p50',
      mode,
      fmt(ratio(m.latency.c.p50, m.latency.b.p50), 3),
      fmt(m.pairedRatios.cOverB, 3),
      '>= 2.0',
    ],
  ]);
  const capacityRows = capacity.map((row) => [
    LABELS[row.variant],
    row.kind,
    row.variant === 'a' ? '-' : String(row.status),
    Object.entries(row.requests)
      .map(([op, n]) => `${op} x${n}`)
      .join(', '),
    row.reported === undefined ? 'none returned' : fmt(row.reported, 1),
    row.variant === 'b' ? String(row.onCapacityCalls ?? 0) : '-',
    fmt(row.modelWcu, 1),
    fmt(row.modelRcu, 1),
  ]);

  const targets: TargetResult[] = modes.flatMap(([mode, m]) => {
    const ba = ratio(m.latency.b.p50, m.latency.a.p50);
    const cb = ratio(m.latency.c.p50, m.latency.b.p50);
    return [
      { name: `admission (b)/(a) p50, ${mode}`, target: '<= 1.25', measured: fmt(ba, 3), met: ba <= 1.25 },
      { name: `admission (c)/(b) p50, ${mode}`, target: '>= 2.0', measured: fmt(cb, 3), met: cb >= 2.0 },
    ];
  });
  const dup = capacity.find((r) => r.variant === 'b' && r.kind === 'duplicate');
  if (dup) {
    const writes =
      (dup.requests.PutItem ?? 0) + (dup.requests.UpdateItem ?? 0) + (dup.requests.TransactWriteItems ?? 0);
    const reads = (dup.requests.GetItem ?? 0) + (dup.requests.Query ?? 0);
    targets.push({
      name: 'duplicate admission (b): requests',
      target: '1 write, 0 reads',
      measured: `${writes} write (${dup.failedConditional} failed conditional), ${reads} reads; model ${dup.modelWcu} WCU / ${dup.modelRcu} RCU`,
      met: writes === 1 && reads === 0 && dup.modelRcu === 0,
    });
  }

  return {
    title: '1. Admission at the DynamoDB limit',
    tables: [
      {
        caption: 'Latency (ms) and throughput, in-process, one DynamoDB Local',
        headers: ['variant', 'mode', 'p50', 'p99', 'ops/s', 'Node CPU us/op', 'n'],
        rows: latencyRows,
      },
      {
        caption:
          'Ratios: of pooled p50s, and the median of per-round (sequential) or per-burst (concurrent) p50 ratios',
        headers: ['ratio', 'mode', 'pooled p50', 'paired median', 'target'],
        rows: ratioRows,
      },
      {
        caption:
          "Where (b)'s extra time goes: V8 CPU samples per operation (us), sequential, largest differences first",
        headers: ['bucket', '(a) us/op', '(b) us/op', '(b)-(a)'],
        rows: profile.rows,
      },
      {
        caption:
          'DynamoDB requests and capacity per admission (reported = DynamoDB Local ConsumedCapacity; model = AWS billing rules)',
        headers: [
          'variant',
          'admission',
          'HTTP',
          'requests',
          'reported CU',
          'onCapacity calls',
          'model WCU',
          'model RCU',
        ],
        rows: capacityRows,
      },
    ],
    notes: [
      `Rounds interleave the variants round-robin (rotated start each round). Sequential: ${seqRounds} rounds; concurrency ${CONCURRENCY}: ${bursts} bursts of ${burstSize} operations per variant; ops/s is sequential count/time, or the median burst rate.`,
      '(a) puts a real command item written by (b) (same size, same table schema and GSIs) with a fresh key; (c) is the same handler with a plain PutItem, wrapped in makeIdempotent (DynamoDBPersistenceLayer on a second table, key = event_id/channel/template, payload validation on).',
      "(b)'s duplicate is a cancelled TransactWriteItems (the command put's condition fails; the event guard's too). A cancelled transaction carries no ConsumedCapacity (DynamoDB Local, and the AWS error shape has only message and cancellation reasons), so the store reports nothing for a duplicate; the duplicate figure is the request count (the model does not price a cancelled transaction).",
      '(b) writes two items per fresh admission, the command and its event guard (one command per event_id, channel and template), so it is a TransactWriteItems, not a PutItem: the (b)/(a) target of 1.25 predates the guard.',
    ],
    targets,
    data: {
      seq,
      conc,
      capacity,
      profile: profile.data,
      rounds: { seqRounds, bursts, burstSize, concurrency: CONCURRENCY },
    },
  };
}

/** Untimed: the requests and modelled capacity of a fresh, a refused and a replayed budgeted admission. */
async function budgetCapacity(
  setup: Setup,
  endpoint: string,
  handlerD: (client: DynamoDBClient) => Promise<OurApi>,
  ownNumber: () => string,
) {
  progress('budgets: capacity of fresh, refused and replayed admissions');
  const recorder = new CapacityRecorder(setup.admin);
  const recordedB = localDynamo(endpoint);
  const recordedD = localDynamo(endpoint);
  recorder.attach(recordedB);
  recorder.attach(recordedD);
  const plain = await handlerB(setup, recordedB);
  const budgeted = await handlerD(recordedD);
  const cases: Array<[string, typeof plain, string, number]> = [];
  cases.push(['(b) budgets off', plain, JSON.stringify(requestBody()), 202]);
  const phone = ownNumber();
  const first = JSON.stringify(requestBody(Date.now(), { destination: { phone } }));
  cases.push(['(d) budgets on', budgeted, first, 202]);
  cases.push([
    '(d) budgets on',
    budgeted,
    JSON.stringify(requestBody(Date.now(), { destination: { phone } })),
    202,
  ]);
  cases.push([
    '(d) budgets on',
    budgeted,
    JSON.stringify(requestBody(Date.now(), { destination: { phone } })),
    202,
  ]);
  cases.push([
    '(d) budgets on',
    budgeted,
    JSON.stringify(requestBody(Date.now(), { destination: { phone } })),
    429,
  ]);
  cases.push(['(d) budgets on', budgeted, first, 200]);
  const kinds = [
    'fresh',
    'fresh',
    '2nd to the number',
    '3rd to the number',
    'refused (budget spent)',
    'replay',
  ];
  const capacityRows: string[][] = [];
  const wcu: number[] = [];
  for (const [i, [label, handler, body, status]] of cases.entries()) {
    recorder.phase = `budget-${i}`;
    const result = await handler(apiEvent('POST', '/v1/notifications', body), localContext('api'));
    expectStatus(result, status, `${label} ${kinds[i]}`);
    const entries = recorder.entries.filter((e) => e.phase === `budget-${i}`);
    const t = totals(entries);
    wcu.push(t.modelWcu);
    capacityRows.push([
      label,
      kinds[i] ?? '',
      String(status),
      Object.entries(t.byOperation)
        .map(([op, n]) => `${op} x${n}`)
        .join(', '),
      fmt(t.modelWcu, 1),
      fmt(t.modelRcu, 1),
      entries.map((e) => `${e.operation}${e.failed ? ` (${e.failed})` : ''}: ${e.detail}`).join(' | '),
    ]);
  }
  const addedWcu = (wcu[1] ?? 0) - (wcu[0] ?? 0);
  return { capacityRows, wcu, addedWcu };
}

/**
 * Where a guarded admission's time goes, without the handler: (a) the bare conditional PutItem
 * again; (b) a TransactWriteItems holding only that same put (what a transaction costs on this
 * emulator); (c) the store's admission alone (`DynamoNotificationStore.admit` with the default
 * destination budgets: the command put, the event guard and the number's log in one
 * TransactWriteItems, exactly what production sends), each to a number of its own.
 */
async function floorVariants(
  endpoint: string,
  setup: Setup,
  template: Record<string, AttributeValue>,
  bare: Variant,
): Promise<Variant[]> {
  const [tableT, tableS] = [
    await freshServiceTable(setup.admin, 'bench-adm-t'),
    await freshServiceTable(setup.admin, 'bench-adm-s'),
  ];
  const clientT = localDynamo(endpoint);
  const store = new DynamoNotificationStore({
    client: localDynamo(endpoint),
    tableName: tableS,
    evidenceRetentionDays: RETENTION_DAYS,
  });
  const sealed = template.sealed_payload?.S ?? '';
  const policy = { destination: parseDestinationLimits(DEFAULT_DESTINATION_LIMITS), country: [] };
  return [
    bare,
    {
      id: 'b',
      prepare() {
        const eventId = `evt-${randomUUID()}`;
        const command = new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableT,
                Item: {
                  ...template,
                  pk: { S: deriveIdempotencyKey(eventId, 'sms', 'password_reset') },
                  gsi_event_id: { S: eventId },
                  event_id: { S: eventId },
                },
                ConditionExpression: 'attribute_not_exists(#pk)',
                ExpressionAttributeNames: { '#pk': 'pk' },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        });
        return async () => {
          await clientT.send(command);
        };
      },
    },
    {
      id: 'c',
      prepare() {
        const eventId = `evt-${randomUUID()}`;
        const now = Date.now();
        const fingerprint = `fp1:${randomUUID().replaceAll('-', '')}`;
        const { next, evidence } = admit({
          request: {
            idempotencyKey: deriveIdempotencyKey(eventId, 'sms', 'password_reset'),
            eventId,
            channel: 'sms',
            template: 'password_reset',
            locale: 'en',
            expiresAt: now + 600_000,
            sensitive: { phone: '+14155550123', params: { code: '123456' } },
          },
          destinationFingerprint: fingerprint,
          payloadFingerprint: `pf1:${randomUUID().replaceAll('-', '')}`,
          providerName: 'simulator',
          now,
          safetyNetAt: now + 60_000,
        });
        const counters = budgetCounters(policy, fingerprint, undefined, now);
        return async () => {
          const result = await store.admit(next, evidence, sealed, counters);
          if (result.kind !== 'admitted') throw new Error(`store floor: ${result.kind}`);
        };
      },
    },
  ];
}

/**
 * The update of a number's admission log as the store sends it for a number with room (the
 * store's `counterUpdate`, log branch, without a rewrite): this admission's time in front,
 * guarded by room in every sliding window and by the log's rewrite length.
 */
function logUpdate(tableName: string, log: AdmissionLog) {
  const room = log.windows.map(
    (w, i) => `(attribute_not_exists(#log[${w.limit - 1}]) OR #log[${w.limit - 1}] <= :cut${i})`,
  );
  return new UpdateItemCommand({
    TableName: tableName,
    Key: marshall({ [TableSchema.partitionKey]: log.key, [TableSchema.sortKey]: TableSchema.counterSortKey }),
    UpdateExpression: 'SET #log = list_append(:entry, if_not_exists(#log, :none)), #ttl = :ttl',
    ConditionExpression: [...room, `attribute_not_exists(#log[${log.compactAt - 1}])`].join(' AND '),
    ExpressionAttributeNames: { '#log': log.attribute, '#ttl': TableSchema.ttlAttribute },
    ExpressionAttributeValues: marshall({
      ...Object.fromEntries(log.windows.map((w, i) => [`:cut${i}`, log.at - w.windowMs])),
      ':entry': [log.at],
      ':none': [],
      ':ttl': Math.ceil(log.at / 1000) + 86_400,
    }),
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
}

/**
 * The floor of an admission with no transaction (docs/performance.md, section 7): (u) the
 * number's log update, then the command's conditional put keyed by its event (the derived key:
 * its own guard is the event guard), one after the other as a budget-first admission must send
 * them; (p) the same two writes in parallel, the only shape whose latency on DynamoDB is one
 * write's. Each to a number and an event of its own.
 */
async function twoWriteVariants(
  endpoint: string,
  setup: Setup,
  template: Record<string, AttributeValue>,
  bare: Variant,
): Promise<Variant[]> {
  const tableU = await freshServiceTable(setup.admin, 'bench-adm-u');
  const policy = { destination: parseDestinationLimits(DEFAULT_DESTINATION_LIMITS), country: [] };
  const writes = () => {
    const eventId = `evt-${randomUUID()}`;
    const [log] = budgetCounters(policy, `fp1:${randomUUID().replaceAll('-', '')}`, undefined, Date.now());
    const put = new PutItemCommand({
      TableName: tableU,
      Item: {
        ...template,
        pk: { S: deriveIdempotencyKey(eventId, 'sms', 'password_reset') },
        gsi_event_id: { S: eventId },
        event_id: { S: eventId },
      },
      ConditionExpression: 'attribute_not_exists(#pk)',
      ExpressionAttributeNames: { '#pk': 'pk' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    return { put, update: logUpdate(tableU, log as AdmissionLog) };
  };
  const [clientU, clientP] = [localDynamo(endpoint), localDynamo(endpoint)];
  return [
    bare,
    {
      id: 'b',
      prepare() {
        const { put, update } = writes();
        return async () => {
          await clientU.send(update);
          await clientU.send(put);
        };
      },
    },
    {
      id: 'c',
      prepare() {
        const { put, update } = writes();
        return async () => {
          await Promise.all([clientP.send(update), clientP.send(put)]);
        };
      },
    },
  ];
}

/** The budgets section: latency, ratios against the bare put, and the capacity rows. */
function budgetReport(
  timed: {
    seq: ModeResult;
    conc: ModeResult;
    seqRounds: number;
    bursts: number;
    burstSize: number;
  },
  capacity: { capacityRows: string[][]; wcu: number[]; addedWcu: number },
  floor: { seq: ModeResult; conc: ModeResult },
  twoWrites: { seq: ModeResult; conc: ModeResult },
): SectionResult {
  const { seq, conc, seqRounds, bursts, burstSize } = timed;
  const { capacityRows, wcu, addedWcu } = capacity;
  const modes = [
    ['sequential', seq],
    [`concurrency ${CONCURRENCY}`, conc],
  ] as const;
  const names = {
    a: LABELS.a,
    b: '(b) our API handler, budgets off (event guard on)',
    c: '(d) our API handler, every default guard on',
  };
  const latencyRows = modes.flatMap(([mode, m]) =>
    (['a', 'b', 'c'] as const).map((id) => [
      names[id],
      mode,
      fmt(m.latency[id].p50),
      fmt(m.latency[id].p99),
      fmt(m.opsPerSecond[id], 0),
      String(m.latency[id].n),
    ]),
  );
  const targets: TargetResult[] = modes.flatMap(([mode, m]) => {
    const da = ratio(m.latency.c.p50, m.latency.a.p50);
    return [
      {
        name: `budgeted admission (d)/(a) p50, ${mode}`,
        target: '<= 1.6',
        measured: fmt(da, 3),
        met: da <= 1.6,
      },
    ];
  });
  const guardedVsBare = {
    seq: ratio(seq.latency.c.p50, seq.latency.a.p50),
    conc16: ratio(conc.latency.c.p50, conc.latency.a.p50),
  };
  targets.push({
    name: 'WCU a budget check adds to a fresh admission (model)',
    target: 'reported',
    measured: `${fmt(addedWcu, 1)} WCU (${fmt(wcu[0], 1)} -> ${fmt(wcu[1], 1)})`,
    met: true,
  });
  return {
    title: 'Budgets: admission with destination budgets on vs bare PutItem',
    tables: [
      {
        caption: 'Latency (ms) and throughput, in-process, one DynamoDB Local',
        headers: ['variant', 'mode', 'p50', 'p99', 'ops/s', 'n'],
        rows: latencyRows,
      },
      {
        caption: 'Ratios of pooled p50s, and the median of per-round / per-burst ratios',
        headers: ['ratio', 'mode', 'pooled p50', 'paired median', 'target'],
        rows: modes.flatMap(([mode, m]) => [
          ['(d)/(a) p50', mode, fmt(ratio(m.latency.c.p50, m.latency.a.p50), 3), '-', '<= 1.6'],
          [
            '(d)/(b) p50',
            mode,
            fmt(ratio(m.latency.c.p50, m.latency.b.p50), 3),
            fmt(m.pairedRatios.cOverB, 3),
            '-',
          ],
        ]),
      },
      {
        caption:
          'Where the time goes, without the handler: p50 (ms) and ratio to the bare PutItem of the same loop',
        headers: ['variant', 'mode', 'p50', 'p99', 'ratio to (a)'],
        rows: (
          [
            ['sequential', floor.seq, FLOOR_LABELS],
            [`concurrency ${CONCURRENCY}`, floor.conc, FLOOR_LABELS],
            ['sequential', twoWrites.seq, TWO_WRITE_LABELS],
            [`concurrency ${CONCURRENCY}`, twoWrites.conc, TWO_WRITE_LABELS],
          ] as const
        ).flatMap(([mode, m, labels]) =>
          (['a', 'b', 'c'] as const).map((id) => [
            labels[id],
            mode,
            fmt(m.latency[id].p50),
            fmt(m.latency[id].p99),
            fmt(ratio(m.latency[id].p50, m.latency.a.p50), 3),
          ]),
        ),
      },
      {
        caption:
          'DynamoDB requests and modelled capacity per admission (AWS billing rules, transactional writes x2)',
        headers: ['variant', 'admission', 'HTTP', 'requests', 'model WCU', 'model RCU', 'detail'],
        rows: capacityRows,
      },
    ],
    notes: [
      `Sequential: ${seqRounds} rounds; concurrency ${CONCURRENCY}: ${bursts} bursts of ${burstSize} per variant, round-robin with a rotated start.`,
      "Where the time goes runs after the main loop on the same DynamoDB Local, and the emulator's transactions slow down with the transactions it ran before (docs/performance.md, section 7): read this loop's ratios against each other, not against the main loop's.",
      'The third loop, (u) and (p), runs last: the floor of an admission with no transaction, two single-item writes (one after the other, or in parallel); what any exact admission writes at least (docs/performance.md, section 7).',
      'A cancelled transaction (refusal, replay) is not modelled by the capacity recorder; its request count is exact. The refusal adds one strongly consistent GetItem (the store makes sure a replay is never refused).',
    ],
    targets,
    figures: {
      'admission.guarded_vs_bare.seq': Number(guardedVsBare.seq.toFixed(3)),
      [`admission.guarded_vs_bare.conc${CONCURRENCY}`]: Number(guardedVsBare.conc16.toFixed(3)),
      // The floor of a transaction-free admission: two single-item writes, in sequence and in parallel.
      'admission.two_writes_vs_bare.seq': Number(
        ratio(twoWrites.seq.latency.b.p50, twoWrites.seq.latency.a.p50).toFixed(3),
      ),
      [`admission.two_writes_vs_bare.conc${CONCURRENCY}`]: Number(
        ratio(twoWrites.conc.latency.b.p50, twoWrites.conc.latency.a.p50).toFixed(3),
      ),
      'admission.parallel_writes_vs_bare.seq': Number(
        ratio(twoWrites.seq.latency.c.p50, twoWrites.seq.latency.a.p50).toFixed(3),
      ),
    },
    data: { seq, conc, capacityRows, addedWcu, floor, twoWrites },
  };
}

/**
 * Section "budgets": what the default guards cost at admission. Three variants round-robin, as
 * in section 1: (a) the bare conditional PutItem, (b) our handler with budgets off (one
 * TransactWriteItems: the command and its event guard), (d) our handler with every default guard
 * (`3/15m,10/24h` and one command per event: one TransactWriteItems of the put, the event guard
 * and the one counter item both windows share). Every (d) request goes to its own number, so no
 * budget is ever spent and the figure is the cost of counting, not of refusing. Prints
 * `FIGURE admission.guarded_vs_bare.seq` / `.conc16`: (d)/(a) of pooled p50s. A second loop
 * shows where the time goes without the handler ({@link floorVariants}). Then, untimed, the
 * capacity of a fresh, a refused and a replayed budgeted admission.
 */
export async function runBudgetAdmission(options: AdmissionOptions): Promise<SectionResult> {
  const setup = await setUp(options.endpoint);
  const template = await templateItem(setup);
  const [a, b] = (await buildVariants(options.endpoint, setup, template)) as [Variant, Variant];
  const tableD = await freshServiceTable(setup.admin, 'bench-adm-d');
  const handlerD = (client: DynamoDBClient) =>
    ourApi(setup, { client, tableName: tableD, budgets: 'defaults' });
  const d = await handlerD(localDynamo(options.endpoint));
  const ownNumber = distinctPhones();
  const list: Variant[] = [
    a,
    b,
    {
      id: 'c',
      prepare() {
        const body = requestBody(Date.now(), { destination: { phone: ownNumber() } });
        const event = apiEvent('POST', '/v1/notifications', JSON.stringify(body));
        const context = localContext('api');
        return async () => expectStatus(await d(event, context), 202, 'd');
      },
    },
  ];
  const seqRounds = options.quick ? 150 : 1000;
  const bursts = options.quick ? 4 : 24;
  const burstSize = 128;
  progress('budgets: warm-up');
  await sequential(list, options.quick ? 20 : 150);
  progress(`budgets: sequential, ${seqRounds} rounds x 3 variants`);
  const seq = await sequential(list, seqRounds);
  progress(`budgets: concurrency ${CONCURRENCY}, ${bursts} bursts of ${burstSize} x 3 variants`);
  const conc = await concurrent(list, bursts, burstSize);

  const floorList = await floorVariants(options.endpoint, setup, template, a);
  progress(`budgets: where the time goes, sequential, ${seqRounds} rounds x 3 variants`);
  await sequential(floorList, options.quick ? 20 : 150);
  const floorSeq = await sequential(floorList, seqRounds);
  progress(`budgets: where the time goes, concurrency ${CONCURRENCY}`);
  const floorConc = await concurrent(floorList, bursts, burstSize);

  const twoWriteList = await twoWriteVariants(options.endpoint, setup, template, a);
  progress(`budgets: two single-item writes, sequential, ${seqRounds} rounds x 3 variants`);
  await sequential(twoWriteList, options.quick ? 20 : 150);
  const twoSeq = await sequential(twoWriteList, seqRounds);
  progress(`budgets: two single-item writes, concurrency ${CONCURRENCY}`);
  const twoConc = await concurrent(twoWriteList, bursts, burstSize);

  const { capacityRows, wcu, addedWcu } = await budgetCapacity(setup, options.endpoint, handlerD, ownNumber);
  return budgetReport(
    { seq, conc, seqRounds, bursts, burstSize },
    { capacityRows, wcu, addedWcu },
    { seq: floorSeq, conc: floorConc },
    { seq: twoSeq, conc: twoConc },
  );
}
