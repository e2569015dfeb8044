/**
 * What every benchmark section shares: DynamoDB Local clients and tables, keys, request bodies,
 * API Gateway v2 and SQS events, a quiet logger for composed handlers, and the shape of a
 * section's result.
 */

import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ensureTable } from '../local/resources.js';
import { toSqsRecord } from '../local/runtime/sqs-poller.js';
import type { DispatchMessageBody } from '../shared/messages/dispatch-body.js';

/** One target of the issue and whether this run met it. */
export interface TargetResult {
  readonly name: string;
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

/** What a section hands back to the runner: printable tables, raw data for the JSON, targets. */
export interface SectionResult {
  readonly title: string;
  readonly tables: ReadonlyArray<{
    readonly caption?: string;
    readonly headers: readonly string[];
    readonly rows: ReadonlyArray<readonly string[]>;
  }>;
  readonly notes: readonly string[];
  readonly targets: readonly TargetResult[];
  /** Named figures, printed as `FIGURE <name>=<value>` and written to the results JSON. */
  readonly figures?: Readonly<Record<string, number>>;
  readonly data: unknown;
}

/** The `FIGURE <name>=<value>` lines of a section (what scripts read off stdout). */
export function figureLines(section: Pick<SectionResult, 'figures'>): string[] {
  return Object.entries(section.figures ?? {}).map(([name, value]) => `FIGURE ${name}=${value}`);
}

/** A DynamoDB client for DynamoDB Local (any credentials). */
export function localDynamo(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

/** A fresh table with the service's schema (same GSIs as production). */
export async function freshServiceTable(client: DynamoDBClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, name);
  return name;
}

/** 32-byte keys as hex, like LOCAL_DATA_KEY and FINGERPRINT_KEY. */
export function benchKeys(): { dataKey: string; fingerprintKey: string } {
  return { dataKey: randomBytes(32).toString('hex'), fingerprintKey: randomBytes(32).toString('hex') };
}

/** The phone number used everywhere (a valid US number, as in the tests). */
export const BENCH_PHONE = '+14155550123';

/**
 * A source of distinct valid US numbers (`+1415` and seven digits from 2000000 on), one per call,
 * for sections that admit through the API with the destination budgets on (the AWS and local
 * default, `3/15m,10/24h`): each number is admitted once, so no budget refuses a request and the
 * figure is the cost of counting, not of refusing.
 */
export function distinctPhones(): () => string {
  let line = 0;
  return () => `+1415${2_000_000 + (line++ % 8_000_000)}`;
}

/** A valid `POST /v1/notifications` body with a fresh event id. */
export function requestBody(
  now = Date.now(),
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    event_id: `evt-${randomUUID()}`,
    channel: 'sms',
    template: 'password_reset',
    locale: 'en',
    destination: { phone: BENCH_PHONE },
    expires_at: new Date(now + 10 * 60_000).toISOString(),
    params: { code: '483920' },
    ...overrides,
  };
}

/** An API Gateway HTTP API (payload 2.0) event, as API Gateway builds it, for an in-process call. */
export function apiEvent(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): APIGatewayProxyEventV2 {
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'bench.local', 'content-type': 'application/json', ...headers },
    requestContext: {
      accountId: '000000000000',
      apiId: 'bench',
      domainName: 'bench.local',
      domainPrefix: 'bench',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(body === undefined ? {} : { body }),
    isBase64Encoded: false,
  };
}

/** The machine the figures came from (the doc must say). */
export interface MachineInfo {
  readonly cpuModel: string;
  readonly cpus: number;
  readonly nproc: string;
  readonly memTotalGiB: number;
  readonly memFreeGiB: number;
  readonly node: string;
  readonly java: string;
  readonly platform: string;
  readonly loadavg: readonly number[];
}

/** Collects CPU, memory, Node and Java versions and the load average at this moment. */
export function machineInfo(): MachineInfo {
  const run = (cmd: string, args: string[]) => {
    // `java -version` prints to stderr, so both streams are read.
    const out = spawnSync(cmd, args, { encoding: 'utf8' });
    return `${out.stdout ?? ''}${out.stderr ?? ''}`.trim() || 'unknown';
  };
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cpus: cpus().length,
    nproc: run('nproc', []),
    memTotalGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    memFreeGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    node: process.version,
    java: run('java', ['-version']).split('\n')[0] ?? 'unknown',
    platform: `${process.platform} ${process.arch}`,
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** Current 1-minute load average (the machine is shared: record what else was running). */
export function load1(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

/** The logger benchmarks hand `compose*`: the handlers' unhandled errors only, no line per item. */
export const BENCH_LOGGER = new Logger({ serviceName: 'reset-notifier-bench', logLevel: 'ERROR' });

/** One message as Lambda's SQS event source delivers it, with the body production's queues carry. */
export function queueEvent(body: DispatchMessageBody): SQSEvent {
  const message = { MessageId: randomUUID(), ReceiptHandle: randomUUID(), Body: JSON.stringify(body) };
  return { Records: [toSqsRecord(message, 'arn:aws:sqs:us-east-1:000000000000:bench')] };
}

/** Whether a queue handler asked for its (one) message back: a transient fault, as SQS would redeliver it. */
export function redelivered(response: SQSBatchResponse): boolean {
  return response.batchItemFailures.length > 0;
}

/** Sleeps. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Logs progress to stderr so stdout stays the report. */
export function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)} load ${load1()}] ${message}\n`);
}
