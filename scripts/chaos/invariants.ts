/**
 * The chaos run's verdict: pure functions over what a run leaves behind (the simulator's ledger and
 * request log, the stored items, the evidence trail, the captured log lines and the API responses).
 * Each returns a count (0 = the invariant holds) and a few examples that never carry a secret.
 */
import { type BudgetPolicy, NO_BUDGETS, type RateWindow } from '../../shared/domain/budgets.js';
import { type EvidenceRecord, isFinal, type NotificationRecord } from '../../shared/domain/notification.js';
import { findTransition, type NotificationState, ReasonCode } from '../../shared/domain/states.js';
import { checkLostDeliverable, type DeliverableInput } from './lost-deliverable.js';
import { checkEventDuplicates, checkNumberBudgets, type DriverEvent } from './per-event.js';
import { createPhoneMatcher } from './phone-spellings.js';
import { checkMisattributed, checkStale, type ReceiptsSeen } from './provider-truth.js';

/** One entry of `GET /_sim/messages`: a provider-accepted message. */
export interface LedgerEntry {
  readonly id: string;
  readonly client_reference: string | null;
  readonly accepted_at: string;
  readonly status: string;
  readonly validity_period_seconds?: number;
  /** The provider's error code of a `failed` or `undelivered` message (Twilio's; absent or null otherwise). */
  readonly error_code?: number | null;
  /** The message's API reads were redacted (numbers masked, body blank). */
  readonly redacted?: boolean;
  /** What happened to its status callbacks. */
  readonly receipts?: 'none' | 'lost' | 'duplicated' | 'delayed';
}

/** One entry of `GET /_sim/requests`: a send request as it reached the provider. */
export interface SendRequestEntry {
  readonly received_at: string;
  readonly client_reference: string | null;
  /** A scheduled message (Twilio): the service's absence probe, never a send to a user now. */
  readonly scheduled?: boolean;
  readonly fault: string | null;
  readonly outcome?: string;
}

/** The responses one event's concurrent POSTs finally got (after the client's own 5xx retries). */
export interface AdmissionObservation {
  readonly idempotencyKey: string;
  /**
   * Every key the event's POSTs carried, when the driver sent it more than one (a fresh
   * `Idempotency-Key` per try); absent: `idempotencyKey` only.
   */
  readonly keys?: readonly string[];
  readonly kind: 'normal' | 'short_life' | 'too_late';
  readonly responses: ReadonlyArray<{
    readonly variant: 'original' | 'conflict';
    readonly status: number;
    readonly code?: string;
  }>;
}

/** The final response to one POST of the pumping scenario (after the client's own 5xx retries). */
export interface PumpingObservation {
  readonly idempotencyKey: string;
  /** The destination without its number (`burst-1`, `wave-FR-7`). */
  readonly target: string;
  readonly country: string;
  readonly status: number;
  readonly code?: string;
  /**
   * When the POST was sent (driver clock, ms, before its first try). The service decided between
   * `sentAt` and `at`: its clock is the driver's (one process), and the admission names its
   * windows by the time the request came in.
   */
  readonly sentAt: number;
  /** When the response arrived (driver clock, ms). */
  readonly at: number;
}

/** The secrets a run sent: none may show up anywhere. */
export interface PrivacySecrets {
  readonly phones: Iterable<string>;
  readonly codes: Iterable<string>;
  readonly urls: Iterable<string>;
}

/** One text to scan, with where it came from (the source goes into examples, the text never does). */
export interface ScannedText {
  readonly source: string;
  readonly text: string;
}

