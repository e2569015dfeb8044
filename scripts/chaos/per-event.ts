/**
 * Invariants judged from the driver's own knowledge of what it sent, not from what the service
 * stored about it (issue 25 item 11): one SMS per reset event whatever `Idempotency-Key`s the
 * driver used, and the budgets per real destination number, whatever spelling the driver used.
 * The service's own bookkeeping (its destination fingerprint, its event guard) is never read: a
 * service that took two spellings for two numbers, or two keys for two events, would count zero
 * there and be caught here.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { BudgetPolicy, RateWindow } from '../../shared/domain/budgets.js';
import type { NotificationRecord } from '../../shared/domain/notification.js';
import type { InvariantResult, LedgerEntry } from './invariants.js';
import { keyOfReference, MAX_EXAMPLES } from './invariants.js';

/** One reset event as the driver sent it: every key and every spelling of its number it used. */
export interface DriverEvent {
  readonly eventId: string;
  readonly channel: string;
  readonly template: string;
  /** Every idempotency key the driver's POSTs for the event carried (or the service derives). */
  readonly keys: readonly string[];
  /** Every spelling of the destination the driver's POSTs carried (one number). */
  readonly spellings: readonly string[];
}

/** A number as the driver knows it: canonical E.164 and its country (libphonenumber, the driver's own parse). */
export interface RealNumber {
  readonly e164: string;
  readonly country: string | undefined;
}

/**
 * The real number behind a spelling, computed here with libphonenumber's full metadata (separators
 * dropped, a national trunk prefix after the country code dropped where the metadata says it is
 * not part of the number), never taken from the service. Undefined for a spelling that is no
 * valid number.
 */
export function realNumber(spelling: string): RealNumber | undefined {
  const parsed = parsePhoneNumberFromString(spelling);
  if (parsed === undefined || !parsed.isValid()) return undefined;
  return { e164: parsed.number, country: parsed.country };
}

function verdict(
  name: InvariantResult['name'],
  label: string,
  problems: readonly string[],
  keys: readonly string[],
): InvariantResult {
  return {
    name,
    label,
    count: problems.length,
    examples: problems.slice(0, MAX_EXAMPLES),
    keys: [...new Set(keys)].slice(0, MAX_EXAMPLES),
  };
}

const eventName = (e: DriverEvent) => `${e.eventId}/${e.channel}/${e.template}`;

/**
 * At most one command and one provider-accepted message per (`event_id`, channel, template),
 * whatever keys the driver's POSTs carried: messages and commands are grouped by the event the
 * driver sent their key for. A `failed` message never reached a handset (as for `duplicates`); a
 * message or command under a key the driver never sent is counted too (nothing can vouch for it).
 */
export function checkEventDuplicates(
  ledger: readonly LedgerEntry[],
  commands: readonly NotificationRecord[],
  events: readonly DriverEvent[],
): InvariantResult {
  const eventOfKey = new Map<string, DriverEvent>();
  for (const event of events) for (const key of event.keys) eventOfKey.set(key, event);
  const messages = new Map<DriverEvent, string[]>();
  const stored = new Map<DriverEvent, string[]>();
  const problems: string[] = [];
  const keys: string[] = [];
  for (const entry of ledger) {
    if (entry.status === 'failed') continue;
    const key = keyOfReference(entry.client_reference);
    // No reference at all: the absence probe or a stray message, judged by `ledger_mismatch`.
    if (key === null) continue;
    const event = eventOfKey.get(key);
    if (event === undefined) {
      problems.push(`${key}: message ${entry.id} for a key the driver never sent`);
      keys.push(key);
    } else messages.set(event, [...(messages.get(event) ?? []), key]);
  }
  for (const command of commands) {
    const event = eventOfKey.get(command.idempotencyKey);
    if (event === undefined) {
      problems.push(`${command.idempotencyKey}: a command for a key the driver never sent`);
      keys.push(command.idempotencyKey);
    } else stored.set(event, [...(stored.get(event) ?? []), command.idempotencyKey]);
  }
  for (const [event, byKey] of messages) {
    if (byKey.length < 2) continue;
    const distinct = new Set(byKey).size;
    problems.push(
      `${byKey[0]}: event ${eventName(event)} has ${byKey.length} provider-accepted messages under ${distinct} key(s)`,
    );
    keys.push(...byKey);
  }
  for (const [event, byKey] of stored) {
    if (byKey.length < 2) continue;
    problems.push(`${byKey[0]}: event ${eventName(event)} has ${byKey.length} commands`);
    keys.push(...byKey);
  }
  return verdict(
    'event_duplicates',
    'events (event_id, channel, template) with more than one command or provider-accepted message, whatever keys',
    problems,
    keys,
  );
}

