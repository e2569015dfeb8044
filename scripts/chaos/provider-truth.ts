/**
 * The provider-truth checks of a chaos run (issue "Provider truth I", point 7): pure functions over
 * the simulator's ledger, the stored commands and evidence, and the receipts the service took in.
 * The ledger says, for every message, which `client_reference` it was created for (the body carries
 * that key's secret), whether its reads were redacted and what happened to its status callbacks;
 * nothing here needs a body or a number.
 */
import type { EvidenceRecord, NotificationRecord } from '../../shared/domain/notification.js';
import type { InvariantResult, LedgerEntry, SendRequestEntry } from './invariants.js';

const MAX_EXAMPLES = 5;

function keyOf(reference: string | null): string | null {
  if (reference === null) return null;
  const hash = reference.lastIndexOf('#');
  return hash <= 0 ? null : reference.slice(0, hash);
}

function result(name: InvariantResult['name'], label: string, problems: readonly string[]): InvariantResult {
  const examples = problems.slice(0, MAX_EXAMPLES);
  const keys = [...new Set(examples.filter((p) => p.includes(': ')).map((p) => p.split(': ')[0] as string))];
  return { name, label, count: problems.length, examples, keys };
}

/**
 * misattributed: a provider message id the service holds (on the record or in any evidence record)
 * must be a message created for that key, i.e. one whose body carries that key's secret. Counted
 * once per key and message id.
 */
export function checkMisattributed(
  commands: readonly NotificationRecord[],
  evidence: readonly EvidenceRecord[],
  ledger: readonly LedgerEntry[],
): InvariantResult {
  const byId = new Map(ledger.map((m) => [m.id, m]));
  const held = new Set<string>();
  for (const record of commands) {
    if (record.provider.messageId !== undefined)
      held.add(`${record.idempotencyKey}\u0000${record.provider.messageId}`);
  }
  for (const e of evidence) {
    if (e.providerMessageId !== undefined) held.add(`${e.idempotencyKey}\u0000${e.providerMessageId}`);
  }
  const problems: string[] = [];
  for (const pair of held) {
    const [key, id] = pair.split('\u0000') as [string, string];
    const message = byId.get(id);
    if (message === undefined) {
      problems.push(`${key}: holds ${id}, which is no message at the provider`);
      continue;
    }
    const owner = keyOf(message.client_reference);
    if (owner === null) problems.push(`${key}: holds ${id}, whose ledger entry names no client reference`);
    else if (owner !== key) problems.push(`${key}: holds ${id}, a message of ${owner}`);
  }
  return result(
    'misattributed',
    'message ids held for a key whose secret that message does not carry',
    problems,
  );
}

/** Receipts the service's receipts route accepted with a valid signature, by message id. */
export type ReceiptsSeen = ReadonlyMap<string, number>;

/**
 * Counts the receipts in the service's log lines (`message: "receipt"`, one per signed callback
 * the route took in, whatever it meant).
 */
export function receiptsSeenIn(logLines: Iterable<string>): Map<string, number> {
  const seen = new Map<string, number>();
  for (const line of logLines) {
    if (!line.includes('"message":"receipt"')) continue;
    try {
      const parsed = JSON.parse(line) as { message?: unknown; message_id?: unknown };
      if (parsed.message !== 'receipt' || typeof parsed.message_id !== 'string') continue;
      seen.set(parsed.message_id, (seen.get(parsed.message_id) ?? 0) + 1);
    } catch {
      // Not a JSON line (the stack's own output): not a receipt.
    }
  }
  return seen;
}

/** How the run's provider can find a message (its capabilities, as far as staleness goes). */
export interface StaleOptions {
  /**
   * The provider finds a message by the id it returned and nothing else (SNS: no receipts, no
   * listing). A message whose id never reached the record cannot be named by anything it shows.
   */
  readonly findsOnlyById?: boolean;
  /**
   * The provider shows a message only through the events it pushes (End User Messaging: no read
   * API). A message whose every event was lost cannot be named by anything it shows.
   */
  readonly eventsOnly?: boolean;
}

/** Why a delivered message may legitimately be unknown to its record. */
function excused(
  message: LedgerEntry,
  record: NotificationRecord,
  receiptsSeen: ReceiptsSeen | undefined,
  options: StaleOptions,
): boolean {
  if (options.findsOnlyById === true && record.provider.messageId === undefined) return true;
  if (options.eventsOnly === true && message.receipts === 'lost') return true;
  const allLost =
    message.receipts === 'lost' || (receiptsSeen !== undefined && (receiptsSeen.get(message.id) ?? 0) === 0);
  return allLost && message.redacted === true;
}