/** Everything the checks look at. */
export interface ChaosDataset {
  readonly ledger: readonly LedgerEntry[];
  readonly requests: readonly SendRequestEntry[];
  readonly commands: readonly NotificationRecord[];
  readonly evidence: readonly EvidenceRecord[];
  /** Raw stored items (command and evidence items) and log lines, for the privacy scan. */
  readonly items: readonly unknown[];
  readonly logLines: readonly string[];
  readonly secrets: PrivacySecrets;
  readonly admissions: readonly AdmissionObservation[];
  readonly dispatchMarginMs: number;
  /** Every event the driver sent, with the keys and number spellings it used (absent: `event_duplicates` and `number_budget` not judged). */
  readonly events?: readonly DriverEvent[];
  /** The pumping scenario's responses, and the budgets the run enforced. */
  readonly pumping?: readonly PumpingObservation[];
  readonly budgets?: BudgetPolicy;
  /** Receipts the service's receipts route took in, by message id (absent: not observed). */
  readonly receiptsSeen?: ReceiptsSeen;
  /** When the run's table was read (the end of observation, for `stuck`). */
  readonly observedAt?: number;
  /** How long past its expiry a command may stay undecided before it counts as stuck. */
  readonly stuckBoundMs?: number;
  /** The provider finds messages by returned id only (see `StaleOptions`). */
  readonly findsOnlyById?: boolean;
  /** The provider shows messages only through events (see `StaleOptions`). */
  readonly eventsOnly?: boolean;
  /** What the zero-SMS classification needs beyond the above (absent: `lost_deliverable` not judged). */
  readonly deliverable?: Pick<DeliverableInput, 'provider' | 'phases' | 'faultsByKey' | 'shortLifeKeys'>;
}

/** The verdict on one invariant. */
export interface InvariantResult {
  readonly name: InvariantName;
  /** What is counted, for the summary line. */
  readonly label: string;
  readonly count: number;
  /** At most {@link MAX_EXAMPLES} short descriptions, keys and states only. */
  readonly examples: readonly string[];
  /** The idempotency keys the examples are about (for forensics). */
  readonly keys: readonly string[];
}

export type InvariantName =
  | 'duplicates'
  | 'post_expiry_sends'
  | 'validity_beyond_expiry'
  | 'lost'
  | 'evidence'
  | 'ledger_mismatch'
  | 'admission'
  | 'budget'
  | 'event_duplicates'
  | 'number_budget'
  | 'privacy'
  | 'misattributed'
  | 'stale'
  | 'stuck'
  | 'lost_deliverable';

export const MAX_EXAMPLES = 5;

function result(name: InvariantName, label: string, problems: readonly string[]): InvariantResult {
  const examples = problems.slice(0, MAX_EXAMPLES);
  // Problems about a key start with `<key>: ` (keys never contain a space).
  const keys = [...new Set(examples.filter((p) => p.includes(': ')).map((p) => p.split(': ')[0] as string))];
  return { name, label, count: problems.length, examples, keys };
}

/** `<key>#<attempt>` -> `<key>`; null for a reference that is not ours. */
export function keyOfReference(reference: string | null): string | null {
  if (reference === null) return null;
  const hash = reference.lastIndexOf('#');
  return hash <= 0 ? null : reference.slice(0, hash);
}

/**
 * Keys with more than one provider-accepted message. A `failed` message never reached a handset
 * (Twilio's "not handed to a carrier" codes, an expired validity): the retry it allows is no duplicate.
 */
export function checkDuplicates(ledger: readonly LedgerEntry[]): InvariantResult {
  const perKey = new Map<string, number>();
  for (const entry of ledger) {
    if (entry.status === 'failed') continue;
    const key = keyOfReference(entry.client_reference) ?? `(no reference: ${entry.id})`;
    perKey.set(key, (perKey.get(key) ?? 0) + 1);
  }
  const problems = [...perKey].filter(([, n]) => n > 1).map(([key, n]) => `${key}: ${n} messages`);
  return result('duplicates', 'keys with more than one provider-accepted message', problems);
}

