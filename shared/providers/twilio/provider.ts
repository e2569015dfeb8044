/**
 * Twilio adapter for the {@link SmsProvider} port, over plain HTTP with the global fetch.
 *
 * - One HTTP call per send, bounded by an AbortSignal at `command.deadline`, never retried here
 *   (retrying a create-message POST is how duplicates happen; the state machine decides retries),
 *   redirects never followed (a followed 307 would re-POST).
 * - `ValidityPeriod` is the command's remaining token life, capped at Twilio's maximum (36000 s)
 *   and never under {@link TWILIO_MIN_VALIDITY_SECONDS} (Twilio recommends more than 5 s).
 * - `StatusCallback` = `<statusCallbackBase>?client_reference=<key>#<attempt>`: Twilio has no
 *   client reference field, and the callback URL is the only place our reference comes back next
 *   to the sid (in the callbacks it posts; the Message resource itself never returns it).
 * - Lookups only read (GET). By sid when one came back. Otherwise by content: list the messages
 *   to the number (and from our sender), match this key's secret inside the body, and conclude
 *   `absent` only under the conditions of {@link TwilioProviderOptions.redaction} and
 *   docs/providers/twilio.md.
 */
import type { Clock } from '../../domain/clock.js';
import { CodedError, InvalidConfigurationError } from '../../domain/errors.js';
import {
  AbsenceProof,
  FindBy,
  isNotSentStatus,
  type LookupOutcome,
  type ProviderCapabilities,
  type ProviderStatus,
  type SendOutcome,
} from '../../domain/provider.js';
import type { LookupRef, SendCommand, SmsProvider } from '../../ports/sms-provider.js';
import {
  type AbsenceProbe,
  createAbsenceProbe,
  isAbsenceProbe,
  PROBE_DELETE_AFTER_MS,
} from './absence-probe.js';
import {
  classifySend,
  MESSAGE_SID,
  normaliseStatus,
  observeTransportError,
  parseJson,
  parseRetryAfter,
  parseSendBody,
  type SendObservation,
  statusDetail,
} from './classification.js';

/** Something the adapter observed that operators must see; never carries a number or a body. */
export type TwilioAdapterEvent =
  | {
      /**
       * The canary message, or a message of the account created around an attempt, came back with a
       * masked `to` or a blank body: absence is off for the process.
       */
      readonly kind: 'redaction_observed';
      readonly messageSid: string;
      readonly why: 'masked_to' | 'blank_body';
    }
  | {
      /** The canary message was missing from a listing of its number although older than the allowance. */
      readonly kind: 'list_lag_observed';
      readonly messageSid: string;
      readonly ageMs: number;
    };

