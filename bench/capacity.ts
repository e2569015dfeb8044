/**
 * Section 2: DynamoDB capacity per notification, from the handlers as production composes them
 * (`composeApi`, `composeSender`, `composeReceipts`, `composeReconcileWorker`) on DynamoDB Local,
 * with the store's `onCapacity` listener (what DynamoDB Local returns for `ReturnConsumedCapacity`)
 * and the AWS billing model next to it. Each handler is fed the event its AWS source delivers: an
 * API Gateway request, an SQS message of the queue body production writes, a signed Twilio status
 * callback.
 *
 * Lifecycles:
 * - happy: admit -> claim -> provider accepted (sent) -> reconciler status poll -> delivered;
 * - happy, 2 pending polls: the same, but the first two status polls still see `sent`
 *   (real delivery receipts take seconds; every pending poll is a reschedule write);
 * - timeout: admit -> claim -> provider timeout (dispatch_unknown) -> reconciler finds the
 *   message (sent) -> status poll -> delivered;
 * - receipt (issue 12): admit -> claim -> provider accepted (sent, first poll only after the
 *   receipt grace time) -> the provider's delivery receipt (strong read + one guarded transition)
 *   -> delivered; no status poll at all.
 * Reconciler steps are the reconcile worker's per-key work (one message per key); the scheduled
 * pass's fixed cost (shard queries, shard heads, cursor) is shared by every key of a pass, reported
 * apart. The provider is a fake that answers at once; a manual clock moves time to each due point.
 */
import { randomUUID } from 'node:crypto';
import { type AttributeValue, type ConsumedCapacity, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, SQSBatchResponse } from 'aws-lambda';
import { localContext } from '../local/runtime/lambda-context.js';
import { DynamoNotificationStore } from '../shared/adapters/dynamodb/store.js';
import { createLocalCipher, parseKey } from '../shared/adapters/local-cipher.js';
import {
  composeApi,
  composeReceipts,
  composeReconcileWorker,
  composeSender,
  type HandlerParts,
} from '../shared/composition/handlers.js';
import { loadConfig, type ServiceConfig } from '../shared/config.js';
import { createFingerprinter } from '../shared/domain/fingerprint.js';
import { deriveIdempotencyKey } from '../shared/domain/idempotency-key.js';
import { clientReference, type LookupOutcome, type SendOutcome } from '../shared/domain/provider.js';
import { TWILIO_RECEIPTS_PATH } from '../shared/handlers/receipts-handler.js';
import { twilioSignature } from '../shared/messages/twilio-status-callback.js';
import type { DispatchQueue } from '../shared/ports/queue.js';
import type { SmsProvider } from '../shared/ports/sms-provider.js';
import type { NotificationStore } from '../shared/ports/store.js';
import { TWILIO_CAPABILITIES } from '../shared/providers/twilio/provider.js';
import { settingsEnv } from '../shared/settings.js';
import { ManualClock } from '../test/support/manual-clock.js';
import { type CapacityEntry, CapacityRecorder, itemSize, totals } from './capacity-model.js';
import { fmt } from './stats.js';
import {
  apiEvent,
  BENCH_LOGGER,
  benchKeys,
  freshServiceTable,
  localDynamo,
  progress,
  queueEvent,
  redelivered,
  requestBody,
  type SectionResult,
} from './support.js';

/** Options of {@link runCapacity}. */
export interface CapacityOptions {
  readonly endpoint: string;
  readonly quick: boolean;
}

/**
 * Assumed on-demand list prices (us-east-1, per million request units) for the $ column only;
 * check the DynamoDB pricing page before quoting them.
 */
export const ASSUMED_PRICES = { writePerMillion: 0.625, readPerMillion: 0.125 } as const;

/** The happy-path target of the issue, in write capacity units. */
const HAPPY_WCU_TARGET = 12;