/** Send requests that reached the provider at or after `expires_at - margin` (or for no known key). */
export function checkPostExpirySends(
  requests: readonly SendRequestEntry[],
  commands: readonly NotificationRecord[],
  marginMs: number,
): InvariantResult {
  const expiresAt = new Map(commands.map((c) => [c.idempotencyKey, c.expiresAt]));
  const problems: string[] = [];
  for (const request of requests) {
    const key = keyOfReference(request.client_reference);
    // The absence probe (docs/providers/twilio.md#the-absence-probe): scheduled days ahead to a number the service
    // owns, with no command's reference, and canceled at once; it is no send for any command.
    if (key === null && request.scheduled === true) continue;
    const expiry = key === null ? undefined : expiresAt.get(key);
    const at = Date.parse(request.received_at);
    if (expiry === undefined) problems.push(`send for unknown key ${key ?? '(none)'}`);
    else if (!(at < expiry - marginMs)) {
      problems.push(`${key}: provider call ${at - (expiry - marginMs)} ms after the dispatch deadline`);
    }
  }
  return result('post_expiry_sends', 'provider calls at or after expires_at - margin', problems);
}

/**
 * Accepted messages whose validity period is longer than the token's remaining life when the attempt
 * was claimed (the provider could then deliver a stale reset). The call starts after its claim, so
 * `expires_at - claimed_at` bounds the validity from above without needing the sender's clock.
 */
export function checkValidity(
  ledger: readonly LedgerEntry[],
  commands: readonly NotificationRecord[],
  evidence: readonly EvidenceRecord[],
): InvariantResult {
  const expiresAt = new Map(commands.map((c) => [c.idempotencyKey, c.expiresAt]));
  const claimedAt = new Map<string, number>();
  for (const e of evidence) {
    if (e.reason === ReasonCode.claimed) claimedAt.set(`${e.idempotencyKey}#${e.attempt}`, e.at);
  }
  const problems: string[] = [];
  for (const entry of ledger) {
    const key = keyOfReference(entry.client_reference);
    const expiry = key === null ? undefined : expiresAt.get(key);
    const claim = entry.client_reference === null ? undefined : claimedAt.get(entry.client_reference);
    if (expiry === undefined || entry.validity_period_seconds === undefined) continue;
    if (claim === undefined) {
      problems.push(`${entry.client_reference}: accepted message without a claimed attempt`);
      continue;
    }
    const excess = entry.validity_period_seconds * 1000 - (expiry - claim);
    if (excess > 0) problems.push(`${key}: validity ${excess} ms longer than the token's life at the claim`);
  }
  return result('validity_beyond_expiry', "messages whose validity outlives the token's life", problems);
}

/** Admitted commands that are not final once the run settled. */
export function checkLost(commands: readonly NotificationRecord[]): InvariantResult {
  const problems = commands
    .filter((c) => !isFinal(c))
    .map((c) => `${c.idempotencyKey}: still ${c.state} (${c.lastReason})`);
  return result('lost', 'admitted keys not final after settling', problems);
}

/** States in which the outcome is not decided yet: a command must leave them by its expiry (+ a bound). */
const UNDECIDED: ReadonlySet<NotificationState> = new Set(['accepted', 'dispatching', 'dispatch_unknown']);

/**
 * Commands that stayed undecided (accepted, dispatching, dispatch_unknown) longer than `boundMs`
 * past their expiry, judged from the evidence trail over the whole run, not only at its end: the
 * reconciler must expire what can no longer be sent whatever else fails (KMS, provider, poison
 * neighbours, a backlog larger than one pass).
 */
export function checkStuck(
  commands: readonly NotificationRecord[],
  evidence: readonly EvidenceRecord[],
  observedAt: number,
  boundMs: number,
): InvariantResult {
  const problems: string[] = [];
  for (const { key, pastExpiryMs, undecidedNow, state } of undecidedPastExpiry(
    commands,
    evidence,
    observedAt,
  )) {
    if (pastExpiryMs > boundMs) {
      problems.push(
        `${key}: undecided ${Math.round(pastExpiryMs / 1000)} s past expiry (${undecidedNow ? `still ${state}` : 'then decided'})`,
      );
    }
  }
  return result(
    'stuck',
    `commands undecided more than ${Math.round(boundMs / 1000)} s past their expiry`,
    problems,
  );
}

/** How long past its expiry one command stayed undecided (only commands that did). */
export interface PastExpiry {
  readonly key: string;
  readonly pastExpiryMs: number;
  readonly undecidedNow: boolean;
  readonly state: string;
}

