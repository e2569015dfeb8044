import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ScanCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createTableInput, TableSchema } from '../shared/adapters/dynamodb/schema.js';

/** Creates the table (idempotently) with TTL enabled, from the same schema the CDK stack uses. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  for (let i = 0; i < 100; i++) {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (out.Table?.TableStatus === 'ACTIVE') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { Enabled: true, AttributeName: TableSchema.ttlAttribute },
      }),
    );
  } catch {
    // Already enabled (a restart with --data-dir).
  }
}

export interface QueueSettings {
  readonly visibilityTimeoutSeconds: number;
  readonly maxReceiveCount: number;
}

/** Creates the dispatch queue and its DLQ with a redrive policy; returns both URLs. */
export async function ensureQueues(
  client: SQSClient,
  baseName: string,
  settings: QueueSettings,
): Promise<{ queueUrl: string; dlqUrl: string }> {
  const dlq = await client.send(new CreateQueueCommand({ QueueName: `${baseName}-dlq` }));
  const dlqUrl = dlq.QueueUrl ?? '';
  const attrs = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
  );
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: baseName,
      Attributes: {
        VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: attrs.Attributes?.QueueArn,
          maxReceiveCount: settings.maxReceiveCount,
        }),
      },
    }),
  );
  return { queueUrl: queue.QueueUrl ?? '', dlqUrl };
}

/**
 * Every item of a (local) table, unmarshalled, read strongly. For checks over a whole test or chaos
 * table ("nothing stored", PII scans, evidence replay); never used on a production-sized table.
 */
export async function scanTable(
  client: DynamoDBClient,
  tableName: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, never> | undefined;
  do {
    const out = await client.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(out.Items ?? []).map((i) => unmarshall(i)));
    start = out.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start);
  return items;
}
