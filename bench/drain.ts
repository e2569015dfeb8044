/**
 * Section `drain` (issue 12): how fast the fan-out reconciler drains a backlog of due items, and
 * how fairly it serves the due-index shards. `--quick`: 10,000 due `dispatch_unknown` items
 * (100,000 otherwise), keys spread over the shards by their hash, in a fresh table on DynamoDB
 * Local. Both sides are the handlers as production composes them: the scheduled pass
 * (`composeReconciler` with a reconcile queue) runs back to back whenever the in-process queue runs
 * low, as the one-minute schedule would with a larger `maxItems`; N workers, each one reconcile
 * worker invocation (`composeReconcileWorker`) at a time with one message, consume the queue. An
 * item is drained when the handlers record its final outcome (the `FinalOutcomes` metric, through
 * the metrics sink). The fake provider answers `found`/`delivered` after a fixed lookup latency, so
 * every item ends in one pass through a worker.
 *
 * Figures: `drain.items_per_minute.c<N>` at N = 1, 4, 16, and `drain.fairness` = max/min over the
 * shards of the mean time from the start to an item's first look (worst of the three runs).
 */
import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  DeleteTableCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { startDynamoDbLocal } from '../local/dynamodb-local.js';
import { commandItem, dueShardOf } from '../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../shared/adapters/dynamodb/schema.js';
import { DynamoNotificationStore } from '../shared/adapters/dynamodb/store.js';
import { createLocalCipher, parseKey } from '../shared/adapters/local-cipher.js';
import {
  composeReconciler,
  composeReconcileWorker,
  type MetricsSink,
} from '../shared/composition/handlers.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/domain/clock.js';
import { decideDispatch, recordSendOutcome } from '../shared/domain/dispatch.js';
import { admit, applyTransition, type NotificationRecord } from '../shared/domain/notification.js';
import { DEFAULT_POLICY } from '../shared/domain/policy.js';
import { SERVICE_METRICS } from '../shared/handlers/service-metrics.js';
import { dispatchBodyOf } from '../shared/messages/dispatch-body.js';
import type { Cipher } from '../shared/ports/cipher.js';
import type { DispatchMessage, DispatchQueue } from '../shared/ports/queue.js';
import type { SmsProvider } from '../shared/ports/sms-provider.js';
import { TWILIO_CAPABILITIES } from '../shared/providers/twilio/provider.js';
import { settingsEnv } from '../shared/settings.js';
import { sealPayload } from '../shared/usecases/payload-seal.js';
import { fmt, nowMs, round, runPool } from './stats.js';
import {
  BENCH_LOGGER,
  BENCH_PHONE,
  benchKeys,
  freshServiceTable,
  localDynamo,
  progress,
  queueEvent,
  redelivered,
  type SectionResult,
} from './support.js';

/** Options of {@link runDrain}. */
export interface DrainOptions {
  readonly endpoint: string;
  readonly quick: boolean;
}

const CONCURRENCIES = [1, 4, 16] as const;
/** What one provider lookup costs in time (a Twilio GET is 100-300 ms; this keeps the run short). */
const LOOKUP_LATENCY_MS = 25;
/** Entries one scheduled pass reads. */
const PASS_ITEMS = 1_000;
const FAIRNESS_TARGET = 1.5;
const policy = DEFAULT_POLICY;
/** The drained items are unknowns: they live in the urgent lane's shards. */
const SHARDS = TableSchema.dueShardsPerLane;

function unknownRecord(now: number): NotificationRecord {
  const eventId = `evt-${randomUUID()}`;
  const { next } = admit({
    request: {
      idempotencyKey: `sms:password_reset:${eventId}`,
      eventId,
      channel: 'sms',
      template: 'password_reset',
      locale: 'en',
      expiresAt: now + 60 * 60_000,
      sensitive: { phone: BENCH_PHONE, params: { code: '483920' } },
    },
    destinationFingerprint: 'fp1:bench',
    payloadFingerprint: 'pf1:bench',
    providerName: 'simulator',
    now,
    safetyNetAt: now + policy.queueSafetyNetMs,
  });
  const decision = decideDispatch(next, now, policy, 'bench');
  if (decision.kind !== 'claim') throw new Error(`unexpected decision ${decision.kind}`);
  const claimed = applyTransition(next, decision.intent).next;
  const unknown = applyTransition(
    claimed,
    recordSendOutcome(claimed, { kind: 'unknown', detail: 'timeout', timedOut: true }, now, policy),
  ).next;
  // Due a minute ago: the whole backlog is due when the drain starts.
  return { ...unknown, dueAt: now + Math.floor(Math.random() * 1_000) };
}

