import {
  type CloudWatchLogsClient,
  FilterLogEventsCommand,
  type FilterLogEventsCommandOutput,
} from '@aws-sdk/client-cloudwatch-logs';
import type { ProviderStatus } from '../../domain/provider.js';
import type { TokenBucket } from './rate-limit.js';

/**
 * SNS SMS delivery-status logs in CloudWatch Logs (`sns/<region>/<account>/DirectPublishToPhoneNumber`
 * and `.../Failure`), read only to learn the status of a message whose id SNS returned. Each line:
 *
 * ```
 * { "notification": { "messageId": "...", "timestamp": "2026-11-29 12:00:00.123" },
 *   "delivery": { "destination": "+14155550123", "smsType": "Transactional", ... },
 *   "status": "SUCCESS" | "FAILURE" }
 * ```
 *
 * What these logs cannot do, and this module never asks of them: they are written asynchronously
 * with no bound on the lag, success lines are sampled (DeliveryStatusSuccessSamplingRate), they are
 * account-wide and carry no caller reference. So a line is attributed only by its exact
 * `messageId`; no line is never read as "no message"; the destination is never read at all.
 */
export interface DeliveryLogOptions {
  readonly logs: CloudWatchLogsClient;
  readonly logGroups: readonly string[];
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Shared by every read of this process: keeps `FilterLogEvents` under the account quota. */
  readonly limiter: TokenBucket;
  /** A read that would wait longer than this for a token gives up (inconclusive, retried next pass). */
  readonly maxWaitMs: number;
  /** Upper bound of FilterLogEvents pages read per log group and batch. */
  readonly maxPages: number;
  /**
   * Longest wait for one `FilterLogEvents` answer; past it the call is aborted and the read is
   * inconclusive (`sns:logs_timeout`). Without it a call that is never answered holds a reconcile
   * worker, and every lookup batched with it, until the function times out.
   */
  readonly callTimeoutMs: number;
}

const TIMED_OUT = Symbol('timed out');

/** Allowance for clock skew between this container and SNS timestamps. */
export const LOG_SKEW_MS = 60_000;
/** `FilterLogEvents` `filterPattern` length limit. */
export const MAX_FILTER_PATTERN_CHARS = 1024;

/** The statuses the logs showed for the ids asked; ids without a line are simply absent from the map. */
export type DeliveryStatusRead =
  | { readonly kind: 'statuses'; readonly statuses: ReadonlyMap<string, ProviderStatus> }
  | {
      readonly kind: 'error';
      readonly detail: string;
      readonly statuses: ReadonlyMap<string, ProviderStatus>;
    };

/** A JSON filter pattern matching any of `ids` exactly, or undefined when one id alone is too long. */
export function messageIdPattern(ids: readonly string[]): string {
  return `{ ${ids.map((id) => `($.notification.messageId = ${JSON.stringify(id)})`).join(' || ')} }`;
}

