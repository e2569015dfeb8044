/**
 * The Twilio adapter's absence logic: when a listing that shows no message of a key may count as
 * proof that none exists (docs/providers/twilio.md). Redaction must be declared off, the list-lag
 * allowance past, the canary (the newest sid of ours, fetched clean and seen in a listing of its
 * number) confirmed for the attempt, with the absence probe (./absence-probe.ts) as its subject in
 * a quiet account, and no redacted message of the account in the attempt's window. The state
 * (canary subjects and verdicts, redaction seen) is per process: redaction seen once stays seen.
 */
import type { Clock } from '../../domain/clock.js';
import type { LookupRef } from '../../ports/sms-provider.js';
import { type AbsenceProbe, createAbsenceProbe, PROBE_DELETE_AFTER_MS } from './absence-probe.js';
import { MESSAGE_SID } from './classification.js';
import { asRecord, IncompleteListing, type TwilioHttp } from './http.js';
import type { TwilioAdapterEvent } from './provider.js';

/**
 * A canary speaks only for messages created around its own creation: Twilio applies Message
 * Redaction to messages as they are processed, so an old message read today says nothing about a
 * redaction switched on since. For an attempt, the canary message must be created no earlier than
 * the attempt's claim minus this allowance for clock skew between us and Twilio.
 */
export const CANARY_SKEW_MS = 60_000;

/** The most recent sid of ours this process saw, with what a canary compares against. */
interface CanarySubject {
  readonly sid: string;
  /** The number it was sent to, when we know it (in memory only, never logged). */
  readonly to: string | undefined;
  /** When we first saw it (our clock): its age bounds the list lag it can reveal. */
  readonly seenAt: number;
}

/** The canary's last verdict. */
type CanaryVerdict =
  | { readonly kind: 'ok'; readonly at: number; readonly sid: string; readonly createdAt: number }
  | { readonly kind: 'list_lag'; readonly at: number; readonly sid: string };

/** Options of {@link createAbsenceWitness} (the adapter's, resolved). */
export interface AbsenceWitnessOptions {
  readonly http: TwilioHttp;
  readonly clock: Clock;
  readonly redaction: 'on' | 'off';
  readonly listLagAllowanceMs: number;
  readonly canaryIntervalMs: number;
  readonly canarySkewMs: number;
  readonly windowScanSkewMs: number;
  readonly messagingServiceSid: string | undefined;
  readonly absenceProbeTo: string | undefined;
  readonly onEvent: ((event: TwilioAdapterEvent) => void) | undefined;
}

/** What the lookups ask the absence logic. */
export interface AbsenceWitness {
  /** A sid of ours the adapter saw (sent, fetched or found), with its number when known: canary material. */
  remember(sid: string, to: string | undefined): void;
  /**
   * Why a complete, readable listing with no message of this key cannot prove absence for the
   * attempt right now; null when it can.
   */
  blocks(ref: LookupRef, signal: AbortSignal): Promise<string | null>;
  /** After a lookup: a probe whose cancel failed is retried even when no absence waits any more. */
  tidy(signal: AbortSignal): Promise<void>;
}

/** What only a message newer than the attempt can unblock: the probe's cue. */
const WAITS_ON_FRESHNESS: ReadonlySet<string> = new Set([
  'absence_disabled:no_canary',
  'absence_disabled:canary_gone',
  'absence_pending:canary_older_than_attempt',
]);

/**
 * The absence probe of this adapter, walking listings of its number; only where it is safe and
 * useful: a messaging service (Twilio schedules only through one), a number we own, and redaction
 * declared off (otherwise absence is off anyway).
 */
