/**
 * The DynamoDB implementation of {@link ProviderHealth} (docs/providers/failover.md#circuit): one
 * control item per provider in the service's table, shared by every sender, so a brownout one
 * sender sees moves every sender within seconds. The rules are the domain's (`domain/circuit.ts`);
 * this adapter counts samples with atomic `ADD`s on the window's bucket, and applies state changes
 * with a write guarded by the circuit's version, so concurrent senders agree on one transition and
 * one probe. Health is advice: a fault here never fails a send (record logs and drops; a sender's
 * view falls back on what it read last, or closed; an observer's view fails).
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  afterSample,
  bucketOf,
  CIRCUIT_BUCKETS,
  type Circuit,
  type CircuitBucket,
  type CircuitChange,
  type CircuitSettings,
  type CircuitState,
  CLOSED_CIRCUIT,
  type HealthSample,
  letProbeThrough,
  observedState,
  probeDue,
  senderState,
} from '../../domain/circuit.js';
import type { EpochMs } from '../../domain/notification.js';
import type { CircuitView, ProviderHealth } from '../../ports/provider-health.js';
import { TableSchema } from './schema.js';

/**
 * Who reads: a `sender` acts on the view (its view may let the one probe through, a guarded
 * write); an `observer` (status command, console, metrics) only reads, and sees `half_open`
 * while a probe is due or out.
 */
export type HealthRole = 'sender' | 'observer';

/** How long a container reuses what it read of a circuit (a sender does not read it on every send). */
export const CIRCUIT_VIEW_CACHE_MS = 1_000;

/** What the adapter reports: faults it dropped, and the state changes it applied. */
export interface ProviderHealthEvents {
  /** A read or write failed (not a lost race): the sample was dropped, or the view fell back. */
  readonly onFault?: (detail: {
    readonly provider: string;
    readonly operation: string;
    readonly error: unknown;
  }) => void;
  /** This container's guarded write changed a circuit's state. */
  readonly onChange?: (detail: { readonly provider: string; readonly change: CircuitChange }) => void;
}

export interface DynamoProviderHealthOptions extends ProviderHealthEvents {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly settings: CircuitSettings;
  readonly role: HealthRole;
  /** Default {@link CIRCUIT_VIEW_CACHE_MS}. */
  readonly cacheMs?: number;
}

const { partitionKey: PK, sortKey: SK } = TableSchema;
const { prefix: CIRCUIT_PREFIX, sortKey: CIRCUIT_SK } = TableSchema.circuitKey;

/** The circuit item's key: one control item per provider, never in an index (no due or event attributes). */
export function circuitItemKey(provider: string): Record<string, string> {
  return { [PK]: `${CIRCUIT_PREFIX}${provider}`, [SK]: CIRCUIT_SK };
}

/** Top-level attributes of one ring slot (top level: `ADD` works on top-level attributes only). */
const slotAttributes = (slot: number) =>
  ({
    start: `b${slot}_start`,
    ok: `b${slot}_ok`,
    error: `b${slot}_error`,
    unknown: `b${slot}_unknown`,
  }) as const;

const STATES: ReadonlySet<string> = new Set<CircuitState>(['closed', 'open', 'half_open']);

/** The stored item as a {@link Circuit}; an absent or unreadable item is a closed circuit. */
export function circuitFromItem(item: Record<string, unknown> | undefined): Circuit {
  if (item === undefined) return CLOSED_CIRCUIT;
  const num = (name: string) => (typeof item[name] === 'number' ? (item[name] as number) : undefined);
  const buckets: CircuitBucket[] = [];
  for (let slot = 0; slot < CIRCUIT_BUCKETS; slot += 1) {
    const a = slotAttributes(slot);
    const start = num(a.start);
    if (start === undefined) continue;
    buckets.push({ start, ok: num(a.ok) ?? 0, error: num(a.error) ?? 0, unknown: num(a.unknown) ?? 0 });
  }
  const state =
    typeof item.state === 'string' && STATES.has(item.state) ? (item.state as CircuitState) : 'closed';
  const since = num('since');
  return {
    state,
    ...(state !== 'closed' && since !== undefined ? { since } : {}),
    countFrom: num('count_from') ?? 0,
    buckets,
    version: num('version') ?? 0,
  };
}

interface Cached {
  readonly circuit: Circuit;
  readonly readAt: EpochMs;
}

/** The DynamoDB {@link ProviderHealth}; build it with {@link createDynamoProviderHealth}. */
export class DynamoProviderHealth implements ProviderHealth {
  private readonly doc: DynamoDBDocumentClient;
  private readonly cache = new Map<string, Cached>();
  private readonly cacheMs: number;

  constructor(private readonly options: DynamoProviderHealthOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.cacheMs = options.cacheMs ?? CIRCUIT_VIEW_CACHE_MS;
  }

  async view(providers: readonly string[], now: EpochMs): Promise<readonly CircuitView[]> {
    return Promise.all(providers.map((provider) => this.viewOne(provider, now)));
  }

  async record(provider: string, sample: HealthSample, now: EpochMs): Promise<void> {
    try {
      const circuit = await this.count(provider, sample, now);
      if (circuit === undefined) return;
      this.remember(provider, circuit, now);
      const change = afterSample(circuit, sample, now, this.options.settings);
      if (change !== undefined) await this.change(provider, circuit, change, now);
    } catch (error) {
      this.options.onFault?.({ provider, operation: 'record', error });
    }
  }