/** Admissions in the window of `w` that ends at `t`: (t - length, t]. */
const inWindow = (times: readonly number[], w: RateWindow, t: number) =>
  times.filter((x) => x > t - w.windowMs && x <= t).length;

/**
 * The budgets per real destination (docs/abuse-limits.md#budgets), from the driver's knowledge
 * of the number each admitted command was sent to (its event's spellings, canonicalized here):
 * no span of a destination window's length (they slide) holds more admissions to one number
 * than its budget, and no fixed clock window of a country budget holds more admissions to that
 * country's numbers than its budget. An admission is the stored command's `createdAt`. Examples
 * name the number by the first event sent to it, never by its digits.
 */
export function checkNumberBudgets(
  commands: readonly NotificationRecord[],
  events: readonly DriverEvent[],
  budgets: BudgetPolicy,
): InvariantResult {
  const problems: string[] = [];
  const keys: string[] = [];
  const eventOfKey = new Map<string, DriverEvent>();
  const numberOf = new Map<DriverEvent, RealNumber>();
  for (const event of events) {
    for (const key of event.keys) eventOfKey.set(key, event);
    const numbers = event.spellings.map(realNumber);
    const first = numbers[0];
    if (first === undefined || numbers.some((n) => n?.e164 !== first.e164)) {
      // The driver's own spellings must name one valid number: a driver bug, but a count hidden
      // by it would be a count missed.
      problems.push(`event ${event.eventId}: its spellings are not one valid number`);
      continue;
    }
    numberOf.set(event, first);
  }
  const admissions = new Map<string, { times: number[]; keys: string[]; firstEvent: string }>();
  const perCountryWindow = new Map<string, string[]>();
  for (const command of commands) {
    const event = eventOfKey.get(command.idempotencyKey);
    const number = event === undefined ? undefined : numberOf.get(event);
    // A key the driver never sent is counted by `event_duplicates`.
    if (event === undefined || number === undefined) continue;
    const seen = admissions.get(number.e164) ?? { times: [], keys: [], firstEvent: event.eventId };
    seen.times.push(command.createdAt);
    seen.keys.push(command.idempotencyKey);
    admissions.set(number.e164, seen);
    const own = budgets.country.filter((w) => w.country === number.country);
    const windows = own.length > 0 ? own : budgets.country.filter((w) => w.country === undefined);
    for (const w of windows) {
      const id = `${number.country ?? '??'} ${w.label} window ${Math.floor(command.createdAt / w.windowMs)}#${w.limit}`;
      perCountryWindow.set(id, [...(perCountryWindow.get(id) ?? []), command.idempotencyKey]);
    }
  }
  for (const { times, keys: admittedKeys, firstEvent } of admissions.values()) {
    for (const w of budgets.destination) {
      const most = Math.max(0, ...times.map((t) => inWindow(times, w, t)));
      if (most > w.limit) {
        problems.push(
          `${admittedKeys[0]}: the number of event ${firstEvent}: ${most} admitted in ${w.label}, budget ${w.limit}`,
        );
        keys.push(...admittedKeys);
      }
    }
  }
  for (const [id, admittedKeys] of perCountryWindow) {
    const [name, limit] = id.split('#');
    if (admittedKeys.length > Number(limit)) {
      problems.push(`${admittedKeys[0]}: ${name}: ${admittedKeys.length} admitted, budget ${limit}`);
      keys.push(...admittedKeys);
    }
  }
  return verdict(
    'number_budget',
    'windows over budget per real number (sliding) or country (fixed), numbers canonicalized by the driver',
    problems,
    keys,
  );
}
