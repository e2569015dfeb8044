import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { parseDispatchBody } from '../adapters/sqs/dispatch-queue.js';
import type { Clock } from '../domain/clock.js';
import type { NotificationStore } from '../ports/store.js';
import { formatAge, type TextOut, table, writeJson } from './output.js';
import { holdEachOnce, inBatches } from './queue-hold.js';

/** What the DLQ commands need. `store` is optional: with it, each message shows its key's current state. */
export interface DlqDeps {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly out: TextOut;
  readonly clock: Clock;
  readonly store?: Pick<NotificationStore, 'get'>;
  /** How long listed messages stay hidden before they are released again. @default 60 */
  readonly holdSeconds?: number;
  /** Long-poll wait per receive; the listing ends at the first empty receive. @default 1 */
  readonly waitSeconds?: number;
}

/** One DLQ message as the commands show it. */
export interface DlqEntry {
  readonly message_id: string;
  readonly sent_at: string | null;
  readonly age_seconds: number | null;
  readonly receive_count: number | null;
  /** `null` when the body is not a dispatch message (shown, never redriven). */
  readonly idempotency_key: string | null;
  readonly version: number | null;
  /** The key's current state, when the store was available. */
  readonly state?: string | null;
  readonly body: string;
}

interface Held {
  readonly message: Message;
  readonly entry: DlqEntry;
}

async function describe(deps: DlqDeps, message: Message): Promise<DlqEntry> {
  const body = message.Body ?? '';
  const parsed = parseDispatchBody(body);
  const sent = Number(message.Attributes?.SentTimestamp);
  const receives = Number(message.Attributes?.ApproximateReceiveCount);
  let state: string | null | undefined;
  if (deps.store && parsed) state = (await deps.store.get(parsed.idempotency_key))?.record.state ?? null;
  return {
    message_id: message.MessageId ?? '',
    sent_at: Number.isFinite(sent) ? new Date(sent).toISOString() : null,
    age_seconds: Number.isFinite(sent) ? Math.max(0, Math.round((deps.clock.now() - sent) / 1000)) : null,
    receive_count: Number.isFinite(receives) ? receives : null,
    idempotency_key: parsed?.idempotency_key ?? null,
    version: parsed?.version ?? null,
    ...(state === undefined ? {} : { state }),
    body,
  };
}

/**
 * Receives every message currently in the DLQ (up to `max`), hiding each for `holdSeconds` so a
 * message is seen once. The caller releases or deletes them. If the CLI dies midway, the
 * messages simply reappear after the hold.
 */
async function holdAll(deps: DlqDeps, max: number): Promise<Held[]> {
  const messages = await holdEachOnce({ ...deps, queueUrl: deps.dlqUrl, systemAttributes: ['All'] }, max);
  const held: Held[] = [];
  for (const message of messages) held.push({ message, entry: await describe(deps, message) });
  return held;
}

/** Makes held messages visible again at once. */
async function release(deps: DlqDeps, held: readonly Held[]): Promise<void> {
  await inBatches(held, async (batch) => {
    await deps.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: deps.dlqUrl,
        Entries: batch.map((h, i) => ({
          Id: String(i),
          ReceiptHandle: h.message.ReceiptHandle ?? '',
          VisibilityTimeout: 0,
        })),
      }),
    );
  });
}

function render(entries: readonly DlqEntry[]): string {
  return table([
    ['message_id', 'sent_at', 'age', 'receives', 'idempotency_key', 'version', 'state'],
    ...entries.map((e) => [
      e.message_id,
      e.sent_at ?? '-',
      e.age_seconds === null ? '-' : formatAge(e.age_seconds),
      e.receive_count === null ? '-' : String(e.receive_count),
      e.idempotency_key ?? '(not a dispatch message)',
      e.version === null ? '-' : String(e.version),
      e.state === undefined ? '-' : (e.state ?? '(no such key)'),
    ]),
  ]);
}

/** `reset-notifier dlq list`: shows what is in the DLQ without removing anything. */
export async function runDlqList(
  deps: DlqDeps,
  options: { readonly json?: boolean; readonly max?: number },
): Promise<DlqEntry[]> {
  const held = await holdAll(deps, options.max ?? 1000);
  await release(deps, held);
  const entries = held.map((h) => h.entry);
  if (options.json) writeJson(deps.out, { dlq_url: deps.dlqUrl, count: entries.length, messages: entries });
  else if (entries.length === 0) deps.out.write(`DLQ ${deps.dlqUrl} is empty\n`);
  else deps.out.write(`DLQ ${deps.dlqUrl}: ${entries.length} message(s)\n${render(entries)}\n`);
  return entries;
}

/** What a redrive did (or, with `--dry-run`, would do). */
export interface RedriveReport {
  readonly dry_run: boolean;
  readonly moved: readonly DlqEntry[];
  /** Not dispatch messages: left in the DLQ for a person to look at. */
  readonly skipped: readonly DlqEntry[];
  readonly failed: readonly DlqEntry[];
}

/**
 * `reset-notifier dlq redrive [--dry-run]`: sends each dispatch message back to the dispatch
 * queue, unchanged, then deletes it from the DLQ. Safe to repeat: the sender re-reads the command
 * and claims it under a guarded write, so a key that already went out is not sent again.
 * A message is deleted only after its copy is on the dispatch queue (at-least-once, never lost).
 */
export async function runDlqRedrive(
  deps: DlqDeps,
  options: { readonly dryRun?: boolean; readonly json?: boolean; readonly max?: number },
): Promise<RedriveReport> {
  const held = await holdAll(deps, options.max ?? 1000);
  const movable = held.filter((h) => h.entry.idempotency_key !== null);
  const skipped = held.filter((h) => h.entry.idempotency_key === null);
  const moved: Held[] = [];
  const failed: Held[] = [];
  if (options.dryRun) {
    await release(deps, held);
  } else {
    for (const h of movable) {
      try {
        await deps.sqs.send(new SendMessageCommand({ QueueUrl: deps.queueUrl, MessageBody: h.entry.body }));
        moved.push(h);
      } catch {
        failed.push(h);
      }
    }
    await inBatches(moved, async (batch) => {
      await deps.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: deps.dlqUrl,
          Entries: batch.map((h, i) => ({ Id: String(i), ReceiptHandle: h.message.ReceiptHandle ?? '' })),
        }),
      );
    });
    await release(deps, [...skipped, ...failed]);
  }
  const report: RedriveReport = {
    dry_run: options.dryRun ?? false,
    moved: (options.dryRun ? movable : moved).map((h) => h.entry),
    skipped: skipped.map((h) => h.entry),
    failed: failed.map((h) => h.entry),
  };
  if (options.json) {
    writeJson(deps.out, { dlq_url: deps.dlqUrl, queue_url: deps.queueUrl, ...report });
  } else {
    const verb = report.dry_run ? 'would move' : 'moved';
    deps.out.write(`${verb} ${report.moved.length} message(s) from ${deps.dlqUrl} to ${deps.queueUrl}\n`);
    if (report.moved.length) deps.out.write(`${render(report.moved)}\n`);
    if (report.skipped.length) {
      deps.out.write(`left ${report.skipped.length} message(s) that are not dispatch messages\n`);
    }
    if (report.failed.length)
      deps.out.write(`FAILED to move ${report.failed.length} message(s); they stay in the DLQ\n`);
    if (report.dry_run && report.moved.length) deps.out.write('dry run: nothing was moved\n');
  }
  return report;
}
