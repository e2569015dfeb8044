/**
 * Section 2: DynamoDB capacity per notification, from the real use cases (admit, dispatch,
 * reconcile) on DynamoDB Local, with the store's `onCapacity` listener (what DynamoDB Local
 * returns for `ReturnConsumedCapacity`) and the AWS billing model next to it.
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
 * Reconciler steps are the reconcile worker's per-key work (`reconcileKey`); the scheduled pass's
 * fixed cost (shard queries, shard heads, cursor) is shared by every key of a pass, reported apart.
 * The provider is a fake that answers at once; a manual clock moves time to each due point.
 */
import { randomUUID } from 'node:crypto';
import { type ConsumedCapacity, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoNotificationStore } from '../shared/adapters/dynamodb/store.js';
import { createLocalCipher, parseKey } from '../shared/adapters/local-cipher.js';
import { applyReceipt } from '../shared/domain/dispatch.js';
import { createFingerprinter } from '../shared/domain/fingerprint.js';
import { deriveIdempotencyKey } from '../shared/domain/idempotency-key.js';
import type { NotificationRequest } from '../shared/domain/notification.js';
import { applyTransition } from '../shared/domain/notification.js';
import { DEFAULT_POLICY } from '../shared/domain/policy.js';
import type { LookupOutcome, SendOutcome } from '../shared/domain/provider.js';
import type { DispatchQueue } from '../shared/ports/queue.js';
import type { SmsProvider } from '../shared/ports/sms-provider.js';
import type { NotificationStore } from '../shared/ports/store.js';
import { TWILIO_CAPABILITIES } from '../shared/providers/twilio/provider.js';
import { admitNotification } from '../shared/usecases/admit-notification.js';
import { dispatchNotification } from '../shared/usecases/dispatch-notification.js';
import { reconcileKey } from '../shared/usecases/reconcile-key.js';
import { ManualClock } from '../test/support/manual-clock.js';
import { type CapacityEntry, CapacityRecorder, itemSize, totals } from './capacity-model.js';
import { fmt } from './stats.js';
import {
  BENCH_PHONE,
  benchKeys,
  freshServiceTable,
  localDynamo,
  progress,
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
/** Receipt grace of the receipt lifecycle (the default of RECEIPT_GRACE_SECONDS). */
const RECEIPT_GRACE_MS = 120_000;

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
  const store = labelled(realStore, recorder, () => actor);

  const keys = benchKeys();
  const cipher = createLocalCipher(parseKey(keys.dataKey));
  const fingerprinter = createFingerprinter(parseKey(keys.fingerprintKey));
  const clock = new ManualClock(Date.now());
  const policy = DEFAULT_POLICY;
  const eventId = `evt-${randomUUID()}`;
  const request: NotificationRequest = {
    idempotencyKey: deriveIdempotencyKey(eventId, 'sms', 'password_reset'),
    eventId,
    channel: 'sms',
    template: 'password_reset',
    locale: 'en',
    expiresAt: clock.now() + 10 * 60_000,
    sensitive: { phone: BENCH_PHONE, params: { code: '483920' } },
  };

  const admitted = await admitNotification(
    { store, cipher, fingerprinter, clock, policy, providerName: 'simulator' },
    request,
  );
  if (admitted.kind !== 'admitted') throw new Error(`admission: ${admitted.kind}`);
  // Read with the untracked client: these reads are the benchmark's, not the service's.
  const commandKey = { pk: { S: request.idempotencyKey }, sk: { S: 'CMD' } };
  const readRaw = async () =>
    (await admin.send(new GetItemCommand({ TableName: tableName, Key: commandKey, ConsistentRead: true })))
      .Item;
  const commandItemBytes = itemSize(await readRaw());

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
  const provider = fakeProvider(send, [...lookups]);

  actor = 'sender';
  clock.advance(10);
  const receiptGraceMs = lifecycle === 'receipt' ? RECEIPT_GRACE_MS : 0;
  await dispatchNotification(
    { store, cipher, provider, clock, policy, owner: 'bench-sender', receiptGraceMs },
    request.idempotencyKey,
  );

  if (lifecycle === 'receipt') {
    // What the receipts use case does with an authenticated delivery receipt: read, one guarded write.
    actor = 'receipt';
    clock.advance(2_000);
    const stored = await store.get(request.idempotencyKey);
    if (!stored) throw new Error('receipt: command missing');
    const intent = applyReceipt(
      stored.record,
      { attempt: 1, messageId, status: 'delivered' },
      clock.now(),
      policy,
    );
    if ('kind' in intent) throw new Error(`receipt ignored: ${intent.why}`);
    await store.transition(applyTransition(stored.record, intent));
  }

  actor = 'reconciler';
  const passes = lookups.length;
  for (let pass = 0; pass < passes; pass++) {
    // Jump to the record's due time: a status poll (sent) or the first unknown-outcome check.
    clock.advance(Math.max(policy.statusPollMs, policy.backoffBaseMs) + 1);
    await reconcileKey({ store, cipher, provider, queue: noQueue, clock, policy }, request.idempotencyKey);
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