function probeFor(options: AbsenceWitnessOptions, keep: (sid: string) => boolean): AbsenceProbe | undefined {
  const { http, clock, absenceProbeTo: to, messagingServiceSid } = options;
  if (to === undefined || messagingServiceSid === undefined || options.redaction !== 'off') return undefined;
  return createAbsenceProbe({
    clock,
    to,
    messagingServiceSid,
    intervalMs: options.canaryIntervalMs,
    request: http.probeRequest,
    walk: async (signal, visit) => {
      try {
        await http.walkListing({ To: to }, signal, (message) => {
          visit(message);
          return false;
        });
        return null;
      } catch (error) {
        if (error instanceof IncompleteListing) return error.detail;
        throw error;
      }
    },
    keep,
  });
}

/**
 * The canary message read again: gone (404), unreadable, redacted (a masked or changed `to`, a
 * blank body) or read clean with its creation time (NaN when unreadable).
 */
async function readCanary(
  http: TwilioHttp,
  subject: CanarySubject,
  signal: AbortSignal,
): Promise<
  | { readonly kind: 'gone' }
  | { readonly kind: 'blocked'; readonly detail: string }
  | { readonly kind: 'redacted'; readonly why: 'masked_to' | 'blank_body' }
  | { readonly kind: 'read'; readonly createdAt: number }
> {
  const { status, json } = await http.getMessage(subject.sid, signal);
  if (status === 404) return { kind: 'gone' };
  if (status !== 200) return { kind: 'blocked', detail: `canary_http_${status}` };
  const message = asRecord(json);
  if (message === null || message.sid !== subject.sid)
    return { kind: 'blocked', detail: 'canary_unreadable' };
  const createdAt = typeof message.date_created === 'string' ? Date.parse(message.date_created) : Number.NaN;
  const to = message.to;
  const masked = typeof to !== 'string' || /X/i.test(to) || (subject.to !== undefined && to !== subject.to);
  const blank = typeof message.body !== 'string' || message.body === '';
  if (masked || blank) return { kind: 'redacted', why: masked ? 'masked_to' : 'blank_body' };
  return { kind: 'read', createdAt };
}

/** Whether a listing of `to` shows message `sid`; a string is why the listing could not be read. */
async function listingShows(
  http: TwilioHttp,
  to: string,
  sid: string,
  signal: AbortSignal,
): Promise<boolean | string> {
  const listing = { visible: false };
  try {
    await http.walkListing({ To: to }, signal, (listed) => {
      listing.visible = listed?.sid === sid;
      return listing.visible;
    });
  } catch (error) {
    if (error instanceof IncompleteListing) return error.detail;
    throw error;
  }
  return listing.visible;
}

/**
 * Whether any message of the account created in the attempt's window is redacted. A message
 * stored under Message Redaction has a masked `to`, so no listing by `To` can return it: only
 * the account's whole listing, read down past the window's start, shows that the window holds no
 * message the `To` listing could have missed. Redaction switched on for a moment and off again
 * (the canary reads only the present) is caught here. A listing that cannot be read that far
 * blocks the proof.
 *
 * Where the scan may stop: Twilio documents its list as sorted by `date_sent`, most recent first,
 * and says nothing of where messages not sent yet (no `date_sent`) go. The scan stops at the first
 * message both created and sent before the window. In a `date_sent` order everything after it
 * was sent earlier still, so created earlier (a message is sent after it is created); in a
 * creation order everything after it was created earlier. A message created long ago but sent
 * only now (Twilio's queue) does not stop the scan in either order. What remains assumed: that
 * Twilio does not list its queued messages after older sent ones ([providers/twilio.md]).
 */
async function scanWindow(
  http: TwilioHttp,
  windowStart: number,
  signal: AbortSignal,
): Promise<
  | { readonly kind: 'blocked'; readonly detail: string }
  | { readonly kind: 'redacted'; readonly sid: string; readonly why: 'masked_to' | 'blank_body' }
  | { readonly kind: 'clean' }