/** Options of {@link createTwilioProvider}. */
export interface TwilioProviderOptions {
  /** `https://api.twilio.com`, or any Twilio-compatible endpoint. No trailing path is required. */
  readonly baseUrl: string;
  readonly accountSid: string;
  readonly authToken: string;
  /** Sender: a Twilio number or alphanumeric sender id. Optional with a messaging service. */
  readonly from?: string;
  /** `MG...`: sent as `MessagingServiceSid` instead of `From` (Twilio picks the sender from its pool). */
  readonly messagingServiceSid?: string;
  /**
   * Where Twilio posts status callbacks (our receipts route). Required: without it no receipt
   * could ever reach us, and the adapter refuses to start.
   */
  readonly statusCallbackBase: string;
  /**
   * What the deployment declares about Twilio Message Redaction. `on` (the default) disables
   * absence proofs: a redacted message (blank body, number masked as `+1415555XXXX`) cannot be
   * matched, so an empty listing proves nothing. `off` allows them, while a periodic canary (a
   * fetch of a recent sid of ours) confirms that reads are not redacted.
   */
  readonly redaction?: 'on' | 'off';
  /** Clock skew allowed between our clock and Twilio's `date_created`; default {@link DEFAULT_CLOCK_SKEW_MS}. */
  readonly clockSkewMs?: number;
  /**
   * How long after creation a message may still be missing from list reads (Twilio does not
   * document list reads as read-after-write consistent). No listing earlier than the call
   * deadline plus this counts towards absence; default {@link DEFAULT_LIST_LAG_ALLOWANCE_MS}.
   */
  readonly listLagAllowanceMs?: number;
  /** How long one canary confirmation stands; default {@link DEFAULT_CANARY_INTERVAL_MS}. */
  readonly canaryIntervalMs?: number;
  /**
   * A number the operator owns (E.164; best a Twilio number of the account): with a messaging
   * service and redaction `off`, an absence proof that waits for a fresh canary creates a
   * scheduled message to it and cancels it at once (./absence-probe.ts), at most once per canary
   * interval. Unset: no probe, and absence in a quiet account waits for other traffic.
   */
  readonly absenceProbeTo?: string;
  /**
   * How much older than an attempt's claim the canary message may be; default {@link CANARY_SKEW_MS}
   * (clock skew only). Larger values trust older canaries: for tests of other conditions only.
   */
  readonly canarySkewMs?: number;
  /**
   * How far before an attempt's claim the account-wide redaction scan reaches (clock skew between
   * us and Twilio's `date_created`); default {@link CANARY_SKEW_MS}.
   */
  readonly windowScanSkewMs?: number;
  /** The port's `name`; default `twilio`. */
  readonly name?: string;
  /** Budget of one whole lookup (all pages and the canary); default {@link DEFAULT_LOOKUP_TIMEOUT_MS}. */
  readonly lookupTimeoutMs?: number;
  /** Page size of list lookups (Twilio allows 1..1000); default 1000. */
  readonly lookupPageSize?: number;
  /** A listing longer than this many pages is inconclusive; default {@link DEFAULT_LOOKUP_MAX_PAGES}. */
  readonly lookupMaxPages?: number;
  /** The only source of "now" for decisions (deadline budget, Retry-After dates, windows). */
  readonly clock: Clock;
  /** Injected for tests; default the global fetch. */
  readonly fetch?: typeof fetch;
  /** Receives operator-relevant observations (for a log line and a metric). */
  readonly onEvent?: (event: TwilioAdapterEvent) => void;
}

/**
 * Twilio finds a message by sid, by our reference through status callbacks, and by content
 * (listing To/From and matching the key's secret). Absence only under conditions this adapter checks.
 */
export const TWILIO_CAPABILITIES: ProviderCapabilities = {
  findBy: [FindBy.id, FindBy.reference, FindBy.content],
  absenceProof: AbsenceProof.conditional,
  receipts: true,
};

/** Twilio's largest accepted ValidityPeriod, in seconds. */
export const TWILIO_MAX_VALIDITY_SECONDS = 36_000;
/** Twilio recommends a ValidityPeriod greater than 5 s; the domain never asks for less. */
export const TWILIO_MIN_VALIDITY_SECONDS = 5;
export const DEFAULT_LOOKUP_TIMEOUT_MS = 3_000;
export const DEFAULT_LOOKUP_PAGE_SIZE = 1_000;
export const DEFAULT_LOOKUP_MAX_PAGES = 20;
/** Messages created up to this long before the attempt's claim (by our clock) are in its window. */
export const DEFAULT_CLOCK_SKEW_MS = 5 * 60_000;
export const DEFAULT_LIST_LAG_ALLOWANCE_MS = 60_000;
export const DEFAULT_CANARY_INTERVAL_MS = 60_000;
/** setTimeout's ceiling: a longer AbortSignal.timeout would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;
const MESSAGING_SERVICE_SID = /^MG[0-9a-fA-F]{32}$/;
/** A shorter secret (a code is 6 digits, a URL far longer) would match too much to mean anything. */
const MIN_SECRET_LENGTH = 4;

type JsonRecord = Record<string, unknown>;

const asRecord = (value: unknown): JsonRecord | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : null;

const inconclusive = (detail: string): LookupOutcome => ({ kind: 'inconclusive', detail });

/** A listed or fetched message's final-status detail (`twilio:30500`), as an object to spread. */
const detailOf = (message: JsonRecord): { detail?: string } => {
  const detail = statusDetail(message.status, message.error_code);
  return detail === undefined ? {} : { detail };
};

/** A listing that could not be read to its end: the reason is the lookup's detail. */
class IncompleteListing extends CodedError {
  readonly code = 'incomplete_listing';
  constructor(readonly detail: string) {
    super(detail);
  }
}