async function load(client: DynamoDBClient, table: string, cipher: Cipher, count: number) {
  const now = Date.now() - 120_000;
  const shardOf = new Map<string, number>();
  const chunks: Array<Array<Record<string, AttributeValue>>> = [];
  let chunk: Array<Record<string, AttributeValue>> = [];
  for (let i = 0; i < count; i++) {
    const record = unknownRecord(now);
    shardOf.set(record.idempotencyKey, Number(dueShardOf(record.idempotencyKey, record.state)));
    const sealed = await sealPayload(cipher, record.idempotencyKey, {
      phone: BENCH_PHONE,
      params: { code: '483920' },
    });
    chunk.push(
      marshall(commandItem(record, sealed, 400), { removeUndefinedValues: true }) as Record<
        string,
        AttributeValue
      >,
    );
    if (chunk.length === 25) {
      chunks.push(chunk);
      chunk = [];
    }
  }
  if (chunk.length) chunks.push(chunk);
  await runPool(chunks.length, 8, async (i) => {
    let pending = (chunks[i] ?? []).map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 20) throw new Error('BatchWriteItem kept returning unprocessed items');
      const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as typeof pending;
      if (pending.length) await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  });
  return shardOf;
}

/** The reconcile queue, in process: FIFO, duplicates allowed (the workers skip handled keys). */
function memoryQueue() {
  const messages: DispatchMessage[] = [];
  const queue: DispatchQueue = {
    async enqueue(batch) {
      messages.push(...batch.map((b) => b.message));
      return { failed: [] };
    },
  };
  return { messages, queue };
}

/** A metrics sink that counts the final outcomes the handlers record (`FinalOutcomes`). */
function finalOutcomeCounter() {
  let finals = 0;
  const metrics: MetricsSink = {
    addMetric: (name, _unit, value) => {
      if (name === SERVICE_METRICS.finalOutcomes) finals += value;
    },
    hasStoredMetrics: () => false,
    publishStoredMetrics: () => undefined,
  };
  return { metrics, finals: () => finals };
}

/** A provider whose every lookup finds the message delivered after {@link LOOKUP_LATENCY_MS}. */
const slowDeliveredProvider: SmsProvider = {
  name: 'simulator',
  capabilities: TWILIO_CAPABILITIES,
  send: () => Promise.reject(new Error('the reconciler never sends')),
  lookup: async (ref) => {
    await new Promise((r) => setTimeout(r, LOOKUP_LATENCY_MS));
    return { kind: 'found', messageId: `SM${ref.idempotencyKey.slice(-8)}`, status: 'delivered' };
  },
};

/**
 * The scheduled pass and the reconcile worker as production composes them, over `table` and the
 * in-process queues; every other setting at its default, one pass per invocation (the bench
 * starts the passes itself whenever the queue runs low).
 */
async function composeDrain(
  endpoint: string,
  table: string,
  cipher: Cipher,
  queues: { dispatch: DispatchQueue; reconcile: DispatchQueue },
  metrics: MetricsSink,
) {
  const client = localDynamo(endpoint);
  const config = loadConfig(
    settingsEnv({ tableName: table, reconcileMaxItems: PASS_ITEMS, reconcilePassesPerRun: 1 }),
  );
  const parts = {
    store: new DynamoNotificationStore({ client, tableName: table, evidenceRetentionDays: 400 }),
    cipher,
    provider: slowDeliveredProvider,
    queue: queues.dispatch,
    clock: systemClock,
    logger: BENCH_LOGGER,
    metrics,
  };
  return {
    client,
    pass: await composeReconciler(config, parts, { reconcileQueue: queues.reconcile }),
    worker: await composeReconcileWorker(config, parts),
  };
}

interface DrainRun {
  readonly concurrency: number;
  readonly items: number;
  readonly ms: number;
  readonly itemsPerMinute: number;
  readonly passes: number;
  readonly duplicates: number;
  /** Per shard: items, mean and max time from the start to the first look (ms). */
  readonly shards: ReadonlyArray<{
    shard: number;
    items: number;
    meanFirstLookMs: number;
    maxFirstLookMs: number;
  }>;
  readonly fairness: number;
}