> {
  const seen = { redacted: undefined as { sid: string; why: 'masked_to' | 'blank_body' } | undefined };
  let unreadable = false;
  try {
    await http.walkListing({}, signal, (message) => {
      const created =
        message !== null && typeof message.date_created === 'string'
          ? Date.parse(message.date_created)
          : Number.NaN;
      if (message === null || Number.isNaN(created)) {
        unreadable = true;
        return true;
      }
      if (created < windowStart) {
        // Older than the window: not judged. Sent before it too: every message listed after it
        // is older still, in either order (see above), and the scan ends.
        const sent = typeof message.date_sent === 'string' ? Date.parse(message.date_sent) : Number.NaN;
        return !Number.isNaN(sent) && sent < windowStart;
      }
      const masked = typeof message.to !== 'string' || /X/i.test(message.to);
      const blank = typeof message.body !== 'string' || message.body === '';
      if (masked || blank) {
        seen.redacted = {
          sid: typeof message.sid === 'string' ? message.sid : '',
          why: masked ? 'masked_to' : 'blank_body',
        };
        return true;
      }
      return false;
    });
  } catch (error) {
    if (error instanceof IncompleteListing) return { kind: 'blocked', detail: `window_scan:${error.detail}` };
    throw error;
  }
  if (unreadable) return { kind: 'blocked', detail: 'window_scan:unreadable_message' };
  return seen.redacted === undefined ? { kind: 'clean' } : { kind: 'redacted', ...seen.redacted };
}

