/**
 * Section 5: end-to-end latency on the local runtime, from the POST to the provider simulator
 * accepting the message: HTTP server -> API handler -> PutItem -> stream poller -> forwarder ->
 * SQS (fauxqs) -> SQS poller -> sender (get, claim, Twilio-compatible call) -> simulator ledger.
 * Latency per event = the ledger's `accepted_at` minus the wall-clock time just before the POST
 * (same process, same clock).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { startLocalStack } from '../local/stack.js';
import { fmt, nowMs, percentile, round, runPool, summarize } from './stats.js';
import { distinctPhones, progress, requestBody, type SectionResult, sleep } from './support.js';

/** Options of {@link runE2e}. */
export interface E2eOptions {
  /** DynamoDB Local to reuse (a fresh table is created on it). */
  readonly endpoint: string;
  readonly quick: boolean;
}

/** The local runtime's poll settings (local/runtime/*.ts and local/stack.ts defaults). */
export const POLL_SETTINGS = {
  streamPollerIdleMs: 100,
  streamShardDiscoveryMs: 1_000,
  streamBatchSize: 100,
  sqsWaitTimeSeconds: 1,
  sqsBatchSize: 10,
  senderConcurrency: 4,
  reconcileIntervalMs: 1_000,
} as const;

interface LedgerEntry {
  readonly client_reference: string | null;
  readonly accepted_at: string;
}