/**
 * Every command that was still undecided (not sent, unknown, absent) after its expiry, with how
 * long: until its last decision, or until `observedAt` if it is undecided still. The liveness figure
 * behind `stuck`.
 */
export function undecidedPastExpiry(
  commands: readonly NotificationRecord[],
  evidence: readonly EvidenceRecord[],
  observedAt: number,
): PastExpiry[] {
  const decidedAt = new Map<string, number>();
  const last = new Map<string, EvidenceRecord>();
  const ordered = [...evidence].sort(
    (a, b) => a.idempotencyKey.localeCompare(b.idempotencyKey) || a.seq - b.seq,
  );
  for (const e of ordered) {
    last.set(e.idempotencyKey, e);
    // A trail that goes back to an undecided state (not sent, absent) is judged by its last decision.
    if (UNDECIDED.has(e.toState)) decidedAt.delete(e.idempotencyKey);
    else if (e.fromState !== null && UNDECIDED.has(e.fromState)) decidedAt.set(e.idempotencyKey, e.at);
  }
  const out: PastExpiry[] = [];
  for (const c of commands) {
    const lastEvidence = last.get(c.idempotencyKey);
    const undecidedNow = lastEvidence === undefined || UNDECIDED.has(lastEvidence.toState);
    const until = undecidedNow ? observedAt : (decidedAt.get(c.idempotencyKey) ?? c.createdAt);
    const pastExpiryMs = until - c.expiresAt;
    if (pastExpiryMs > 0) out.push({ key: c.idempotencyKey, pastExpiryMs, undecidedNow, state: c.state });
  }
  return out;
}

/** The record a trail of evidence replays to: what the stored record must say. */
export interface ReplayedState {
  readonly state: NotificationState;
  readonly version: number;
  readonly attempts: number;
  readonly lastReason: string;
  readonly updatedAt: number;
  readonly createdAt: number;
  readonly providerMessageId: string | undefined;
  readonly closed: boolean;
}

/** Folds a trail (ordered by seq) into the state it implies; undefined for an empty trail. */
export function replayEvidence(trail: readonly EvidenceRecord[]): ReplayedState | undefined {
  const first = trail[0];
  const last = trail.at(-1);
  if (first === undefined || last === undefined) return undefined;
  return {
    state: last.toState,
    version: last.seq,
    attempts: last.attempt,
    lastReason: last.reason,
    updatedAt: last.at,
    createdAt: first.at,
    providerMessageId: last.providerMessageId,
    closed: last.reason === ReasonCode.statusHorizon,
  };
}

/** Problems of one key's trail against its stored record (empty when the trail is sound). */
export function trailProblems(record: NotificationRecord, trail: readonly EvidenceRecord[]): string[] {
  const key = record.idempotencyKey;
  const problems: string[] = [];
  const sorted = [...trail].sort((a, b) => a.seq - b.seq);
  if (sorted.length !== record.version) {
    problems.push(`${key}: ${sorted.length} evidence records for version ${record.version}`);
  }
  sorted.forEach((e, i) => {
    if (e.seq !== i + 1) problems.push(`${key}: evidence seq ${e.seq} at position ${i + 1}`);
    const previous = sorted[i - 1];
    const expectedFrom = previous === undefined ? null : previous.toState;
    if (e.fromState !== expectedFrom) {
      problems.push(`${key}: seq ${e.seq} from ${e.fromState ?? 'none'}, previous ended in ${expectedFrom}`);
    }
    const rule = findTransition(e.fromState, e.toState, e.reason);
    if (!rule?.actors.includes(e.actor)) {
      problems.push(
        `${key}: seq ${e.seq} ${e.fromState}->${e.toState} (${e.reason}, ${e.actor}) not allowed`,
      );
    }
    if (e.eventId !== record.eventId || e.destinationFingerprint !== record.destinationFingerprint) {
      problems.push(`${key}: seq ${e.seq} belongs to another event or destination`);
    }
  });
  const replayed = replayEvidence(sorted);
  if (replayed === undefined) return [...problems, `${key}: no evidence`];
  const stored: ReplayedState = {
    state: record.state,
    version: record.version,
    attempts: record.attempts,
    lastReason: record.lastReason,
    updatedAt: record.updatedAt,
    createdAt: record.createdAt,
    providerMessageId: record.provider.messageId,
    closed: record.closed,
  };
  for (const field of Object.keys(stored) as (keyof ReplayedState)[]) {
    if (stored[field] !== replayed[field]) {
      problems.push(`${key}: replay gives ${field}=${replayed[field]}, stored ${stored[field]}`);
    }
  }
  return problems;
}