type Lifecycle = 'happy' | 'happy, 2 pending polls' | 'timeout' | 'receipt';
/** The Twilio account and auth token of the bench's status callbacks (not a well-known token). */
const BENCH_ACCOUNT_SID = `AC${'0'.repeat(32)}`;
const BENCH_AUTH_TOKEN = 'bench-capacity-auth-token';
/** The status-callback base the provider would hand Twilio: the URL the bench signs. */
const BENCH_CALLBACK_BASE = `https://bench.local${TWILIO_RECEIPTS_PATH}`;
/**
 * The settings of a lifecycle's handlers: every setting at its default but the table, destination
 * budgets off (the capacity of a notification, not of its destination's budget counters, which
 * the `budgets` section measures), and receipt grace only for the receipt lifecycle (the others
 * are status-polled as soon as the policy allows).
 */
function lifecycleConfig(tableName: string, lifecycle: Lifecycle): ServiceConfig {
  return loadConfig(
    settingsEnv({
      tableName,
      destinationLimits: 'off',
      ...(lifecycle === 'receipt' ? {} : { receiptGrace: 0 }),
      twilioAccountSid: BENCH_ACCOUNT_SID,
      twilioAuthToken: BENCH_AUTH_TOKEN,
      twilioStatusCallbackBase: BENCH_CALLBACK_BASE,
    }),
  );
}

/** The four handlers a notification goes through, as production composes them. */
async function composeHandlers(config: ServiceConfig, parts: HandlerParts) {
  return {
    api: await composeApi(config, parts),
    sender: await composeSender(config, parts, { owner: 'bench-sender' }),
    receipts: composeReceipts(config, parts),
    worker: await composeReconcileWorker(config, parts),
  };
}

function expectHandled(response: SQSBatchResponse, what: string): void {
  if (redelivered(response)) throw new Error(`${what}: the message failed`);
}

/** Twilio's `delivered` status callback for attempt 1 of `key`, signed as Twilio signs it. */
function deliveredCallback(key: string, messageId: string): APIGatewayProxyEventV2 {
  const query = new URLSearchParams({ client_reference: clientReference(key, 1) }).toString();
  const form = new URLSearchParams({
    MessageSid: messageId,
    MessageStatus: 'delivered',
    AccountSid: BENCH_ACCOUNT_SID,
  });
  const signature = twilioSignature(BENCH_AUTH_TOKEN, `${BENCH_CALLBACK_BASE}?${query}`, form);
  const event = apiEvent('POST', TWILIO_RECEIPTS_PATH, form.toString(), {
    'content-type': 'application/x-www-form-urlencoded',
    'x-twilio-signature': signature,
  });
  return { ...event, rawQueryString: query };
}

/** What the fake provider answers in a lifecycle: its send outcome and its lookups, in order. */
function providerScript(lifecycle: Lifecycle) {
  const messageId = `SM${randomUUID().replace(/-/g, '')}`;
  const send: SendOutcome =
    lifecycle === 'timeout'
      ? { kind: 'unknown', detail: 'timeout', timedOut: true }
      : { kind: 'accepted', messageId };
  const delivered: LookupOutcome = { kind: 'found', messageId, status: 'delivered' };
  const pending: LookupOutcome = { kind: 'found', messageId, status: 'sent' };
  const lookups: LookupOutcome[] =
    lifecycle === 'receipt'
      ? []
      : lifecycle === 'happy'
        ? [delivered]
        : lifecycle === 'timeout'
          ? [pending, delivered]
          : [pending, pending, delivered];
  return { messageId, send, lookups };
}

/** A fake provider: accepts (or times out) at once; lookups answer from a script. */
function fakeProvider(send: SendOutcome, lookups: LookupOutcome[]): SmsProvider {
  return {
    name: 'simulator',
    capabilities: TWILIO_CAPABILITIES,
    send: async () => send,
    lookup: async () => lookups.shift() ?? { kind: 'inconclusive', detail: 'script_exhausted' },
  };
}

const noQueue: DispatchQueue = { enqueue: async () => ({ failed: [] }) };