/**
 * stale: a message the provider delivered is known to its key's record as `sent` or `delivered`
 * with that message id, unless every receipt for it was lost and its reads were redacted (then no
 * evidence the service can see names it; the record stays unknown and expires without a second send),
 * or the provider finds by returned id only and that id never reached the record (SNS after a
 * timeout or a 5xx once it had accepted), or it shows messages only through events and every event
 * of the message was lost (End User Messaging).
 */
export function checkStale(
  commands: readonly NotificationRecord[],
  ledger: readonly LedgerEntry[],
  receiptsSeen?: ReceiptsSeen,
  options: StaleOptions = {},
): { readonly invariant: InvariantResult; readonly excused: number } {
  const byKey = new Map(commands.map((c) => [c.idempotencyKey, c]));
  const problems: string[] = [];
  let excusedCount = 0;
  for (const message of ledger) {
    if (message.status !== 'delivered') continue;
    const key = keyOf(message.client_reference);
    const record = key === null ? undefined : byKey.get(key);
    if (record === undefined) continue; // a message for no known key is a ledger mismatch
    const known =
      (record.state === 'sent' || record.state === 'delivered') && record.provider.messageId === message.id;
    if (known) continue;
    if (excused(message, record, receiptsSeen, options)) {
      excusedCount++;
      continue;
    }
    problems.push(
      `${record.idempotencyKey}: ${message.id} was delivered, the record says ${record.state} (${record.lastReason}) with ${record.provider.messageId ?? 'no message id'}`,
    );
  }
  return {
    invariant: result(
      'stale',
      'delivered messages their record does not know (receipts not all lost, or no redaction)',
      problems,
    ),
    excused: excusedCount,
  };
}

/** How unknown outcomes ended. */
export interface UnknownOutcomeReport {
  /** Commands that were `dispatch_unknown` at least once. */
  readonly unknown: number;
  /** Of those, ended with the user holding an SMS (a message that did not fail). */
  readonly withSms: number;
  /** Ended without any SMS: by the final reason, and by the fault behind the (last) unknown attempt. */
  readonly withoutSms: number;
  readonly withoutSmsByReason: Readonly<Record<string, number>>;
  readonly withoutSmsByCause: Readonly<Record<string, number>>;
}

/**
 * The cost of unknowns: every command that went `dispatch_unknown`, and of those the ones that ended
 * without any SMS (no message at the provider except failed ones), by cause. The cause is the
 * simulator fault on the send of the attempt that went unknown (`none` when the send was answered,
 * e.g. a crash after the call; `no_request` when the call never reached the provider).
 */
export function unknownOutcomes(
  commands: readonly NotificationRecord[],
  evidence: readonly EvidenceRecord[],
  ledger: readonly LedgerEntry[],
  requests: readonly SendRequestEntry[],
): UnknownOutcomeReport {
  const unknownAttempts = new Map<string, number>();
  for (const e of evidence) {
    if (e.toState === 'dispatch_unknown' && e.fromState !== 'dispatch_unknown') {
      unknownAttempts.set(e.idempotencyKey, Math.max(unknownAttempts.get(e.idempotencyKey) ?? 0, e.attempt));
    }
  }
  const smsKeys = new Set(ledger.filter((m) => m.status !== 'failed').map((m) => keyOf(m.client_reference)));
  const faultOf = new Map<string, string>();
  for (const r of requests)
    if (r.client_reference !== null) faultOf.set(r.client_reference, r.fault ?? 'none');
  const byReason: Record<string, number> = {};
  const byCause: Record<string, number> = {};
  let withSms = 0;
  let withoutSms = 0;
  for (const record of commands) {
    const attempt = unknownAttempts.get(record.idempotencyKey);
    if (attempt === undefined) continue;
    if (smsKeys.has(record.idempotencyKey)) {
      withSms++;
      continue;
    }
    withoutSms++;
    byReason[record.lastReason] = (byReason[record.lastReason] ?? 0) + 1;
    const cause = faultOf.get(`${record.idempotencyKey}#${attempt}`) ?? 'no_request';
    byCause[cause] = (byCause[cause] ?? 0) + 1;
  }
  return {
    unknown: unknownAttempts.size,
    withSms,
    withoutSms,
    withoutSmsByReason: byReason,
    withoutSmsByCause: byCause,
  };
}