/** The absence logic of one adapter (one process). */
export function createAbsenceWitness(options: AbsenceWitnessOptions): AbsenceWitness {
  const {
    http,
    clock,
    redaction,
    listLagAllowanceMs,
    canaryIntervalMs,
    canarySkewMs,
    absenceProbeTo,
    onEvent,
  } = options;

  // Process-local canary state. Redaction seen once stays seen: absence is off until a restart.
  let canarySubject: CanarySubject | undefined;
  // The list-lag probe keeps one sid until it is old enough to be checked: a busy sender's newest
  // sid is always younger than the allowance and could never reveal lag.
  let lagSubject: CanarySubject | undefined;
  let canaryVerdict: CanaryVerdict | undefined;
  let redactionObserved = false;

  const remember = (sid: string, to: string | undefined) => {
    if (!MESSAGE_SID.test(sid)) return;
    if (canarySubject?.sid === sid) return;
    canarySubject = { sid, to, seenAt: clock.now() };
    if (lagSubject === undefined && to !== undefined) lagSubject = canarySubject;
  };

  const probe = probeFor(options, (sid) => sid === canarySubject?.sid || sid === lagSubject?.sid);

  /**
   * Whether reads are confirmed unredacted and list-consistent right now: the canary. It fetches
   * the most recent sid of ours (a masked `to` or blank body: redaction) and looks for it in a
   * listing of its number (missing although older than the list-lag allowance: lag). Null = confirmed.
   */
  const canaryOnce = async (
    signal: AbortSignal,
    attempt: Pick<LookupRef, 'attemptStartedAt' | 'callDeadline'>,
  ): Promise<string | null> => {
    const { attemptStartedAt, callDeadline } = attempt;
    if (redactionObserved) return 'absence_disabled:redaction_observed';
    const now = clock.now();
    const newEnough = (createdAt: number) => createdAt >= attemptStartedAt - canarySkewMs;
    if (canaryVerdict !== undefined && now - canaryVerdict.at < canaryIntervalMs) {
      // A lag verdict stands for one interval, then the canary is asked again.
      if (canaryVerdict.kind === 'list_lag') return 'absence_disabled:list_lag_observed';
      // A verdict counts for an attempt only if it was read after the attempt's call ended (a
      // redaction switched on since an earlier read would be missed) and by a message not older
      // than the attempt; otherwise ask again below, with the newest sid.
      if (newEnough(canaryVerdict.createdAt) && canaryVerdict.at >= callDeadline) return null;
    }
    const subject = canarySubject;
    if (subject === undefined) return 'absence_disabled:no_canary';
    const read = await readCanary(http, subject, signal);
    if (read.kind === 'gone') {
      // Deleted (or another account's): it confirms nothing; wait for the next sid we see.
      if (canarySubject?.sid === subject.sid) canarySubject = undefined;
      return 'absence_disabled:canary_gone';
    }
    if (read.kind === 'blocked') return read.detail;
    if (read.kind === 'redacted') {
      redactionObserved = true;
      onEvent?.({ kind: 'redaction_observed', messageSid: subject.sid, why: read.why });
      return 'absence_disabled:redaction_observed';
    }
    const { createdAt } = read;
    // List consistency: a message older than the allowance must be visible in a listing of its number.
    let lagProbe = lagSubject;
    if (
      lagProbe !== undefined &&
      lagProbe.to === absenceProbeTo &&
      now - lagProbe.seenAt > PROBE_DELETE_AFTER_MS
    ) {
      // An absence probe this old may have been deleted by any process's sweep: missing is no lag.
      lagSubject = undefined;
      lagProbe = undefined;
    }
    const ageMs = lagProbe === undefined ? 0 : now - lagProbe.seenAt;
    if (lagProbe?.to !== undefined && ageMs >= listLagAllowanceMs) {
      const visible = await listingShows(http, lagProbe.to, lagProbe.sid, signal);
      if (typeof visible === 'string') return `canary_listing:${visible}`;
      if (!visible) {
        canaryVerdict = { kind: 'list_lag', at: now, sid: lagProbe.sid };
        onEvent?.({ kind: 'list_lag_observed', messageSid: lagProbe.sid, ageMs });
        // A deleted probe message would look like lag forever: the next sid we see is probed next.
        lagSubject = undefined;
        return 'absence_disabled:list_lag_observed';
      }
      // Seen: the next sid we see becomes the next list-lag probe.
      lagSubject = undefined;
    }
    if (Number.isNaN(createdAt)) return 'canary_unreadable';
    if (!newEnough(createdAt)) {
      // Unredacted, but created before this attempt: it cannot speak for the attempt's message.
      // Absence waits for a message of ours created since (the next send or lookup brings one).
      return 'absence_pending:canary_older_than_attempt';
    }
    canaryVerdict = { kind: 'ok', at: now, sid: subject.sid, createdAt };
    return null;
  };

  /**
   * The canary, with the absence probe as its fresh subject when no message of ours is new enough
   * (a quiet account): the probe, read like any canary, then decides. Null = confirmed.
   */
  const canaryBlocks = async (
    signal: AbortSignal,
    attempt: Pick<LookupRef, 'attemptStartedAt' | 'callDeadline'>,
  ): Promise<string | null> => {
    const blocked = await canaryOnce(signal, attempt);
    if (blocked === null || probe === undefined || !WAITS_ON_FRESHNESS.has(blocked)) return blocked;
    const run = await probe.run(signal);
    if (run.kind === 'none') return run.detail;
    remember(run.sid, absenceProbeTo);
    return canaryOnce(signal, attempt);
  };

  /** Whether any message of the account created in the attempt's window is redacted ({@link scanWindow}). */
  const redactionInWindow = async (
    ref: Pick<LookupRef, 'attemptStartedAt'>,
    signal: AbortSignal,
  ): Promise<string | null> => {
    const scan = await scanWindow(http, ref.attemptStartedAt - options.windowScanSkewMs, signal);
    if (scan.kind === 'blocked') return scan.detail;
    if (scan.kind === 'clean') return null;
    redactionObserved = true;
    onEvent?.({ kind: 'redaction_observed', messageSid: scan.sid, why: scan.why });
    return 'absence_disabled:redaction_in_window';
  };

  return {
    remember,
    async blocks(ref, signal) {
      if (redaction !== 'off') return 'absence_disabled:redaction_on';
      if (clock.now() < ref.callDeadline + listLagAllowanceMs) return 'absence_pending:list_lag_allowance';
      return (await canaryBlocks(signal, ref)) ?? (await redactionInWindow(ref, signal));
    },
    async tidy(signal) {
      if (probe !== undefined && !signal.aborted) await probe.tidy(signal).catch(() => undefined);
    },
  };
}