/**
 * Whether `secret` occurs in `body` as a whole token: not glued to a letter or digit on either
 * side, so code `48392` does not match inside `483920`. Only the secret is matched, never the
 * whole body: a messaging service may re-encode the text around it (smart encoding, shortening).
 */
export function bodyCarriesSecret(body: string, secret: string): boolean {
  if (secret === '') return false;
  const isWordChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9]/.test(c);
  for (let at = body.indexOf(secret); at !== -1; at = body.indexOf(secret, at + 1)) {
    if (!isWordChar(body[at - 1]) && !isWordChar(body[at + secret.length])) return true;
  }
  return false;
}

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

/**
 * The settings without which a Twilio provider must not start: a status callback base (an
 * http(s) URL) and a sender (`from` or a well-formed messaging service sid). Throws
 * {@link InvalidConfigurationError} naming the environment variable; returns them normalised.
 */
export function checkTwilioSettings(settings: {
  readonly statusCallbackBase?: string | undefined;
  readonly from?: string | undefined;
  readonly messagingServiceSid?: string | undefined;
  readonly absenceProbeTo?: string | undefined;
}): {
  callbackBase: string;
  from: string | undefined;
  messagingServiceSid: string | undefined;
  absenceProbeTo: string | undefined;
} {
  const callbackBase = settings.statusCallbackBase?.trim() ?? '';
  if (callbackBase === '') {
    throw new InvalidConfigurationError(
      'a Twilio provider needs PROVIDER_STATUS_CALLBACK_BASE (the public URL of POST /v1/receipts/twilio): without it no status callback can reach us',
    );
  }
  if (!URL.canParse(callbackBase) || !/^https?:$/.test(new URL(callbackBase).protocol)) {
    throw new InvalidConfigurationError('PROVIDER_STATUS_CALLBACK_BASE must be an http(s) URL');
  }
  const from = settings.from === undefined || settings.from === '' ? undefined : settings.from;
  const messagingServiceSid =
    settings.messagingServiceSid === undefined || settings.messagingServiceSid === ''
      ? undefined
      : settings.messagingServiceSid;
  if (messagingServiceSid !== undefined && !MESSAGING_SERVICE_SID.test(messagingServiceSid)) {
    throw new InvalidConfigurationError('PROVIDER_MESSAGING_SERVICE_SID must match ^MG[0-9a-fA-F]{32}$');
  }
  if (from === undefined && messagingServiceSid === undefined) {
    throw new InvalidConfigurationError(
      'a Twilio provider needs a sender: PROVIDER_FROM or PROVIDER_MESSAGING_SERVICE_SID',
    );
  }
  const absenceProbeTo =
    settings.absenceProbeTo === undefined || settings.absenceProbeTo === ''
      ? undefined
      : settings.absenceProbeTo;
  if (absenceProbeTo !== undefined && !/^\+[1-9]\d{6,14}$/.test(absenceProbeTo)) {
    throw new InvalidConfigurationError('PROVIDER_ABSENCE_PROBE_TO must be an E.164 number');
  }
  if (absenceProbeTo !== undefined && messagingServiceSid === undefined) {
    // Twilio schedules only with a messaging service; without one it would send the probe at once.
    throw new InvalidConfigurationError(
      'PROVIDER_ABSENCE_PROBE_TO needs PROVIDER_MESSAGING_SERVICE_SID: Twilio schedules messages only through a messaging service',
    );
  }
  return { callbackBase, from, messagingServiceSid, absenceProbeTo };
}

/**
 * Builds the Twilio provider. Throws {@link InvalidConfigurationError} on a missing or malformed
 * option (a deployment error, found at start-up); every call outcome is returned, never thrown.
 */