/** Every state change has exactly one evidence record, gap-free, and the replay equals the stored record. */
export function checkEvidence(
  commands: readonly NotificationRecord[],
  evidence: readonly EvidenceRecord[],
): InvariantResult {
  const byKey = new Map<string, EvidenceRecord[]>();
  for (const e of evidence) {
    const list = byKey.get(e.idempotencyKey) ?? [];
    list.push(e);
    byKey.set(e.idempotencyKey, list);
  }
  const keysWithProblems: string[] = [];
  const commandKeys = new Set<string>();
  for (const record of commands) {
    commandKeys.add(record.idempotencyKey);
    const problems = trailProblems(record, byKey.get(record.idempotencyKey) ?? []);
    if (problems.length) keysWithProblems.push(problems.join('; '));
  }
  for (const key of byKey.keys()) {
    if (!commandKeys.has(key)) keysWithProblems.push(`${key}: evidence without a command`);
  }
  return result(
    'evidence',
    'keys whose evidence is incomplete or does not replay to the stored state',
    keysWithProblems,
  );
}

/**
 * Agreement of the stored outcome with the provider: a command that says the provider took it
 * (`sent`, `delivered`, `undelivered`) names a message the ledger holds for that key, and no message
 * belongs to a key the store does not know.
 */
export function checkLedgerAgreement(
  commands: readonly NotificationRecord[],
  ledger: readonly LedgerEntry[],
): InvariantResult {
  const ledgerById = new Map(ledger.map((m) => [m.id, m]));
  const known = new Set(commands.map((c) => c.idempotencyKey));
  const problems: string[] = [];
  for (const record of commands) {
    if (!['sent', 'delivered', 'undelivered'].includes(record.state)) continue;
    const id = record.provider.messageId;
    const message = id === undefined ? undefined : ledgerById.get(id);
    if (message === undefined || keyOfReference(message.client_reference) !== record.idempotencyKey) {
      problems.push(`${record.idempotencyKey}: ${record.state} but the provider has no such message`);
    }
  }
  for (const message of ledger) {
    const key = keyOfReference(message.client_reference);
    // The absence probe (docs/providers/twilio.md#the-absence-probe): no command's reference,
    // scheduled days ahead and canceled at once; only one that went out would be a stray message.
    if (key === null && ['scheduled', 'canceled'].includes(message.status)) continue;
    if (key === null || !known.has(key))
      problems.push(`message ${message.id} for unknown key ${key ?? '(none)'}`);
  }
  return result('ledger_mismatch', 'outcomes the provider ledger contradicts', problems);
}

/**
 * API behaviour under concurrency: at most one 202 per event (whatever keys its POSTs carried), one payload wins (2xx) and the other
 * gets 409, a rejected (too late) request stores nothing, and no response is unexpected.
 */