/** One drain of `count` fresh due items by `concurrency` workers (exported for smoke runs). */
export async function drainOnce(endpoint: string, count: number, concurrency: number): Promise<DrainRun> {
  const admin = localDynamo(endpoint);
  const table = await freshServiceTable(admin, `bench-drain-c${concurrency}`);
  const keys = benchKeys();
  const cipher = createLocalCipher(parseKey(keys.dataKey));
  try {
    progress(`drain: loading ${count} due items (concurrency ${concurrency})`);
    const shardOf = await load(admin, table, cipher, count);
    const dispatch = memoryQueue();
    const reconcile = memoryQueue();
    const drained = finalOutcomeCounter();
    const handlers = await composeDrain(
      endpoint,
      table,
      cipher,
      { dispatch: dispatch.queue, reconcile: reconcile.queue },
      drained.metrics,
    );
    const firstLook = new Map<string, number>();
    const done = drained.finals;
    let duplicates = 0;
    let passes = 0;
    const start = nowMs();
    let scanning: Promise<void> | undefined;
    const scan = () => {
      scanning ??= (async () => {
        passes++;
        await handlers.pass();
      })().finally(() => {
        scanning = undefined;
      });
      return scanning;
    };
    await scan();
    const giveUpAt = start + 30 * 60_000;
    const worker = async () => {
      while (done() < count) {
        if (nowMs() > giveUpAt) throw new Error(`drain: only ${done()}/${count} items reached a final state`);
        const message = reconcile.messages.shift();
        if (!message) {
          await scan();
          if (reconcile.messages.length === 0) await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        // Keep the queue fed before it runs dry (the schedule would tick meanwhile).
        if (reconcile.messages.length < concurrency * 4) scan().catch(() => undefined);
        const key = message.idempotencyKey;
        if (firstLook.has(key)) duplicates++;
        else firstLook.set(key, nowMs() - start);
        // A transient fault: the message comes back, as SQS delivers it again.
        if (redelivered(await handlers.worker(queueEvent(dispatchBodyOf(message))))) {
          reconcile.messages.push(message);
        }
      }
    };
    const ticker = setInterval(
      () =>
        progress(
          `drain: c${concurrency} ${done()}/${count} done, queue ${reconcile.messages.length}, ${passes} passes, ${duplicates} duplicate looks`,
        ),
      15_000,
    );
    try {
      await Promise.all(Array.from({ length: concurrency }, worker));
    } finally {
      clearInterval(ticker);
      // A pass still in flight must end before the table goes.
      await (scanning as Promise<void> | undefined)?.catch(() => undefined);
    }
    const ms = nowMs() - start;
    handlers.client.destroy();
    const shards = Array.from({ length: SHARDS }, (_, shard) => {
      const looks = [...firstLook.entries()].filter(([k]) => shardOf.get(k) === shard).map(([, t]) => t);
      return {
        shard,
        items: looks.length,
        meanFirstLookMs: round(looks.reduce((a, b) => a + b, 0) / Math.max(1, looks.length)),
        maxFirstLookMs: round(Math.max(0, ...looks)),
      };
    });
    const means = shards.map((s) => s.meanFirstLookMs);
    return {
      concurrency,
      items: count,
      ms: round(ms),
      itemsPerMinute: round((count / ms) * 60_000, 0),
      passes,
      duplicates,
      shards,
      fairness: round(Math.max(...means) / Math.min(...means), 3),
    };
  } finally {
    await admin.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
    admin.destroy();
  }
}

/** Runs the `drain` section. */
export async function runDrain(options: DrainOptions): Promise<SectionResult> {
  const count = options.quick ? 10_000 : 100_000;
  const runs: DrainRun[] = [];
  for (const [i, concurrency] of CONCURRENCIES.entries()) {
    // A fresh DynamoDB Local per run: it keeps deleted tables' pages in one SQLite database, and a
    // run on top of the previous run's 20,000 items measured the emulator's bloat, not the reconciler.
    const fresh = i === 0 ? undefined : await startDynamoDbLocal();
    let run: DrainRun;
    try {
      run = await drainOnce(fresh?.endpoint ?? options.endpoint, count, concurrency);
    } finally {
      await fresh?.stop();
    }
    progress(`drain: c${concurrency} ${run.itemsPerMinute} items/min, fairness ${run.fairness}`);
    runs.push(run);
  }
  const fairness = Math.max(...runs.map((r) => r.fairness));
  const rates = runs.map((r) => r.itemsPerMinute);
  const grows = rates.every((rate, i) => i === 0 || rate > (rates[i - 1] ?? 0));
  const figures: Record<string, number> = { 'drain.fairness': fairness, 'drain.items': count };
  for (const r of runs) figures[`drain.items_per_minute.c${r.concurrency}`] = r.itemsPerMinute;
  return {
    title: `drain: ${count.toLocaleString('en-US')} due items over ${SHARDS} shards`,
    tables: [
      {
        caption: `Fan-out reconciler on DynamoDB Local, lookup latency ${LOOKUP_LATENCY_MS} ms, ${PASS_ITEMS} entries per pass`,
        headers: [
          'workers',
          'drain s',
          'items/min',
          'passes',
          'duplicate looks',
          'mean first look per shard (s)',
          'fairness',
        ],
        rows: runs.map((r) => [
          String(r.concurrency),
          fmt(r.ms / 1000, 1),
          r.itemsPerMinute.toLocaleString('en-US'),
          String(r.passes),
          String(r.duplicates),
          r.shards.map((s) => `${s.shard}: ${fmt(s.meanFirstLookMs / 1000, 1)}`).join(', '),
          fmt(r.fairness, 3),
        ]),
      },
    ],
    notes: [
      'Each item: one strongly consistent GetItem, one lookup, one transition (command update + evidence put) to delivered; the scheduled pass reads each shard with an equal quota and keeps its cursor in the table.',
      "fairness = max/min over the shards of the mean time from the start of the drain to an item's first look.",
    ],
    targets: [
      {
        name: 'drain: throughput grows with concurrency (1 < 4 < 16)',
        target: 'growing',
        measured: rates.map((r) => r.toLocaleString('en-US')).join(' < '),
        met: grows,
      },
      {
        name: 'drain: fairness across shards',
        target: `<= ${FAIRNESS_TARGET}`,
        measured: fmt(fairness, 3),
        met: fairness <= FAIRNESS_TARGET,
      },
    ],
    figures,
    data: { count, lookupLatencyMs: LOOKUP_LATENCY_MS, passItems: PASS_ITEMS, runs },
  };
}