export function createTwilioProvider(options: TwilioProviderOptions): SmsProvider {
  const base = options.baseUrl.replace(/\/+$/, '');
  if (!URL.canParse(base)) throw new InvalidConfigurationError('twilio baseUrl is not a URL');
  const { callbackBase, from, messagingServiceSid, absenceProbeTo } = checkTwilioSettings(options);
  const redaction = options.redaction ?? 'on';
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const clock = options.clock;
  const lookupTimeoutMs = options.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS;
  const skewMs = options.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS;
  const listLagAllowanceMs = options.listLagAllowanceMs ?? DEFAULT_LIST_LAG_ALLOWANCE_MS;
  const canaryIntervalMs = options.canaryIntervalMs ?? DEFAULT_CANARY_INTERVAL_MS;
  const canarySkewMs = options.canarySkewMs ?? CANARY_SKEW_MS;
  const windowScanSkewMs = options.windowScanSkewMs ?? CANARY_SKEW_MS;
  const pageSize = Math.min(
    1000,
    Math.max(1, Math.floor(options.lookupPageSize ?? DEFAULT_LOOKUP_PAGE_SIZE)),
  );
  const maxPages = options.lookupMaxPages ?? DEFAULT_LOOKUP_MAX_PAGES;
  const messagesUrl = `${base}/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/Messages`;
  const headers = {
    authorization: `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`,
    accept: 'application/json',
  };

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

  const statusCallbackFor = (clientReference: string): string => {
    const url = new URL(callbackBase);
    url.searchParams.set('client_reference', clientReference);
    return url.toString();
  };

  /** One POST, reduced to what classification needs. Never throws. */
  const observeSend = async (form: URLSearchParams, budgetMs: number): Promise<SendObservation> => {
    const signal = AbortSignal.timeout(Math.min(budgetMs, MAX_TIMER_MS));
    try {
      const response = await fetchImpl(`${messagesUrl}.json`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
        signal,
        redirect: 'manual',
      });
      // The body is read under the same deadline: a 201 whose sid never arrives is still unknown.
      const text = await response.text();
      return {
        kind: 'http',
        status: response.status,
        retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), clock.now()),
        body: parseSendBody(text),
      };
    } catch (error) {
      return observeTransportError(error, signal.aborted);
    }
  };

  const getJson = async (url: string, signal: AbortSignal): Promise<{ status: number; json: unknown }> => {
    const response = await fetchImpl(url, { method: 'GET', headers, signal, redirect: 'manual' });
    const text = await response.text();
    return { status: response.status, json: parseJson(text) };
  };

  /** The probe's writes: create (no sid), cancel (a sid and a form), delete (a sid). Throws on transport errors. */
  const probeRequest = async (
    method: 'POST' | 'DELETE',
    sid: string | undefined,
    form: URLSearchParams | undefined,
    signal: AbortSignal,
  ): Promise<{ status: number; json: JsonRecord | null }> => {
    const url = sid === undefined ? `${messagesUrl}.json` : `${messagesUrl}/${encodeURIComponent(sid)}.json`;
    const response = await fetchImpl(url, {
      method,
      headers:
        form === undefined ? headers : { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      ...(form === undefined ? {} : { body: form.toString() }),
      signal,
      redirect: 'manual',
    });
    const text = await response.text();
    return { status: response.status, json: asRecord(parseJson(text)) };
  };

  /** A `next_page_uri` we may follow: relative to the base, or absolute on the base. Never another host. */
  const resolveNextPage = (next: string): string | null => {
    if (next.startsWith('/') && !next.startsWith('//')) return `${base}${next}`;
    if (next.startsWith(`${base}/`)) return next;
    return null;
  };

  /**
   * Every message of a listing, all pages, newest first. Throws {@link IncompleteListing} when the
   * listing cannot be read to its end (HTTP error, unreadable page, page limit, loop, foreign host).
   * `visit` may stop the walk early by returning true.
   */
  const walkListing = async (
    filters: Record<string, string>,
    signal: AbortSignal,
    visit: (message: JsonRecord | null) => boolean,
  ): Promise<void> => {
    const seen = new Set<string>();
    let url: string | null =
      `${messagesUrl}.json?${new URLSearchParams({ ...filters, PageSize: String(pageSize) })}`;
    for (let pages = 0; url !== null; pages += 1) {
      if (pages >= maxPages) throw new IncompleteListing('too_many_pages');
      if (seen.has(url)) throw new IncompleteListing('pagination_loop');
      seen.add(url);
      const { status, json } = await getJson(url, signal);
      if (status !== 200) throw new IncompleteListing(`http_${status}`);
      const page = asRecord(json);
      const listed = page?.messages;
      if (page === null || !Array.isArray(listed)) throw new IncompleteListing('unreadable_page');
      for (const item of listed) if (visit(asRecord(item))) return;
      const next = page.next_page_uri;
      if (next === null || next === undefined) {
        url = null;
      } else if (typeof next === 'string') {
        url = resolveNextPage(next);
        if (url === null) throw new IncompleteListing('foreign_next_page');
      } else {
        throw new IncompleteListing('unreadable_page');
      }
    }
  };

  const lookupBySid = async (ref: LookupRef, sid: string, signal: AbortSignal): Promise<LookupOutcome> => {
    const { status, json } = await getJson(`${messagesUrl}/${encodeURIComponent(sid)}.json`, signal);
    // A 404 for a sid Twilio itself returned is odd (deleted, wrong account): never proof of absence.
    if (status === 404) return inconclusive('sid_not_found');
    if (status !== 200) return inconclusive(`http_${status}`);
    const message = asRecord(json);
    if (message === null || message.sid !== sid) return inconclusive('unreadable_message');
    remember(sid, ref.to);
    return {
      kind: 'found',
      messageId: sid,
      status: normaliseStatus(message.status, message.error_code),
      // The sid in the ref is the one this attempt's send returned.
      attempt: ref.attempt,
      ...detailOf(message),
    };
  };

  // The probe only where it is safe and useful: a messaging service (Twilio schedules only through
  // one), a number we own, and redaction declared off (otherwise absence is off anyway).
  const probe: AbsenceProbe | undefined =
    absenceProbeTo !== undefined && messagingServiceSid !== undefined && redaction === 'off'
      ? createAbsenceProbe({
          clock,
          to: absenceProbeTo,
          messagingServiceSid,
          intervalMs: canaryIntervalMs,
          request: probeRequest,
          walk: async (signal, visit) => {
            try {
              await walkListing({ To: absenceProbeTo }, signal, (message) => {
                visit(message);
                return false;
              });
              return null;
            } catch (error) {
              if (error instanceof IncompleteListing) return error.detail;
              throw error;
            }
          },
          keep: (sid) => sid === canarySubject?.sid || sid === lagSubject?.sid,
        })
      : undefined;

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
    const { status, json } = await getJson(`${messagesUrl}/${encodeURIComponent(subject.sid)}.json`, signal);
    if (status === 404) {
      // Deleted (or another account's): it confirms nothing; wait for the next sid we see.
      if (canarySubject?.sid === subject.sid) canarySubject = undefined;
      return 'absence_disabled:canary_gone';
    }
    if (status !== 200) return `canary_http_${status}`;
    const message = asRecord(json);
    if (message === null || message.sid !== subject.sid) return 'canary_unreadable';
    const createdAt =
      typeof message.date_created === 'string' ? Date.parse(message.date_created) : Number.NaN;
    const to = message.to;
    const masked = typeof to !== 'string' || /X/i.test(to) || (subject.to !== undefined && to !== subject.to);
    const blank = typeof message.body !== 'string' || message.body === '';
    if (masked || blank) {
      redactionObserved = true;
      options.onEvent?.({
        kind: 'redaction_observed',
        messageSid: subject.sid,
        why: masked ? 'masked_to' : 'blank_body',
      });
      return 'absence_disabled:redaction_observed';
    }
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
      const listing = { visible: false };
      try {
        await walkListing({ To: lagProbe.to }, signal, (listed) => {
          listing.visible = listed?.sid === lagProbe.sid;
          return listing.visible;
        });
      } catch (error) {
        if (error instanceof IncompleteListing) return `canary_listing:${error.detail}`;
        throw error;
      }
      if (!listing.visible) {
        canaryVerdict = { kind: 'list_lag', at: now, sid: lagProbe.sid };
        options.onEvent?.({ kind: 'list_lag_observed', messageSid: lagProbe.sid, ageMs });
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

  /** What only a message newer than the attempt can unblock: the probe's cue. */
  const WAITS_ON_FRESHNESS: ReadonlySet<string> = new Set([
    'absence_disabled:no_canary',
    'absence_disabled:canary_gone',
    'absence_pending:canary_older_than_attempt',
  ]);

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

  /**
   * Whether any message of the account created in the attempt's window is redacted. A message
   * stored under Message Redaction has a masked `to`, so no listing by `To` can return it: only
   * the account's whole listing, read down past the window's start, shows that the window holds no
   * message the `To` listing could have missed. Redaction switched on for a moment and off again
   * (the canary reads only the present) is caught here. Null = none; a listing that cannot be read
   * that far blocks the proof.
   *
   * Where the scan may stop: Twilio documents its list as sorted by `date_sent`, most recent first,
   * and says nothing of where messages not sent yet (no `date_sent`) go. The scan stops at the first
   * message both created and sent before the window. In a `date_sent` order everything after it
   * was sent earlier still, so created earlier (a message is sent after it is created); in a
   * creation order everything after it was created earlier. A message created long ago but sent
   * only now (Twilio's queue) does not stop the scan in either order. What remains assumed: that
   * Twilio does not list its queued messages after older sent ones ([providers/twilio.md]).
   */
  const redactionInWindow = async (
    ref: Pick<LookupRef, 'attemptStartedAt'>,
    signal: AbortSignal,
  ): Promise<string | null> => {
    const windowStart = ref.attemptStartedAt - windowScanSkewMs;
    const seen = { redacted: undefined as { sid: string; why: 'masked_to' | 'blank_body' } | undefined };
    let unreadable = false;
    try {
      await walkListing({}, signal, (message) => {
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
      if (error instanceof IncompleteListing) return `window_scan:${error.detail}`;
      throw error;
    }
    if (unreadable) return 'window_scan:unreadable_message';
    if (seen.redacted !== undefined) {
      redactionObserved = true;
      options.onEvent?.({
        kind: 'redaction_observed',
        messageSid: seen.redacted.sid,
        why: seen.redacted.why,
      });
      return 'absence_disabled:redaction_in_window';
    }
    return null;
  };

  /**
   * Lists the messages to `ref.to` (from our sender when we have a fixed `From`; Twilio's list
   * filters are To, From and DateSent only, so with a messaging service the listing is by To),
   * all pages, and matches this key's secret inside each readable body. No `DateSent` filter:
   * `date_sent` is null while a message is queued, so a date-filtered listing would miss exactly
   * the accepted-but-not-yet-sent message we look for.
   */
  const lookupByContent = async (ref: LookupRef, signal: AbortSignal): Promise<LookupOutcome> => {
    // Without a secret nothing can be matched, so an empty listing would prove nothing either.
    if (ref.secret.length < MIN_SECRET_LENGTH) return inconclusive('content:no_secret');
    const windowStart = ref.attemptStartedAt - skewMs;
    // Mutated by the visitor (an object, so the compiler does not narrow it away across the await).
    const seen = {
      best: undefined as { sid: string; status: ProviderStatus; detail?: string } | undefined,
      unreadableMatch: false,
      maskedNumbers: 0,
      blankBodies: 0,
      unreadable: 0,
    };
    const filters: Record<string, string> = { To: ref.to, ...(from === undefined ? {} : { From: from }) };
    try {
      await walkListing(filters, signal, (message) => {
        if (message === null) {
          seen.unreadable += 1;
          return false;
        }
        const direction = message.direction;
        // Inbound messages (replies to us) are not ours to find; a missing direction could be anything.
        if (typeof direction === 'string' && !direction.startsWith('outbound')) return false;
        // Our absence probes (addressed to our own number) are never a user's message.
        if (isAbsenceProbe(message)) return false;
        const body = message.body;
        if (typeof body === 'string' && bodyCarriesSecret(body, ref.secret)) {
          const sid = message.sid;
          if (typeof sid !== 'string' || !MESSAGE_SID.test(sid)) {
            seen.unreadableMatch = true;
            return false;
          }
          const status = normaliseStatus(message.status, message.error_code);
          // Newest first: the first match that may have reached the user decides. A not-sent one
          // is kept only until something better turns up.
          if (!isNotSentStatus(status)) {
            seen.best = { sid, status, ...detailOf(message) };
            return true;
          }
          seen.best ??= { sid, status, ...detailOf(message) };
          return false;
        }
        // Any age counts for a match (an earlier attempt found late is found); only messages in
        // the attempt's window must be readable for a listing to prove absence.
        const created =
          typeof message.date_created === 'string' ? Date.parse(message.date_created) : Number.NaN;
        if (!Number.isNaN(created) && created < windowStart) return false;
        if (typeof body !== 'string' || body === '') seen.blankBodies += 1;
        if (message.to !== ref.to) seen.maskedNumbers += 1;
        return false;
      });
    } catch (error) {
      if (error instanceof IncompleteListing) return inconclusive(error.detail);
      throw error;
    }
    /** Why this listing cannot show that no other message exists; null when it can. */
    const proofBlock = async (): Promise<string | null> => {
      if (seen.unreadableMatch) return 'unreadable_match';
      if (seen.unreadable > 0) return 'content:unreadable_message';
      if (seen.maskedNumbers > 0) return 'content:masked_number';
      if (seen.blankBodies > 0) return 'content:blank_body';
      if (redaction !== 'off') return 'absence_disabled:redaction_on';
      if (clock.now() < ref.callDeadline + listLagAllowanceMs) return 'absence_pending:list_lag_allowance';
      return (await canaryBlocks(signal, ref)) ?? (await redactionInWindow(ref, signal));
    };
    const found = seen.best;
    if (found !== undefined) {
      // "Every message with this secret was never handed to a carrier" is a negative claim, like
      // absence: an invisible newer attempt could have been delivered. It needs the same proof.
      if (isNotSentStatus(found.status)) {
        const blocked = await proofBlock();
        if (blocked !== null) return inconclusive(`content:not_sent_only:${blocked}`);
      }
      remember(found.sid, ref.to);
      // Content cannot tell this key's attempts apart (they carry the same secret): no `attempt`.
      return {
        kind: 'found',
        messageId: found.sid,
        status: found.status,
        ...(found.detail === undefined ? {} : { detail: found.detail }),
      };
    }
    const blocked = await proofBlock();
    if (blocked !== null) return inconclusive(blocked);
    // Complete, readable, unredacted, list-consistent: this read shows no message. The domain
    // still needs two such reads a settle time apart, both after the call deadline.
    return { kind: 'absent' };
  };

  return {
    name: options.name ?? 'twilio',
    capabilities: TWILIO_CAPABILITIES,

    async send(command: SendCommand): Promise<SendOutcome> {
      // The sender never calls with under 5 s of token life left: these are caller bugs,
      // answered without a call. Permanent, because the same command can only get worse.
      if (!Number.isFinite(command.validityPeriodSeconds)) {
        return { kind: 'not_sent_permanent', detail: 'invalid_validity_period' };
      }
      const validity = Math.min(Math.floor(command.validityPeriodSeconds), TWILIO_MAX_VALIDITY_SECONDS);
      if (validity < TWILIO_MIN_VALIDITY_SECONDS)
        return { kind: 'not_sent_permanent', detail: 'no_validity_left' };
      // A call that may not start is definitely not sent; whether another may follow is the sender's call.
      const budgetMs = command.deadline - clock.now();
      if (!(budgetMs > 0)) return { kind: 'not_sent_retryable', detail: 'deadline_passed' };
      const form = new URLSearchParams({ To: command.to });
      if (messagingServiceSid !== undefined) form.set('MessagingServiceSid', messagingServiceSid);
      if (from !== undefined) form.set('From', from);
      form.set('Body', command.body);
      form.set('ValidityPeriod', String(validity));
      form.set('StatusCallback', statusCallbackFor(command.clientReference));
      const outcome = classifySend(await observeSend(form, budgetMs));
      if (outcome.kind === 'accepted') remember(outcome.messageId, command.to);
      else if (outcome.kind === 'unknown' && outcome.messageId !== undefined)
        remember(outcome.messageId, command.to);
      return outcome;
    },

    async lookup(ref: LookupRef): Promise<LookupOutcome> {
      const signal = AbortSignal.timeout(Math.min(Math.max(1, lookupTimeoutMs), MAX_TIMER_MS));
      try {
        return ref.messageId === undefined
          ? await lookupByContent(ref, signal)
          : await lookupBySid(ref, ref.messageId, signal);
      } catch (error) {
        const observed = observeTransportError(error, signal.aborted);
        return inconclusive(observed.timedOut ? 'timeout' : `transport_${observed.code ?? 'error'}`);
      } finally {
        // A probe whose cancel failed is retried even when no absence waits any more.
        if (probe !== undefined && !signal.aborted) await probe.tidy(signal).catch(() => undefined);
      }
    },
  };
}
