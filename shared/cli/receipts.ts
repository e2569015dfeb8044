import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { EumReceiptReport, KeptReceipt, RedriveKeptReceipt } from '../composition/receipts.js';
import { type TextOut, table, writeJson } from './output.js';
import { holdEachOnce, inBatches } from './queue-hold.js';

/** What `receipts redrive` needs: the kept-receipts queue, and the receipts use case's dependencies. */
export interface ReceiptsRedriveDeps {
  readonly sqs: SQSClient;
  /** The kept-receipts queue (`KEPT_RECEIPTS_QUEUE_URL`, the stack output `KeptReceiptsQueueUrl...`). */
  readonly keptUrl: string;
  /** The receipts use case, for copies naming the stack's events topic (`keptReceiptsRedrive`). */
  readonly redrive: RedriveKeptReceipt;
  /** The events topic `redrive` is for: a dry run leaves copies of another topic as the redrive would. */
  readonly topicArn: string;
  readonly out: TextOut;
  /** How long received copies stay hidden while this run works on them. @default 60 */
  readonly holdSeconds?: number;
  /** Long-poll wait per receive; the run ends at the first empty receive. @default 1 */
  readonly waitSeconds?: number;
}

/**
 * What became of one kept copy: `applied`/`ignored`/... (the receipts use case's result, deleted),
 * `rejected:<why>` (the receipts function drops such an event too: deleted), `left:<why>` (never
 * deleted: not a kept copy, or another topic than the configured one), `failed` (a store fault:
 * left for the next run), `pending` (a dry run).
 */
interface KeptReceiptEntry {
  readonly message_id: string;
  /** The SNS notification id of the copy; null when the body is not a kept copy. */
  readonly notification_id: string | null;
  readonly event_type: string | null;
  /** `<idempotency key>#<attempt>`, as the event's context carried it. */
  readonly client_reference: string | null;
  readonly outcome: string;
}

/** What a redrive did (or, with `--dry-run`, found). */
export interface ReceiptsRedriveReport {
  readonly dry_run: boolean;
  /** Re-delivered and deleted from the kept queue. */
  readonly redriven: readonly KeptReceiptEntry[];
  /** Left in the kept queue for a person (unreadable or another topic). */
  readonly left: readonly KeptReceiptEntry[];
  /** The store failed: left in the kept queue for the next run. */
  readonly failed: readonly KeptReceiptEntry[];
}

type JsonRecord = Record<string, unknown>;

/** The kept copy a message holds, or undefined when the body is not one. */
function keptReceiptOf(body: string | undefined): KeptReceipt | undefined {
  try {
    const value = JSON.parse(body ?? '') as JsonRecord | null;
    if (
      value !== null &&
      typeof value === 'object' &&
      value.Type === 'Notification' &&
      typeof value.MessageId === 'string' &&
      typeof value.TopicArn === 'string' &&
      typeof value.Message === 'string'
    ) {
      return {
        Type: 'Notification',
        MessageId: value.MessageId,
        TopicArn: value.TopicArn,
        Message: value.Message,
      };
    }
  } catch {
    // Not JSON: not a kept copy.
  }
  return undefined;
}

/** The event type and reference a copy names, for the listing (they carry no number). */
function describedBy(kept: KeptReceipt): Pick<KeptReceiptEntry, 'event_type' | 'client_reference'> {
  try {
    const event = JSON.parse(kept.Message) as JsonRecord;
    const context = event.context as JsonRecord | undefined;
    return {
      event_type: typeof event.eventType === 'string' ? event.eventType : null,
      client_reference: typeof context?.client_reference === 'string' ? context.client_reference : null,
    };
  } catch {
    return { event_type: null, client_reference: null };
  }
}

function outcomeOf(report: EumReceiptReport): string {
  if (report.kind === 'rejected') return `rejected:${report.why}`;
  const { result } = report;
  if (result.kind === 'applied') return `applied:${result.to}`;
  if (result.kind === 'ignored') return `ignored:${result.why}`;
  return result.kind;
}

/** Every message of the kept queue (up to `max`), each once, hidden for the hold. */
function receiveAll(deps: ReceiptsRedriveDeps, max: number): Promise<Message[]> {
  return holdEachOnce({ ...deps, queueUrl: deps.keptUrl }, max);
}