/** Labels each store call with the step it belongs to, so the recorder groups entries per step. */
function labelled(
  store: NotificationStore,
  recorder: CapacityRecorder,
  actor: () => string,
): NotificationStore {
  // Each call sets the label before its request goes out (calls are sequential here).
  const step = <T>(what: string, run: () => Promise<T>): Promise<T> => {
    recorder.phase = `${actor()}: ${what}`;
    return run();
  };
  return {
    admit: (record, evidence, sealed) =>
      step('admit (conditional put)', () => store.admit(record, evidence, sealed)),
    get: (key) => step('get (strong)', () => store.get(key)),
    evidence: (key) => step('evidence query', () => store.evidence(key)),
    byEvent: (eventId) => step('by-event query', () => store.byEvent(eventId)),
    transition: (applied) =>
      step(`${applied.previous.state} -> ${applied.next.state} (${applied.evidence.reason})`, () =>
        store.transition(applied),
      ),
    reschedule: (record, dueAt) => step('reschedule', () => store.reschedule(record, dueAt)),
    due: (now, limit, cursor) => step('due-index query', () => store.due(now, limit, cursor)),
    dueShardCount: store.dueShardCount,
    dueLanes: store.dueLanes,
    dueInShard: (shard, now, limit, cursor) =>
      step('due-index shard query', () => store.dueInShard(shard, now, limit, cursor)),
    oldestDue: (shard, now) => step('due-index oldest (Limit 1)', () => store.oldestDue(shard, now)),
    readReconcileCursor: () => step('cursor read', () => store.readReconcileCursor()),
    writeReconcileCursor: (version, shards) =>
      step('cursor write', () => store.writeReconcileCursor(version, shards)),
    markPoison: (key, at, schedule) => step('poison mark', () => store.markPoison(key, at, schedule)),
  };
}

interface LifecycleRun {
  readonly lifecycle: Lifecycle;
  readonly entries: readonly CapacityEntry[];
  /** DynamoDB Local's figures as the store's onCapacity listener received them. */
  readonly listener: ReadonlyArray<{ readonly op: string; readonly units: number }>;
  readonly finalState: string;
  readonly commandItemBytes: number;
}

async function runLifecycle(endpoint: string, lifecycle: Lifecycle): Promise<LifecycleRun> {
  const admin = localDynamo(endpoint);
  const tableName = await freshServiceTable(admin, `bench-cap-${lifecycle.replace(/[^a-z0-9]+/g, '-')}`);
  const recorder = new CapacityRecorder(admin);
  const client = localDynamo(endpoint);
  recorder.attach(client);
  const listener: Array<{ op: string; units: number }> = [];
  const onCapacity = (op: string, capacity: readonly ConsumedCapacity[]) =>
    listener.push({ op, units: capacity.reduce((n, c) => n + (c.CapacityUnits ?? 0), 0) });
  const realStore = new DynamoNotificationStore({
    client,
    tableName,
    evidenceRetentionDays: 400,
    onCapacity,
  });
  let actor = 'api';
  const keys = benchKeys();
  const clock = new ManualClock(Date.now());
  const config = lifecycleConfig(tableName, lifecycle);
  const { policy } = config;
  const script = providerScript(lifecycle);
  const handlers = await composeHandlers(config, {
    store: labelled(realStore, recorder, () => actor),
    cipher: createLocalCipher(parseKey(keys.dataKey)),
    fingerprinter: createFingerprinter(parseKey(keys.fingerprintKey)),
    clock,
    provider: fakeProvider(script.send, [...script.lookups]),
    queue: noQueue,
    logger: BENCH_LOGGER,
  });

  const body = requestBody(clock.now());
  const key = deriveIdempotencyKey(String(body.event_id), 'sms', 'password_reset');
  const admitted = await handlers.api(
    apiEvent('POST', '/v1/notifications', JSON.stringify(body)),
    localContext('api'),
  );
  if (admitted.statusCode !== 202) throw new Error(`admission: ${admitted.statusCode} ${admitted.body}`);
  // Read with the untracked client: these reads are the benchmark's, not the service's.
  const commandKey = { pk: { S: key }, sk: { S: 'CMD' } };
  const readRaw = async () =>
    (await admin.send(new GetItemCommand({ TableName: tableName, Key: commandKey, ConsistentRead: true })))
      .Item;
  const commandItemBytes = itemSize(await readRaw());
  // The body the forwarder (dispatch) or the scheduled pass (reconcile) puts on the queue.
  const messageBody = (item: Record<string, AttributeValue> | undefined, dueAt: boolean) => ({
    idempotency_key: key,
    version: Number(item?.version?.N ?? 0),
    ...(dueAt && item?.due_at?.N ? { due_at: Number(item.due_at.N) } : {}),
  });

  actor = 'sender';
  clock.advance(10);
  expectHandled(await handlers.sender(queueEvent(messageBody(await readRaw(), false))), 'dispatch');

  if (lifecycle === 'receipt') {
    actor = 'receipt';
    clock.advance(2_000);
    const answer = await handlers.receipts(deliveredCallback(key, script.messageId));
    if (answer.statusCode !== 200) throw new Error(`receipt: ${answer.statusCode}`);
  }

  actor = 'reconciler';
  for (let pass = 0; pass < script.lookups.length; pass++) {
    // Jump to the record's due time: a status poll (sent) or the first unknown-outcome check.
    clock.advance(Math.max(policy.statusPollMs, policy.backoffBaseMs) + 1);
    expectHandled(await handlers.worker(queueEvent(messageBody(await readRaw(), true))), 'reconcile');
  }

  const final = await readRaw();
  client.destroy();
  return {
    lifecycle,
    entries: [...recorder.entries],
    listener,
    finalState: String(final?.state?.S ?? 'missing'),
    commandItemBytes,
  };
}