  private async viewOne(provider: string, now: EpochMs): Promise<CircuitView> {
    const { settings, role } = this.options;
    const circuit = await this.read(provider, now);
    if (role === 'sender' && probeDue(circuit, now, settings)) {
      const probe = letProbeThrough(circuit, now, settings);
      const claimed = probe === undefined ? undefined : await this.change(provider, circuit, probe, now);
      // Only the container whose guarded write let the probe through sends it, once: its cache
      // now holds the half-open circuit, which it reads as open like everyone else.
      if (claimed !== undefined) return { provider, state: 'half_open', since: now };
    }
    const state = role === 'sender' ? senderState(circuit) : observedState(circuit, now, settings);
    return state === 'closed' || circuit.since === undefined
      ? { provider, state }
      : { provider, state, since: circuit.since };
  }

  /**
   * The circuit as read at most `cacheMs` ago. On a read fault a sender goes on with the last one
   * read (or closed: health is advice); an observer's read fails, as showing `closed` would lie.
   */
  private async read(provider: string, now: EpochMs): Promise<Circuit> {
    const cached = this.cache.get(provider);
    if (cached !== undefined && now >= cached.readAt && now - cached.readAt < this.cacheMs)
      return cached.circuit;
    try {
      const out = await this.doc.send(
        new GetCommand({
          TableName: this.options.tableName,
          Key: circuitItemKey(provider),
          ConsistentRead: true,
        }),
      );
      const circuit = circuitFromItem(out.Item);
      this.remember(provider, circuit, now);
      return circuit;
    } catch (error) {
      if (this.options.role === 'observer') throw error;
      this.options.onFault?.({ provider, operation: 'view', error });
      return cached?.circuit ?? CLOSED_CIRCUIT;
    }
  }

  private remember(provider: string, circuit: Circuit, now: EpochMs): void {
    this.cache.set(provider, { circuit, readAt: now });
  }

  /**
   * Counts one sample in `now`'s bucket and returns the circuit as stored after it: an `ADD` when
   * the slot holds `now`'s bucket, else a write that starts the bucket afresh over a stale one.
   * Undefined when the sample is older than its slot's bucket (this clock is behind a sender's that
   * already moved the slot on): it is dropped.
   */
  private async count(provider: string, sample: HealthSample, now: EpochMs): Promise<Circuit | undefined> {
    const { start, slot } = bucketOf(now, this.options.settings);
    const a = slotAttributes(slot);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const added = await this.guarded(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.options.tableName,
            Key: circuitItemKey(provider),
            UpdateExpression: 'ADD #count :one',
            ConditionExpression: '#start = :start',
            ExpressionAttributeNames: { '#count': a[sample], '#start': a.start },
            ExpressionAttributeValues: { ':one': 1, ':start': start },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      if (added !== undefined) return circuitFromItem(added.Attributes);
      const started = await this.guarded(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.options.tableName,
            Key: circuitItemKey(provider),
            UpdateExpression: 'SET #start = :start, #ok = :ok, #error = :error, #unknown = :unknown',
            ConditionExpression: 'attribute_not_exists(#start) OR #start < :start',
            ExpressionAttributeNames: {
              '#start': a.start,
              '#ok': a.ok,
              '#error': a.error,
              '#unknown': a.unknown,
            },
            ExpressionAttributeValues: {
              ':start': start,
              ':ok': sample === 'ok' ? 1 : 0,
              ':error': sample === 'error' ? 1 : 0,
              ':unknown': sample === 'unknown' ? 1 : 0,
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      if (started !== undefined) return circuitFromItem(started.Attributes);
      // Another sender started this bucket between our two writes: add to it (once more).
    }
    return undefined;
  }

  /**
   * Applies `change` if nobody changed the circuit since `circuit` was read (its version); returns
   * the circuit as stored after it, or undefined when another sender's change came first (it
   * decided on the same rules: its change stands, and the next view reads it).
   */
  private async change(
    provider: string,
    circuit: Circuit,
    change: CircuitChange,
    now: EpochMs,
  ): Promise<Circuit | undefined> {
    const guard =
      circuit.version === 0
        ? { ConditionExpression: 'attribute_not_exists(#version)' }
        : {
            ConditionExpression: '#version = :version',
            ExpressionAttributeValues: { ':version': circuit.version },
          };
    const update =
      change.to === 'closed'
        ? {
            UpdateExpression: 'SET #state = :state, #countFrom = :countFrom, #version = :next REMOVE #since',
            ExpressionAttributeNames: {
              '#state': 'state',
              '#countFrom': 'count_from',
              '#since': 'since',
              '#version': 'version',
            },
            values: { ':state': change.to, ':countFrom': change.countFrom, ':next': circuit.version + 1 },
          }
        : {
            UpdateExpression: 'SET #state = :state, #since = :since, #version = :next',
            ExpressionAttributeNames: { '#state': 'state', '#since': 'since', '#version': 'version' },
            values: { ':state': change.to, ':since': change.since, ':next': circuit.version + 1 },
          };
    const out = await this.guarded(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: circuitItemKey(provider),
          UpdateExpression: update.UpdateExpression,
          ConditionExpression: guard.ConditionExpression,
          ExpressionAttributeNames: update.ExpressionAttributeNames,
          ExpressionAttributeValues: { ...update.values, ...(guard.ExpressionAttributeValues ?? {}) },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (out === undefined) {
      // Lost the race: read again on the next view rather than act on what is now old.
      this.cache.delete(provider);
      return undefined;
    }
    const stored = circuitFromItem(out.Attributes);
    this.remember(provider, stored, now);
    this.options.onChange?.({ provider, change });
    return stored;
  }

  /** The write's answer, or undefined when its condition failed (a lost race, an expected outcome). */
  private async guarded<T>(write: () => Promise<T>): Promise<T | undefined> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }
}

/** The DynamoDB provider health over the service's table, for a sender or an observer. */
export function createDynamoProviderHealth(options: DynamoProviderHealthOptions): ProviderHealth {
  return new DynamoProviderHealth(options);
}