export function checkAdmissions(
  admissions: readonly AdmissionObservation[],
  commands: readonly NotificationRecord[],
): InvariantResult {
  const stored = new Set(commands.map((c) => c.idempotencyKey));
  const problems: string[] = [];
  for (const event of admissions) {
    const key = event.idempotencyKey;
    // A second key for the event is answered with the first command (200) or 409: stored under any of its keys.
    const isStored = [key, ...(event.keys ?? [])].some((k) => stored.has(k));
    const statuses = event.responses.map((r) => r.status);
    // 429: the destination's budget was spent (several resets to one number): allowed, if it stores nothing.
    const unexpected = statuses.filter((s) => ![200, 202, 409, 422, 429].includes(s) && s < 500);
    if (unexpected.length) problems.push(`${key}: unexpected statuses ${unexpected.join(',')}`);
    if (statuses.filter((s) => s === 202).length > 1) problems.push(`${key}: more than one 202`);
    const winners = new Set(event.responses.filter((r) => r.status < 300).map((r) => r.variant));
    if (winners.size > 1) problems.push(`${key}: both payloads were accepted`);
    for (const r of event.responses) {
      if (r.status === 409 && winners.has(r.variant)) problems.push(`${key}: 409 for the accepted payload`);
      if (r.status === 409 && !isStored) problems.push(`${key}: 409 but nothing is stored`);
      if (r.status === 422 && r.code !== 'already_expired') problems.push(`${key}: 422 ${r.code ?? ''}`);
      if (r.status === 429 && r.code !== undefined && r.code !== 'destination_rate_limited')
        problems.push(`${key}: 429 ${r.code}`);
    }
    if (!isStored && winners.size > 0) problems.push(`${key}: 2xx but nothing is stored`);
    if (statuses.includes(429) && (isStored || winners.size > 0))
      problems.push(`${key}: refused as rate limited but admitted`);
    if (event.kind === 'too_late') {
      if (isStored) problems.push(`${key}: rejected as too late but stored`);
      if (statuses.some((s) => s !== 422 && s < 500)) problems.push(`${key}: too late but not rejected`);
    }
  }
  return result('admission', 'admission anomalies (responses that disagree with the store)', problems);
}

/**
 * Abuse limits under pumping (docs/design.md#abuse-limits): no destination window (any span of its
 * length: they slide) nor country window (fixed, clock-aligned) ever holds more admitted commands
 * than its budget; every 429 came when a window of that destination or country was full; no key got both a 2xx and a 429; no pumping POST ended in a 5xx; and a pumping
 * POST is only ever admitted, replayed or refused as rate limited.
 */
