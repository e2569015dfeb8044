/**
 * Chaos step 4, collect: what the run left behind (the provider's ledger and request log, the
 * table, the captured log lines), read once the run has settled, with the stack stopped after
 * the read; returned as the dataset the invariants judge.
 */
import { scanTable } from '../../local/resources.js';
import {
  admissionEvidence,
  evidenceFromItem,
  recordFromItem,
} from '../../shared/adapters/dynamodb/item-mapping.js';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import type { EvidenceRecord, NotificationRecord } from '../../shared/domain/notification.js';
import { FindBy, type ProviderCapabilities } from '../../shared/domain/provider.js';
import { type TemplateAlarmsReport, templateAlarmsReport } from './alarms.js';
import type { Driven } from './drive.js';
import type { ChaosDataset, LedgerEntry, SendRequestEntry } from './invariants.js';
import type { DeliverableInput } from './lost-deliverable.js';
import { receiptsSeenIn } from './provider-truth.js';
import { POISON_PREFIX, type Rig, type RigParts } from './rig.js';
import { simList } from './sim-control.js';

/**
 * How long past its expiry a command may stay undecided: a lease (slack) running out, one lookup
 * timeout, a few reconcile intervals and the event-loop delay of one process hosting everything.
 */
const STUCK_BOUND_MS = 30_000;

/** What the run left behind. */
export interface Collected {
  readonly dataset: ChaosDataset;
  /** What the zero-SMS classification needs beyond the dataset. */
  readonly deliverable: Pick<DeliverableInput, 'provider' | 'phases' | 'faultsByKey' | 'shortLifeKeys'>;
  /** Planted poison items still there, and those the reconciler marked. */
  readonly poisonPresent: number;
  readonly poisonMarked: number;
  readonly collectMs: number;
  /** When the provider's ledger and the table were read. */
  readonly observedAt: number;
  /** The template's alarms over the run (scripts/chaos/alarms.ts). */
  readonly templateAlarms: TemplateAlarmsReport;
}

/** Whether a provider can find a message by the id it returned and by nothing else (SNS). */
function findsOnlyById(capabilities: ProviderCapabilities): boolean {
  return !capabilities.receipts && capabilities.findBy.every((how) => how === FindBy.id);
}

/** Whether a provider shows messages only through the events it pushes (no read by content, no status API). */
function eventsOnly(capabilities: ProviderCapabilities): boolean {
  return (
    capabilities.receipts &&
    !capabilities.findBy.includes(FindBy.content) &&
    capabilities.absenceProof === 'never'
  );
}

/** The table's items as commands and evidence; planted poison counted apart. */
function splitItems(items: readonly Record<string, unknown>[]) {
  const commands: NotificationRecord[] = [];
  const evidence: EvidenceRecord[] = [];
  let poisonPresent = 0;
  let poisonMarked = 0;
  for (const item of items) {
    // Budget counters hold a fingerprint or country and a count: no record, no evidence.
    if (item[TableSchema.sortKey] === TableSchema.counterSortKey) continue;
    const pk = String(item[TableSchema.partitionKey]);
    if (pk === TableSchema.reconcileCursorKey.pk) continue;
    if (pk.startsWith(POISON_PREFIX)) {
      // Planted poison: never deleted, and isolated (counted) by the reconciler.
      poisonPresent++;
      if (Number(item[TableSchema.poisonCountAttribute] ?? 0) >= 1) poisonMarked++;
      continue;
    }
    if (item[TableSchema.sortKey] === TableSchema.commandSortKey) {
      const record = recordFromItem(item);
      commands.push(record);
      evidence.push(admissionEvidence(record));
    } else {
      evidence.push(evidenceFromItem(item));
    }
  }
  return { commands, evidence, poisonPresent, poisonMarked };
}

/** Every phone number, code and reset URL the run sent: none may appear in an item or a log line. */
function secretsOf(driven: Driven): ChaosDataset['secrets'] {
  const phones: string[] = [];
  const codes: string[] = [];
  const urls: string[] = [];
  for (const spec of driven.specs) {
    phones.push(spec.phone, ...(spec.spellings ?? []));
    for (const params of [spec.params, spec.conflictParams]) {
      if (params === undefined) continue;
      if ('code' in params) codes.push(params.code);
      else urls.push(params.reset_url);
    }
  }
  return { phones, codes, urls };
}

/** Reads what the run left behind, then stops the stack and the output capture. */
export async function collectChaos(rig: Rig, driven: Driven, parts: RigParts): Promise<Collected> {
  const collectStart = Date.now();
  const running = rig.stack;
  const [ledger, requests, items] = await Promise.all([
    simList<LedgerEntry>(rig.simUrl, 'messages'),
    simList<SendRequestEntry>(rig.simUrl, 'requests'),
    scanTable(rig.dynamodb, running.tableName),
  ]);
  const observedAt = Date.now();
  const { commands, evidence, poisonPresent, poisonMarked } = splitItems(items);
  const templateAlarms = await templateAlarmsReport(running.alarms);
  await running.stop();
  delete parts.stack;
  const logLines = rig.capture.stop();
  const deliverable = {
    provider: rig.provider,
    phases: driven.phaseWindows,
    faultsByKey: rig.faultsByKey,
    shortLifeKeys: new Set(
      driven.admissions
        .filter((a) => a.kind === 'short_life')
        .flatMap((a) => [a.idempotencyKey, ...(a.keys ?? [])]),
    ),
  };
  const capabilities = running.runtime.provider.capabilities;
  const dataset: ChaosDataset = {
    ledger,
    requests,
    commands,
    evidence,
    items,
    logLines,
    secrets: secretsOf(driven),
    admissions: driven.admissions,
    events: driven.events,
    // Judged with the settings the service read (shared/config.ts over shared/settings.ts), not re-parsed.
    dispatchMarginMs: running.config.policy.dispatchMarginMs,
    pumping: driven.pumping,
    budgets: running.config.budgets,
    receiptsSeen: receiptsSeenIn(logLines),
    observedAt,
    stuckBoundMs: STUCK_BOUND_MS,
    findsOnlyById: findsOnlyById(capabilities),
    eventsOnly: eventsOnly(capabilities),
    deliverable,
  };
  return {
    dataset,
    deliverable,
    poisonPresent,
    poisonMarked,
    collectMs: Date.now() - collectStart,
    observedAt,
    templateAlarms,
  };
}