/**
 * `reset-notifier receipts redrive [--dry-run]`: re-delivers the kept receipts (End User Messaging
 * events whose receipts invocation failed every attempt, kept without numbers) through the
 * receipts use case, and deletes each copy once the use case has answered. Safe to repeat: the use
 * case is idempotent, so a copy redriven twice, or one whose original got through, changes nothing
 * twice; a copy is deleted only after its answer (a run that dies midway leaves it for the next).
 * Copies that are not readable or name another topic are never deleted.
 */
export async function runReceiptsRedrive(
  deps: ReceiptsRedriveDeps,
  options: { readonly dryRun?: boolean; readonly json?: boolean; readonly max?: number },
): Promise<ReceiptsRedriveReport> {
  const held = await receiveAll(deps, options.max ?? 1000);
  const redriven: { message: Message; entry: KeptReceiptEntry }[] = [];
  const left: { message: Message; entry: KeptReceiptEntry }[] = [];
  const failed: { message: Message; entry: KeptReceiptEntry }[] = [];
  for (const message of held) {
    const kept = keptReceiptOf(message.Body);
    const base = { message_id: message.MessageId ?? '' };
    if (kept === undefined) {
      left.push({
        message,
        entry: {
          ...base,
          notification_id: null,
          event_type: null,
          client_reference: null,
          outcome: 'left:not_a_kept_receipt',
        },
      });
      continue;
    }
    const described = { ...base, notification_id: kept.MessageId, ...describedBy(kept) };
    if (options.dryRun) {
      if (kept.TopicArn === deps.topicArn)
        redriven.push({ message, entry: { ...described, outcome: 'pending' } });
      else left.push({ message, entry: { ...described, outcome: 'left:wrong_topic' } });
      continue;
    }
    try {
      const outcome = outcomeOf(await deps.redrive(kept));
      // Another topic than ours: a wrong --topic-arn, or not our copy. Never deleted.
      const target = outcome === 'rejected:wrong_topic' ? left : redriven;
      target.push({
        message,
        entry: { ...described, outcome: target === left ? 'left:wrong_topic' : outcome },
      });
    } catch {
      failed.push({ message, entry: { ...described, outcome: 'failed' } });
    }
  }
  if (!options.dryRun) {
    await inBatches(redriven, async (batch) => {
      await deps.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: deps.keptUrl,
          Entries: batch.map((h, i) => ({ Id: String(i), ReceiptHandle: h.message.ReceiptHandle ?? '' })),
        }),
      );
    });
  }
  // Whatever stays is visible again at once (for the next run, or a person).
  const release = options.dryRun ? held.map((message) => ({ message })) : [...left, ...failed];
  await inBatches(release, async (batch) => {
    await deps.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: deps.keptUrl,
        Entries: batch.map((h, i) => ({
          Id: String(i),
          ReceiptHandle: h.message.ReceiptHandle ?? '',
          VisibilityTimeout: 0,
        })),
      }),
    );
  });
  const report: ReceiptsRedriveReport = {
    dry_run: options.dryRun ?? false,
    redriven: redriven.map((h) => h.entry),
    left: left.map((h) => h.entry),
    failed: failed.map((h) => h.entry),
  };
  write(deps, report, options.json === true);
  return report;
}

function render(entries: readonly KeptReceiptEntry[]): string {
  return table([
    ['notification_id', 'event_type', 'client_reference', 'outcome'],
    ...entries.map((e) => [
      e.notification_id ?? '-',
      e.event_type ?? '-',
      e.client_reference ?? '-',
      e.outcome,
    ]),
  ]);
}

function write(deps: ReceiptsRedriveDeps, report: ReceiptsRedriveReport, json: boolean): void {
  if (json) {
    writeJson(deps.out, { kept_url: deps.keptUrl, ...report });
    return;
  }
  const verb = report.dry_run ? 'would redrive' : 'redrove';
  deps.out.write(`${verb} ${report.redriven.length} kept receipt(s) from ${deps.keptUrl}\n`);
  if (report.redriven.length) deps.out.write(`${render(report.redriven)}\n`);
  if (report.left.length) {
    deps.out.write(`left ${report.left.length} message(s) that are not kept receipts of this topic\n`);
    deps.out.write(`${render(report.left)}\n`);
  }
  if (report.failed.length)
    deps.out.write(`FAILED to redrive ${report.failed.length} kept receipt(s) (store); they stay kept\n`);
  if (report.dry_run && report.redriven.length) deps.out.write('dry run: nothing was redriven\n');
}