export function checkBudgets(
  pumping: readonly PumpingObservation[],
  commands: readonly NotificationRecord[],
  budgets: BudgetPolicy,
): InvariantResult {
  const problems: string[] = [];
  const bucketOf = (w: RateWindow, at: number) => Math.floor(at / w.windowMs);
  const byKey = new Map(commands.map((c) => [c.idempotencyKey, c]));
  // Admission times per destination, over every command of the run: its windows slide, so a
  // window is any span of its length (docs/abuse-limits.md#budgets).
  const admittedAt = new Map<string, number[]>();
  for (const c of commands) {
    admittedAt.set(c.destinationFingerprint, [
      ...(admittedAt.get(c.destinationFingerprint) ?? []),
      c.createdAt,
    ]);
  }
  for (const times of admittedAt.values()) times.sort((a, b) => a - b);
  /** Admissions to a destination in the window of `w` that ends at `t`: (t - length, t]. */
  const inWindow = (times: readonly number[], w: RateWindow, t: number) =>
    times.filter((x) => x > t - w.windowMs && x <= t).length;
  for (const times of admittedAt.values()) {
    for (const w of budgets.destination) {
      const most = Math.max(0, ...times.map((t) => inWindow(times, w, t)));
      if (most > w.limit) problems.push(`destination window ${w.label}: ${most} admitted, budget ${w.limit}`);
    }
  }
  // Admitted pumping commands per country window (normal events go to countries without budgets).
  const countryWindows = (country: string) => {
    const own = budgets.country.filter((w) => w.country === country);
    return own.length > 0 ? own : budgets.country.filter((w) => w.country === undefined);
  };
  const countryOf = new Map(pumping.map((p) => [p.idempotencyKey, p.country]));
  const perCountry = new Map<string, number>();
  for (const [key, country] of countryOf) {
    const c = byKey.get(key);
    if (!c) continue;
    for (const w of countryWindows(country)) {
      const id = `${country}#${w.label}#${bucketOf(w, c.createdAt)}`;
      perCountry.set(id, (perCountry.get(id) ?? 0) + 1);
    }
  }
  for (const [id, count] of perCountry) {
    const [country, label] = id.split('#');
    const limit = countryWindows(country ?? '').find((w) => w.label === label)?.limit ?? 0;
    if (count > limit)
      problems.push(`country window ${country} ${label}: ${count} admitted, budget ${limit}`);
  }
  // Which fingerprint each pumping target is (known from any of its admitted commands).
  const fingerprintOf = new Map<string, string>();
  for (const p of pumping) {
    const c = byKey.get(p.idempotencyKey);
    if (c) fingerprintOf.set(p.target, c.destinationFingerprint);
  }
  // A country window's buckets the service may have named while deciding (between sending and
  // answer): a burst answered slowly across a window's end was decided in the window that ended,
  // and the next one may still have room (a fixed slack after the answer missed answers slower).
  const bucketsOf = (w: RateWindow, p: PumpingObservation) => {
    const out: number[] = [];
    for (let b = bucketOf(w, Math.min(p.sentAt, p.at)); b <= bucketOf(w, p.at); b++) out.push(b);
    return out;
  };
  const full = (p: PumpingObservation) => {
    const fp = fingerprintOf.get(p.target);
    const times = fp === undefined ? [] : (admittedAt.get(fp) ?? []);
    // Decided between sending and answer: the fullest a window was then is at the start or at an
    // admission in between (a sliding count only grows at admissions).
    const from = Math.min(p.sentAt, p.at);
    const decisionTimes = [from, ...times.filter((t) => t > from && t <= p.at)];
    const destinationFull = budgets.destination.some((w) =>
      decisionTimes.some((t) => inWindow(times, w, t) >= w.limit),
    );
    const countryFull = countryWindows(p.country).some((w) =>
      bucketsOf(w, p).some((b) => (perCountry.get(`${p.country}#${w.label}#${b}`) ?? 0) >= w.limit),
    );
    return destinationFull || countryFull;
  };
  const statusesOf = new Map<string, number[]>();
  for (const p of pumping) {
    statusesOf.set(p.idempotencyKey, [...(statusesOf.get(p.idempotencyKey) ?? []), p.status]);
    if (p.status >= 500) problems.push(`${p.idempotencyKey}: ${p.status} after the client's retries`);
    else if (![200, 202, 429].includes(p.status))
      problems.push(`${p.idempotencyKey}: unexpected ${p.status}`);
    if (p.status === 429 && p.code !== 'destination_rate_limited') {
      problems.push(`${p.idempotencyKey}: 429 ${p.code ?? ''}`);
    }
    if (p.status === 429 && !full(p)) {
      problems.push(`${p.idempotencyKey}: 429 for ${p.target} while its windows had room`);
    }
    if (p.status === 429 && byKey.has(p.idempotencyKey)) problems.push(`${p.idempotencyKey}: 429 but stored`);
    if ((p.status === 200 || p.status === 202) && !byKey.has(p.idempotencyKey)) {
      problems.push(`${p.idempotencyKey}: 2xx but nothing is stored`);
    }
  }
  for (const [key, statuses] of statusesOf) {
    if (statuses.includes(429) && statuses.some((s) => s < 300)) problems.push(`${key}: both 2xx and 429`);
  }
  return result('budget', 'budget anomalies (over budget, unjustified 429, 5xx under pumping)', problems);
}

