import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

export interface StreamPollerOptions {
  readonly dynamodb: DynamoDBClient;
  readonly streams: DynamoDBStreamsClient;
  readonly tableName: string;
  readonly handler: StreamHandler;
  readonly batchSize?: number;
  readonly idleMs?: number;
  /** Retries of a failing batch before it is skipped (Lambda's maximumRetryAttempts). */
  readonly maxRetries?: number;
  /** Chaos: deliver a batch twice with this probability (Lambda's at-least-once delivery). */
  readonly duplicateProbability?: number;
  readonly random?: () => number;
  readonly onError?: (error: unknown) => void;
}

interface ShardCursor {
  iterator: string | undefined;
  lastSequence?: string;
  retries: number;
  done: boolean;
}

/** Converts a DynamoDB Streams API record to the shape Lambda hands a stream handler. */
export function toLambdaRecord(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const d = record.dynamodb ?? {};
  const created = d.ApproximateCreationDateTime;
  return {
    eventID: record.eventID ?? '',
    eventName: record.eventName as DynamoDBRecord['eventName'],
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion ?? 'us-east-1',
    eventSourceARN: streamArn,
    dynamodb: {
      ...(d.Keys ? { Keys: d.Keys as never } : {}),
      ...(d.NewImage ? { NewImage: d.NewImage as never } : {}),
      ...(d.OldImage ? { OldImage: d.OldImage as never } : {}),
      ...(d.SequenceNumber ? { SequenceNumber: d.SequenceNumber } : {}),
      ...(d.SizeBytes !== undefined ? { SizeBytes: d.SizeBytes } : {}),
      StreamViewType: (d.StreamViewType ?? 'NEW_AND_OLD_IMAGES') as 'NEW_AND_OLD_IMAGES',
      ...(created ? { ApproximateCreationDateTime: Math.floor(new Date(created).getTime() / 1000) } : {}),
    },
  };
}

/**
 * Polls every shard of the table's stream and feeds the forwarder like Lambda's event source
 * mapping: in order per shard, checkpointed after success, a failed batch retried from the first
 * reported failure, then skipped after `maxRetries` (the on-failure destination is a log line).
 */
export function startStreamPoller(options: StreamPollerOptions): { stop(): Promise<void> } {
  const shards = new Map<string, ShardCursor>();
  let running = true;
  let streamArn: string | undefined;
  const random = options.random ?? Math.random;

  const discover = async () => {
    if (!streamArn) {
      const table = await options.dynamodb.send(new DescribeTableCommand({ TableName: options.tableName }));
      streamArn = table.Table?.LatestStreamArn;
      if (!streamArn) throw new Error(`table ${options.tableName} has no stream`);
    }
    let start: string | undefined;
    do {
      const out = await options.streams.send(
        new DescribeStreamCommand({
          StreamArn: streamArn,
          ...(start ? { ExclusiveStartShardId: start } : {}),
        }),
      );
      for (const shard of out.StreamDescription?.Shards ?? []) {
        if (!shard.ShardId || shards.has(shard.ShardId)) continue;
        const it = await options.streams.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: shard.ShardId,
            ShardIteratorType: 'TRIM_HORIZON',
          }),
        );
        shards.set(shard.ShardId, { iterator: it.ShardIterator, retries: 0, done: false });
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  };

  const invoke = async (records: DynamoDBRecord[]): Promise<string | undefined> => {
    // Returns the first sequence number to retry from, or undefined when the batch succeeded.
    try {
      const response = await options.handler({ Records: records });
      if (options.duplicateProbability && random() < options.duplicateProbability) {
        await options.handler({ Records: records });
      }
      const failures = (response?.batchItemFailures ?? []).map((f) => f.itemIdentifier);
      if (failures.length === 0) return undefined;
      const order = records.map((r) => r.dynamodb?.SequenceNumber);
      const first = failures
        .map((id) => order.indexOf(id))
        .filter((i) => i >= 0)
        .sort((a, b) => a - b)[0];
      return order[first ?? 0] ?? order[0];
    } catch (error) {
      options.onError?.(error);
      return records[0]?.dynamodb?.SequenceNumber;
    }
  };

  const pollShard = async (shardId: string, cursor: ShardCursor): Promise<number> => {
    if (!cursor.iterator || !streamArn) {
      cursor.done = true;
      return 0;
    }
    const out = await options.streams.send(
      new GetRecordsCommand({ ShardIterator: cursor.iterator, Limit: options.batchSize ?? 100 }),
    );
    const records = (out.Records ?? []).map((r) => toLambdaRecord(r, streamArn as string));
    if (records.length === 0) {
      cursor.iterator = out.NextShardIterator;
      if (!cursor.iterator) cursor.done = true;
      return 0;
    }
    const retryFrom = await invoke(records);
    if (retryFrom === undefined || cursor.retries >= (options.maxRetries ?? 10)) {
      if (retryFrom !== undefined)
        options.onError?.(new Error(`stream batch from ${retryFrom} skipped after retries`));
      cursor.retries = 0;
      cursor.iterator = out.NextShardIterator;
      if (!cursor.iterator) cursor.done = true;
      return records.length;
    }
    cursor.retries++;
    await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** cursor.retries)));
    const it = await options.streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ShardIteratorType: 'AT_SEQUENCE_NUMBER',
        SequenceNumber: retryFrom,
      }),
    );
    cursor.iterator = it.ShardIterator;
    return records.length;
  };

  const loop = (async () => {
    let lastDiscovery = 0;
    while (running) {
      try {
        if (Date.now() - lastDiscovery > 1000) {
          await discover();
          lastDiscovery = Date.now();
        }
        let handled = 0;
        for (const [id, cursor] of shards) if (!cursor.done) handled += await pollShard(id, cursor);
        if (handled === 0) await new Promise((r) => setTimeout(r, options.idleMs ?? 100));
      } catch (error) {
        options.onError?.(error);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  })();

  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}