/** Splits ids into groups whose filter pattern fits {@link MAX_FILTER_PATTERN_CHARS}. */
export function chunkForPatterns(ids: readonly string[]): string[][] {
  const chunks: string[][] = [];
  let current: string[] = [];
  for (const id of ids) {
    const candidate = [...current, id];
    if (current.length > 0 && messageIdPattern(candidate).length > MAX_FILTER_PATTERN_CHARS) {
      chunks.push(current);
      current = [id];
    } else {
      current = candidate;
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * One read for many message ids: per log group, one `FilterLogEvents` per pattern-sized chunk of
 * ids (usually one), each call drawing a token from the limiter. Only lines whose `messageId` is
 * one of `ids` count. A FAILURE line wins over a SUCCESS line for the same id.
 */
export async function readDeliveryStatuses(
  options: DeliveryLogOptions,
  ids: readonly string[],
  since: number,
): Promise<DeliveryStatusRead> {
  const wanted = new Set(ids);
  const statuses = new Map<string, ProviderStatus>();
  if (wanted.size === 0) return { kind: 'statuses', statuses };
  for (const group of options.logGroups) {
    for (const chunk of chunkForPatterns([...wanted])) {
      const scan = await scanGroup(options, group, since, messageIdPattern(chunk));
      if (scan.kind === 'missing_group') break; // e.g. `/Failure` before the first failure: no lines.
      for (const line of scan.kind === 'lines' ? scan.lines : scan.partial) {
        if (!wanted.has(line.messageId)) continue;
        if (statuses.get(line.messageId) !== 'undelivered') statuses.set(line.messageId, line.status);
      }
      if (scan.kind === 'error') return { kind: 'error', detail: scan.detail, statuses };
    }
  }
  return { kind: 'statuses', statuses };
}

interface DeliveryLine {
  readonly messageId: string;
  readonly status: ProviderStatus;
}

type Scan =
  | { readonly kind: 'lines'; readonly lines: readonly DeliveryLine[] }
  | { readonly kind: 'missing_group' }
  | { readonly kind: 'error'; readonly detail: string; readonly partial: readonly DeliveryLine[] };

async function scanGroup(
  options: DeliveryLogOptions,
  logGroupName: string,
  since: number,
  filterPattern: string,
): Promise<Scan> {
  const lines: DeliveryLine[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < options.maxPages; page += 1) {
    const waitMs = options.limiter.reserve(options.maxWaitMs);
    if (waitMs === Number.POSITIVE_INFINITY) {
      return { kind: 'error', detail: 'sns:logs_rate_limited', partial: lines };
    }
    if (waitMs > 0) await options.sleep(waitMs);
    let out: FilterLogEventsCommandOutput;
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    // The race answers at the deadline even if the transport ignores the abort signal.
    const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(() => {
        abort.abort();
        resolve(TIMED_OUT);
      }, options.callTimeoutMs);
    });
    try {
      const answer = await Promise.race([
        options.logs.send(
          new FilterLogEventsCommand({
            logGroupName,
            startTime: since - LOG_SKEW_MS,
            endTime: options.now() + LOG_SKEW_MS,
            filterPattern,
            ...(nextToken === undefined ? {} : { nextToken }),
          }),
          { abortSignal: abort.signal },
        ),
        deadline,
      ]);
      if (answer === TIMED_OUT) return { kind: 'error', detail: 'sns:logs_timeout', partial: lines };
      out = answer;
    } catch (error) {
      if (abort.signal.aborted) return { kind: 'error', detail: 'sns:logs_timeout', partial: lines };
      const name = (error as { name?: unknown } | null)?.name;
      if (name === 'ResourceNotFoundException') return { kind: 'missing_group' };
      const safe = typeof name === 'string' && /^[A-Za-z]{1,64}$/.test(name) ? name : 'error';
      return { kind: 'error', detail: `sns:logs_${safe}`, partial: lines };
    } finally {
      clearTimeout(timer);
    }
    for (const event of out.events ?? []) {
      const line = event.message === undefined ? undefined : parseLine(event.message);
      if (line !== undefined) lines.push(line);
    }
    nextToken = out.nextToken;
    if (nextToken === undefined) return { kind: 'lines', lines };
  }
  return { kind: 'error', detail: 'sns:logs_scan_limit', partial: lines };
}

/** Reads the id and the status of one line; the destination is never read. */
function parseLine(message: string): DeliveryLine | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  const record = parsed as { notification?: { messageId?: unknown }; status?: unknown } | null;
  const messageId = record?.notification?.messageId;
  if (typeof messageId !== 'string' || messageId === '') return undefined;
  // SUCCESS is "Message has been accepted by phone carrier": carrier acceptance, not delivery to
  // the handset (End User Messaging's TEXT_SUCCESSFUL, the same fact, is `sent` too).
  const status: ProviderStatus | undefined =
    record?.status === 'SUCCESS' ? 'sent' : record?.status === 'FAILURE' ? 'undelivered' : undefined;
  return status === undefined ? undefined : { messageId, status };
}