const DIGIT_RUN = /\+?\d{4,}/g;
const TOKEN_PARAM = /[?&]token=([^&#\s]+)/;

function percentDecoded(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/** Runs of URL-token characters: a token is found by exact lookup, not by scanning for every token. */
const TOKEN_RUN = /[A-Za-z0-9_~-]{8,}/g;

/**
 * Which kind of secret `text` contains, if any. Codes and tokens match exactly (whole digit runs,
 * whole token runs); phone numbers in every spelling (`phone-spellings.ts`: `(415) 555-0123`,
 * `+33 6 12 34 56 78`, national forms). A few set lookups per text, whatever the number of secrets.
 */
export function createLeakDetector(secrets: PrivacySecrets): (text: string) => string | undefined {
  const hasPhone = createPhoneMatcher(secrets.phones);
  const digits = new Map<string, string>();
  for (const code of secrets.codes) digits.set(code, 'code');
  const tokens = new Set<string>();
  const hosts = new Set<string>();
  for (const url of secrets.urls) {
    const token = TOKEN_PARAM.exec(url)?.[1];
    if (token) tokens.add(decodeURIComponent(token));
    try {
      hosts.add(new URL(url).host);
    } catch {
      tokens.add(url);
    }
  }
  return (raw) => {
    for (const text of new Set([raw, percentDecoded(raw)])) {
      if (hasPhone(text)) return 'phone number';
      for (const match of text.matchAll(DIGIT_RUN)) {
        const kind = digits.get(match[0]) ?? digits.get(match[0].replace(/^\+/, ''));
        if (kind) return kind;
      }
      for (const host of hosts) if (text.includes(host)) return 'reset URL';
      for (const match of text.matchAll(TOKEN_RUN)) if (tokens.has(match[0])) return 'token';
    }
    return undefined;
  };
}

/** Texts (items, evidence records, log lines) that carry a phone number, code, URL or token. */
export function checkPrivacy(texts: Iterable<ScannedText>, secrets: PrivacySecrets): InvariantResult {
  const detect = createLeakDetector(secrets);
  const problems: string[] = [];
  for (const { source, text } of texts) {
    const kind = detect(text);
    if (kind) problems.push(`${source} contains a ${kind}`);
  }
  return result(
    'privacy',
    'items, evidence records and log lines carrying a phone, code, URL or token',
    problems,
  );
}

/** The texts of a dataset the privacy scan reads. */
export function* scannedTexts(dataset: ChaosDataset): Generator<ScannedText> {
  for (const [i, item] of dataset.items.entries())
    yield { source: `stored item ${i}`, text: JSON.stringify(item) };
  for (const e of dataset.evidence)
    yield { source: `evidence ${e.idempotencyKey}#${e.seq}`, text: JSON.stringify(e) };
  for (const [i, line] of dataset.logLines.entries()) yield { source: `log line ${i}`, text: line };
  for (const m of dataset.ledger) yield { source: `ledger entry ${m.id}`, text: JSON.stringify(m) };
}

/** Every invariant, in the order the summary prints them. */
export function checkAll(dataset: ChaosDataset): InvariantResult[] {
  return [
    checkDuplicates(dataset.ledger),
    checkPostExpirySends(dataset.requests, dataset.commands, dataset.dispatchMarginMs),
    checkValidity(dataset.ledger, dataset.commands, dataset.evidence),
    checkLost(dataset.commands),
    checkEvidence(dataset.commands, dataset.evidence),
    checkLedgerAgreement(dataset.commands, dataset.ledger),
    checkAdmissions(dataset.admissions, dataset.commands),
    checkBudgets(dataset.pumping ?? [], dataset.commands, dataset.budgets ?? NO_BUDGETS),
    // Judged when the driver says what it sent (a run always does; chaos-short expects both).
    ...(dataset.events
      ? [
          checkEventDuplicates(dataset.ledger, dataset.commands, dataset.events),
          checkNumberBudgets(dataset.commands, dataset.events, dataset.budgets ?? NO_BUDGETS),
        ]
      : []),
    checkPrivacy(scannedTexts(dataset), dataset.secrets),
    checkMisattributed(dataset.commands, dataset.evidence, dataset.ledger),
    checkStale(dataset.commands, dataset.ledger, dataset.receiptsSeen, {
      findsOnlyById: dataset.findsOnlyById ?? false,
      eventsOnly: dataset.eventsOnly ?? false,
    }).invariant,
    checkStuck(
      dataset.commands,
      dataset.evidence,
      dataset.observedAt ?? Date.now(),
      dataset.stuckBoundMs ?? 30_000,
    ),
    ...(dataset.deliverable ? [checkLostDeliverable({ ...dataset, ...dataset.deliverable }).invariant] : []),
  ];
}