/** Groups a run's entries by step, in order of first appearance. */
function steps(run: LifecycleRun) {
  const order: string[] = [];
  const groups = new Map<string, CapacityEntry[]>();
  for (const e of run.entries) {
    if (!groups.has(e.phase)) {
      groups.set(e.phase, []);
      order.push(e.phase);
    }
    groups.get(e.phase)?.push(e);
  }
  return order.map((phase) => {
    const list = groups.get(phase) ?? [];
    const t = totals(list);
    return {
      phase,
      requests: Object.entries(t.byOperation)
        .map(([op, n]) => `${op} x${n}`)
        .join(', '),
      reported: t.reported,
      modelWcu: t.modelWcu,
      modelRcu: t.modelRcu,
      detail: list.map((e) => e.detail).join(' | '),
    };
  });
}

/** Runs section 2. */
export async function runCapacity(options: CapacityOptions): Promise<SectionResult> {
  const runs: LifecycleRun[] = [];
  for (const lifecycle of ['happy', 'happy, 2 pending polls', 'timeout', 'receipt'] as const) {
    progress(`capacity: ${lifecycle} lifecycle`);
    const run = await runLifecycle(options.endpoint, lifecycle);
    if (run.finalState !== 'delivered') throw new Error(`${lifecycle} lifecycle ended ${run.finalState}`);
    runs.push(run);
  }
  // Writes and reads are told apart by operation: Local returns one aggregate figure per request.
  const isRead = (op: string) => op === 'GetItem' || op === 'Query' || op === 'Scan';
  const summary = runs.map((run) => {
    const reportedW = run.entries
      .filter((e) => !isRead(e.operation))
      .reduce((n, e) => n + (e.reported ?? 0), 0);
    const reportedR = run.entries
      .filter((e) => isRead(e.operation))
      .reduce((n, e) => n + (e.reported ?? 0), 0);
    const t = totals(run.entries);
    const listenerTotal = run.listener.reduce((n, l) => n + l.units, 0);
    const dollarsPerMillion =
      t.modelWcu * ASSUMED_PRICES.writePerMillion + t.modelRcu * ASSUMED_PRICES.readPerMillion;
    return { lifecycle: run.lifecycle, reportedW, reportedR, listenerTotal, ...t, dollarsPerMillion };
  });

  const stepRows = runs.flatMap((run) =>
    steps(run).map((s) => [
      run.lifecycle,
      s.phase,
      s.requests,
      fmt(s.reported, 1),
      fmt(s.modelWcu, 1),
      fmt(s.modelRcu, 1),
    ]),
  );
  const totalRows = summary.map((s) => [
    s.lifecycle,
    String(s.requests),
    fmt(s.reportedW, 1),
    fmt(s.reportedR, 1),
    fmt(s.listenerTotal, 1),
    fmt(s.modelWcu, 1),
    fmt(s.modelRcu, 1),
    fmt(s.dollarsPerMillion, 2),
  ]);
  const happy = summary.find((s) => s.lifecycle === 'happy');
  const receipt = summary.find((s) => s.lifecycle === 'receipt');
  const happyRun = runs.find((r) => r.lifecycle === 'happy');
  return {
    title: '2. DynamoDB capacity per notification',
    tables: [
      {
        caption: 'Per step (reported = DynamoDB Local ConsumedCapacity; model = AWS billing rules)',
        headers: ['lifecycle', 'step', 'requests', 'reported CU', 'model WCU', 'model RCU'],
        rows: stepRows,
      },
      {
        caption: 'Per lifecycle',
        headers: [
          'lifecycle',
          'requests',
          'reported WCU',
          'reported RCU',
          'onCapacity total',
          'model WCU',
          'model RCU',
          '$ per 1M (model)',
        ],
        rows: totalRows,
      },
    ],
    notes: [
      `Command item at admission: ${happyRun?.commandItemBytes ?? '?'} bytes (item size rules), projected in full (ProjectionType ALL) into both GSIs (by-event, due).`,
      'DynamoDB Local (3.x) does not bill like AWS: in a TransactWriteItems it doubles the index writes too (a claim reports table 4 + by-event 2 + due 4 = 10 units), and it reports 0 for a Query that returns nothing. The model applies the AWS rules: 2 WCU per KB for each transactional item on the base table only (index propagation is not transactional; measured against AWS in nubo-db/dynoxide#188), an index entry whose key changes costs a delete and a put, a Query that returns nothing costs the 0.5 RCU minimum.',
      "Reconciler steps are the reconcile worker's per-key work. The scheduled pass has a fixed cost shared by every key it enqueues: 4 shard queries and 4 shard-head queries (Limit 1; at least 0.5 RCU each), one strongly consistent cursor GetItem (1 RCU) and one cursor PutItem (1 WCU), whatever the number of due items.",
      `$ column: assumed on-demand prices of $${ASSUMED_PRICES.writePerMillion} per million write and $${ASSUMED_PRICES.readPerMillion} per million read request units (us-east-1); DynamoDB only, no Lambda, SQS or SMS.`,
    ],
    targets: [
      ...(happy
        ? [
            {
              name: 'happy-path write capacity (AWS model)',
              target: `<= ${HAPPY_WCU_TARGET} WCU`,
              measured: `${fmt(happy.modelWcu, 1)} WCU (DynamoDB Local reports ${fmt(happy.reportedW, 1)})`,
              met: happy.modelWcu <= HAPPY_WCU_TARGET,
            },
          ]
        : []),
      ...(receipt
        ? [
            {
              name: 'delivered with a receipt, write capacity (AWS model)',
              target: `<= ${HAPPY_WCU_TARGET} WCU`,
              measured: `${fmt(receipt.modelWcu, 1)} WCU, ${fmt(receipt.modelRcu, 1)} RCU (DynamoDB Local reports ${fmt(receipt.reportedW, 1)} / ${fmt(receipt.reportedR, 1)})`,
              met: receipt.modelWcu <= HAPPY_WCU_TARGET,
            },
          ]
        : []),
    ],
    figures: Object.fromEntries(
      summary.flatMap((s) => {
        const name = s.lifecycle.replace(/[^a-z0-9]+/g, '_');
        return [
          [`capacity.${name}.wcu`, s.modelWcu],
          [`capacity.${name}.rcu`, s.modelRcu],
        ];
      }),
    ),
    data: { runs: runs.map((r) => ({ ...r, steps: steps(r) })), summary, prices: ASSUMED_PRICES },
  };
}
