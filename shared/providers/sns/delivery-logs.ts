import {
  type CloudWatchLogsClient,
  FilterLogEventsCommand,
  type FilterLogEventsCommandOutput,
} from '@aws-sdk/client-cloudwatch-logs';
import type { LookupOutcome, LookupRef, ProviderStatus } from '../../domain/provider.js';

/**
 * Lookup of SMS sent with SNS `Publish`, through the SNS SMS delivery-status logs in CloudWatch Logs
 * (`sns/<region>/<account>/DirectPublishToPhoneNumber` and `.../Failure`). Each log line is JSON:
 *
 * ```
 * { "notification": { "messageId": "...", "timestamp": "2026-11-29 12:00:00.123" },
 *   "delivery": { "destination": "+14155550123", "smsType": "Transactional", ... },
 *   "status": "SUCCESS" | "FAILURE" }
 * ```
 *
 * Delivery-status logging is an account setting (DeliveryStatusIAMRole and
 * DeliveryStatusSuccessSamplingRate = 100): without it, or with sampling below 100 %, an absence
 * in the logs proves nothing. The phone number is read from the logs only to compare its
 * fingerprint; it is never logged, put in a filter pattern, or returned.
 */
export interface DeliveryLogOptions {
  readonly logs: CloudWatchLogsClient;
  readonly logGroups: readonly string[];
  readonly fingerprint: (e164: string) => string;
  readonly now: () => number;
  /** Delivery logs lag the send; absence is only believed after this long. */
  readonly settleMs: number;
  /** Upper bound of FilterLogEvents pages read per log group and lookup. */
  readonly maxPages: number;
}

/** Allowance for clock skew between this container and SNS timestamps. */
const SKEW_MS = 60_000;

interface DeliveryLine {
  readonly messageId: string;
  readonly destination?: string;
  readonly publishedAt?: number;
  readonly status: ProviderStatus;
}

type Scan =
  | { readonly kind: 'lines'; readonly lines: readonly DeliveryLine[] }
  | { readonly kind: 'missing_group' }
  | { readonly kind: 'error'; readonly detail: string };

/** Finds the attempt `ref` describes: by message id when SNS returned one, else by destination and time. */
export async function lookupDelivery(options: DeliveryLogOptions, ref: LookupRef): Promise<LookupOutcome> {
  return ref.messageId === undefined ? byDestination(options, ref) : byMessageId(options, ref, ref.messageId);
}

async function byMessageId(
  options: DeliveryLogOptions,
  ref: LookupRef,
  messageId: string,
): Promise<LookupOutcome> {
  // SNS returned an id, so it accepted the message: it exists whatever the logs say.
  const pattern = `{ $.notification.messageId = ${JSON.stringify(messageId)} }`;
  for (const group of options.logGroups) {
    const scan = await scanGroup(options, group, ref.attemptStartedAt, pattern);
    if (scan.kind === 'lines') {
      const line = scan.lines.find((l) => l.messageId === messageId);
      if (line !== undefined) return { kind: 'found', messageId, status: line.status };
    }
  }
  return { kind: 'found', messageId, status: 'sent' };
}

async function byDestination(options: DeliveryLogOptions, ref: LookupRef): Promise<LookupOutcome> {
  const wanted = options.fingerprint(ref.to);
  const matches = new Map<string, DeliveryLine>();
  for (const group of options.logGroups) {
    const scan = await scanGroup(options, group, ref.attemptStartedAt, undefined);
    if (scan.kind === 'error') return { kind: 'inconclusive', detail: scan.detail };
    if (scan.kind === 'missing_group') {
      // SNS creates the `/Failure` group at the first failed delivery; any other missing group
      // means logging is not (yet) set up, so nothing can be concluded.
      if (group.endsWith('/Failure')) continue;
      return { kind: 'inconclusive', detail: 'sns:delivery_log_group_missing' };
    }
    for (const line of scan.lines) {
      if (line.destination === undefined || options.fingerprint(line.destination) !== wanted) continue;
      if (line.publishedAt !== undefined && line.publishedAt < ref.attemptStartedAt - SKEW_MS) continue;
      matches.set(line.messageId, line);
    }
  }
  const found = [...matches.values()];
  const [only] = found;
  if (found.length === 1 && only !== undefined)
    return { kind: 'found', messageId: only.messageId, status: only.status };
  // Another command to the same number in the window: SNS carries no client reference to tell them apart.
  if (found.length > 1) return { kind: 'inconclusive', detail: 'sns:ambiguous_destination_match' };
  if (options.now() - ref.attemptStartedAt < options.settleMs)
    return { kind: 'inconclusive', detail: 'sns:delivery_logs_settling' };
  return { kind: 'absent' };
}

async function scanGroup(
  options: DeliveryLogOptions,
  logGroupName: string,
  notBefore: number,
  filterPattern: string | undefined,
): Promise<Scan> {
  const lines: DeliveryLine[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < options.maxPages; page += 1) {
    let out: FilterLogEventsCommandOutput;
    try {
      out = await options.logs.send(
        new FilterLogEventsCommand({
          logGroupName,
          startTime: notBefore - SKEW_MS,
          endTime: options.now() + SKEW_MS,
          ...(filterPattern === undefined ? {} : { filterPattern }),
          ...(nextToken === undefined ? {} : { nextToken }),
        }),
      );
    } catch (error) {
      const name = (error as { name?: unknown } | null)?.name;
      if (name === 'ResourceNotFoundException') return { kind: 'missing_group' };
      return { kind: 'error', detail: `sns:logs_${typeof name === 'string' ? name : 'error'}` };
    }
    for (const event of out.events ?? []) {
      const line = event.message === undefined ? undefined : parseLine(event.message);
      if (line !== undefined) lines.push(line);
    }
    nextToken = out.nextToken;
    if (nextToken === undefined) return { kind: 'lines', lines };
  }
  return { kind: 'error', detail: 'sns:logs_scan_limit' };
}

function parseLine(message: string): DeliveryLine | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  const record = parsed as {
    notification?: { messageId?: unknown; timestamp?: unknown };
    delivery?: { destination?: unknown };
    status?: unknown;
  } | null;
  const messageId = record?.notification?.messageId;
  if (typeof messageId !== 'string' || messageId === '') return undefined;
  const status: ProviderStatus | undefined =
    record?.status === 'SUCCESS' ? 'delivered' : record?.status === 'FAILURE' ? 'undelivered' : undefined;
  if (status === undefined) return undefined;
  const destination = record?.delivery?.destination;
  const publishedAt = parseSnsTimestamp(record?.notification?.timestamp);
  return {
    messageId,
    status,
    ...(typeof destination === 'string' ? { destination } : {}),
    ...(publishedAt === undefined ? {} : { publishedAt }),
  };
}

/** SNS writes `2026-11-29 12:00:00.123` (UTC, no zone designator). */
function parseSnsTimestamp(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(value)
    ? `${value.replace(' ', 'T')}Z`
    : value;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : undefined;
}
