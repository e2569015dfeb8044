import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import {
  admissionEvidence,
  evidenceFromItem,
  type Item,
  RECORD_ATTRIBUTES,
  recordFromItem,
} from '../../adapters/dynamodb/item-mapping.js';
import { INDEXED_RECORD_ATTRIBUTES, TableSchema } from '../../adapters/dynamodb/schema.js';
import type { EvidenceRecord } from '../../domain/notification.js';
import type { NotificationState } from '../../domain/states.js';
import { toEvidenceView } from '../../usecases/view.js';
import { type ExportRow, toExportRow } from './schema.js';

/** Which evidence records to export. `fromMs` inclusive, `toMs` exclusive. */
export interface EvidenceQuery {
  readonly fromMs: number;
  readonly toMs: number;
  readonly eventId?: string;
  /** Only records whose `to_state` is this state. */
  readonly state?: NotificationState;
  /** Items read per request (DynamoDB `Limit`): bounds memory and request size. */
  readonly pageSize: number;
}

/** One page read from the table: the matching rows, and how much was read to find them. */
export interface SourcePage {
  readonly rows: readonly ExportRow[];
  readonly itemsRead: number;
  /** Items that could not be read back as evidence (reported, never silently dropped). */
  readonly corrupt: number;
}

/** Pages of evidence rows in no particular order. */
export interface EvidenceSource {
  pages(query: EvidenceQuery): AsyncIterable<SourcePage>;
}

const { partitionKey: PK, sortKey: SK, commandSortKey: CMD, evidencePrefix: EV, byEventIndex } = TableSchema;

/**
 * Attributes read from the table: what evidence and the seq-1 admission record need. The sealed
 * payload (encrypted phone and params) is never even fetched.
 */
const PROJECTED = [
  ...new Set([
    PK,
    SK,
    ...Object.values(RECORD_ATTRIBUTES),
    'provider_name',
    'provider_message_id',
    'seq',
    'at',
    'from_state',
    'to_state',
    'attempt',
    'reason',
    'actor',
    'provider',
  ]),
];

/** On the `by-event` index only command items exist, and only their record attributes are projected. */
const PROJECTED_ON_INDEX = PROJECTED.filter(
  (attribute) =>
    attribute === PK ||
    attribute === SK ||
    attribute === byEventIndex.sortKey ||
    (INDEXED_RECORD_ATTRIBUTES as readonly string[]).includes(attribute),
);

function projection(attributes: readonly string[] = PROJECTED): {
  expression: string;
  names: Record<string, string>;
} {
  const names: Record<string, string> = {};
  const parts = attributes.map((attribute, i) => {
    names[`#p${i}`] = attribute;
    return `#p${i}`;
  });
  return { expression: parts.join(', '), names };
}

/** Evidence of one item: the stored record, or the admission record read off a command item. */
function evidenceOf(item: Item): EvidenceRecord {
  return item[SK] === CMD ? admissionEvidence(recordFromItem(item)) : evidenceFromItem(item);
}

function matches(evidence: EvidenceRecord, query: EvidenceQuery): boolean {
  return (
    evidence.at >= query.fromMs &&
    evidence.at < query.toMs &&
    (query.state === undefined || evidence.toState === query.state) &&
    (query.eventId === undefined || evidence.eventId === query.eventId)
  );
}

function toPage(items: readonly Item[], query: EvidenceQuery): SourcePage {
  const rows: ExportRow[] = [];
  let corrupt = 0;
  for (const item of items) {
    let evidence: EvidenceRecord;
    try {
      evidence = evidenceOf(item);
    } catch {
      corrupt++;
      continue;
    }
    // The filter expression already selected these; checking again keeps the contract local.
    if (matches(evidence, query)) rows.push(toExportRow(toEvidenceView(evidence)));
  }
  return { rows, itemsRead: items.length, corrupt };
}

/**
 * Reads evidence straight from the table. Without `eventId` it is a paginated Scan, filtered
 * server-side to evidence items (`sk` begins with `EV#`) and command items (for the admission
 * record) inside the time range; with `eventId` it uses the `by-event` index and one Query per key.
 */
export function createDynamoEvidenceSource(client: DynamoDBClient, tableName: string): EvidenceSource {
  const doc = DynamoDBDocumentClient.from(client);
  const proj = projection();
  const indexProj = projection(PROJECTED_ON_INDEX);

  async function* scan(query: EvidenceQuery): AsyncGenerator<SourcePage> {
    const names: Record<string, string> = { ...proj.names, '#sk': SK, '#at': 'at' };
    const values: Record<string, unknown> = { ':ev': EV, ':from': query.fromMs, ':to': query.toMs };
    let evidenceFilter = 'begins_with(#sk, :ev) AND #at >= :from AND #at < :to';
    if (query.state !== undefined) {
      names['#to'] = 'to_state';
      values[':state'] = query.state;
      evidenceFilter += ' AND #to = :state';
    }
    let filter = evidenceFilter;
    // The admission record (read off the command item) always enters `accepted`.
    if (query.state === undefined || query.state === 'accepted') {
      names['#created'] = 'created_at';
      values[':cmd'] = CMD;
      filter = `(${evidenceFilter}) OR (#sk = :cmd AND #created >= :from AND #created < :to)`;
    }
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await doc.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: filter,
          ProjectionExpression: proj.expression,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          Limit: query.pageSize,
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      const page = toPage(out.Items ?? [], query);
      yield { ...page, itemsRead: out.ScannedCount ?? page.itemsRead };
      startKey = out.LastEvaluatedKey;
    } while (startKey);
  }

  async function* queryAll(
    input: ConstructorParameters<typeof QueryCommand>[0],
    pageSize: number,
  ): AsyncGenerator<Item[]> {
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await doc.send(
        new QueryCommand({ ...input, Limit: pageSize, ...(startKey ? { ExclusiveStartKey: startKey } : {}) }),
      );
      yield out.Items ?? [];
      startKey = out.LastEvaluatedKey;
    } while (startKey);
  }

  async function* byEvent(query: EvidenceQuery, eventId: string): AsyncGenerator<SourcePage> {
    const commands = queryAll(
      {
        TableName: tableName,
        IndexName: byEventIndex.name,
        KeyConditionExpression: '#e = :e',
        ProjectionExpression: indexProj.expression,
        ExpressionAttributeNames: { ...indexProj.names, '#e': byEventIndex.partitionKey },
        ExpressionAttributeValues: { ':e': eventId },
      },
      query.pageSize,
    );
    for await (const commandPage of commands) {
      yield toPage(commandPage, query);
      for (const command of commandPage) {
        const partition = queryAll(
          {
            TableName: tableName,
            KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :ev)',
            ProjectionExpression: proj.expression,
            ExpressionAttributeNames: { ...proj.names, '#pk': PK, '#sk': SK },
            ExpressionAttributeValues: { ':pk': command[PK], ':ev': EV },
          },
          query.pageSize,
        );
        for await (const items of partition) yield toPage(items, query);
      }
    }
  }

  return {
    pages: (query) => (query.eventId === undefined ? scan(query) : byEvent(query, query.eventId)),
  };
}