/** Runs section 5. */
export async function runE2e(options: E2eOptions): Promise<SectionResult> {
  const events = options.quick ? 100 : 500;
  const concurrency = 4;
  // Every DynamoDB request the handlers make is timed: on one machine, DynamoDB Local is the shared resource.
  const dynamoMs: Record<string, number[]> = {};
  let recording = false;
  const stack = await startLocalStack({
    dynamodbEndpoint: options.endpoint,
    tableName: `bench-e2e-${Date.now().toString(36)}`,
    apiPort: 0,
    simPort: 0,
    reconcileIntervalMs: POLL_SETTINGS.reconcileIntervalMs,
    senderConcurrency: POLL_SETTINGS.senderConcurrency,
    // Warnings and errors (e.g. the cause of a 500) go to stderr with the progress lines.
    logger: new Logger({ serviceName: 'reset-notifier-bench', logLevel: 'WARN' }),
    wrapDynamoClient: (client) =>
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const start = nowMs();
          try {
            return await next(args);
          } finally {
            if (recording) {
              const name = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
              const list = dynamoMs[name] ?? [];
              list.push(nowMs() - start);
              dynamoMs[name] = list;
            }
          }
        },
        { step: 'finalizeRequest', name: 'benchTimeDynamo' },
      ),
  });
  try {
    // The stack runs with the default destination budgets (3 per 15 minutes per number): every
    // POST goes to a number of its own, so none is refused (429) and the figure is the pipeline's.
    const phone = distinctPhones();
    // Warm-up: a few events through the whole pipeline (JIT, sockets, stream shard discovery).
    for (let i = 0; i < 5; i++) await post(stack.apiUrl, phone());
    await waitForLedger(stack.simUrl, 5, 30_000);
    await fetch(`${stack.simUrl}/_sim/reset`, { method: 'POST' });

    progress(`e2e: ${events} events at concurrency ${concurrency}`);
    const postedAt = new Map<string, number>();
    const retries = { count: 0 };
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    recording = true;
    const httpMs: number[] = [];
    const startWall = Date.now();
    const start = nowMs();
    await runPool(events, concurrency, async () => {
      const at = Date.now();
      const t = nowMs();
      const key = await post(stack.apiUrl, phone(), retries);
      httpMs.push(nowMs() - t);
      postedAt.set(key, at);
    });
    const postSeconds = (nowMs() - start) / 1000;
    const ledger = await waitForLedger(stack.simUrl, events, 120_000);
    recording = false;
    loopDelay.disable();
    const latencies: number[] = [];
    let lastAccepted = startWall;
    for (const entry of ledger) {
      const key = entry.client_reference?.replace(/#\d+$/, '');
      const at = key === undefined ? undefined : postedAt.get(key);
      if (at === undefined) continue;
      const accepted = Date.parse(entry.accepted_at);
      latencies.push(accepted - at);
      lastAccepted = Math.max(lastAccepted, accepted);
    }
    if (latencies.length !== events)
      throw new Error(`matched ${latencies.length} of ${events} ledger entries`);
    const e2e = summarize(latencies);
    const http = summarize(httpMs);
    const rows = [
      [
        'POST /v1/notifications (HTTP, local server)',
        fmt(http.p50),
        fmt(http.p90),
        fmt(http.p99),
        fmt(http.max),
      ],
      ['admission -> provider accept', fmt(e2e.p50), fmt(e2e.p90), fmt(e2e.p99), fmt(e2e.max)],
    ];
    const drainSeconds = (lastAccepted - startWall) / 1000;
    const dynamoRows = Object.entries(dynamoMs)
      .sort((x, y) => y[1].length - x[1].length)
      .map(([op, list]) => {
        const s = summarize(list);
        return [op, String(s.n), fmt(s.p50), fmt(s.p99)];
      });
    const loop = {
      p50: loopDelay.percentile(50) / 1e6,
      p99: loopDelay.percentile(99) / 1e6,
      max: loopDelay.max / 1e6,
    };
    return {
      title: '5. End-to-end latency on the local runtime',
      tables: [
        {
          caption: `${events} events, ${concurrency} concurrent clients (ms)`,
          headers: ['span', 'p50', 'p90', 'p99', 'max'],
          rows,
        },
        {
          caption: 'DynamoDB Local latency seen by the handlers during the run (ms)',
          headers: ['request', 'n', 'p50', 'p99'],
          rows: dynamoRows,
        },
      ],
      notes: [
        `Client retries after a 5xx: ${retries.count}. Event loop delay of this process (API server, pollers, fauxqs, simulator): p50 ${fmt(loop.p50, 1)} ms, p99 ${fmt(loop.p99, 1)} ms, max ${fmt(loop.max, 1)} ms.`,
        `Throughput: ${events} POSTs in ${fmt(postSeconds, 1)} s (${fmt(events / postSeconds, 0)}/s); the last message was accepted ${fmt(drainSeconds, 1)} s after the first POST.`,
        `Poll intervals: stream poller sleeps ${POLL_SETTINGS.streamPollerIdleMs} ms only after a sweep of all shards found no records (shards rediscovered every ${POLL_SETTINGS.streamShardDiscoveryMs} ms, GetRecords limit ${POLL_SETTINGS.streamBatchSize}); SQS poller: ${POLL_SETTINGS.senderConcurrency} workers, ReceiveMessage long poll WaitTimeSeconds=${POLL_SETTINGS.sqsWaitTimeSeconds}, up to ${POLL_SETTINGS.sqsBatchSize} messages per batch; reconciler timer every ${POLL_SETTINGS.reconcileIntervalMs} ms (not on this path). In AWS the equivalents are Lambda's event source mappings (DynamoDB Streams polled about 4 times a second per shard; SQS long polling).`,
        'The same DynamoDB Local serves the stack (fresh table); fauxqs and the simulator run in this process, so the pipeline shares 2 vCPUs with DynamoDB Local and the benchmark itself.',
      ],
      targets: [],
      data: {
        events,
        concurrency,
        e2e,
        http,
        latencies: latencies.map((l) => round(l, 1)),
        p95: percentile(latencies, 95),
        postSeconds,
        drainSeconds,
        poll: POLL_SETTINGS,
      },
    };
  } finally {
    await stack.stop();
  }
}

/** Retries after a 5xx with the same body, as a client should: the key makes it safe. */
async function post(
  apiUrl: string,
  phone: string,
  retries: { count: number } = { count: 0 },
): Promise<string> {
  const payload = JSON.stringify(requestBody(Date.now(), { destination: { phone } }));
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${apiUrl}/v1/notifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
    const body = (await response.json()) as { idempotency_key?: string };
    if ((response.status === 202 || response.status === 200) && body.idempotency_key)
      return body.idempotency_key;
    if (response.status < 500 || attempt >= 3) {
      throw new Error(`POST returned ${response.status}: ${JSON.stringify(body).slice(0, 200)}`);
    }
    retries.count++;
    await sleep(100 * (attempt + 1));
  }
}

async function waitForLedger(simUrl: string, count: number, timeoutMs: number): Promise<LedgerEntry[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = (await (await fetch(`${simUrl}/_sim/messages`)).json()) as { messages: LedgerEntry[] };
    if (body.messages.length >= count) return body.messages;
    if (Date.now() > deadline)
      throw new Error(`only ${body.messages.length} of ${count} messages accepted in time`);
    await sleep(250);
  }
}
