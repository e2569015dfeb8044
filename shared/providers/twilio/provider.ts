/**
 * Twilio adapter for the {@link SmsProvider} port, over plain HTTP with the global fetch.
 *
 * - One HTTP call per send, bounded by an AbortSignal at `command.deadline`, never retried here
 *   (retrying a create-message POST is how duplicates happen; the state machine decides retries),
 *   redirects never followed (a followed 307 would re-POST).
 * - `ValidityPeriod` is the command's remaining token life, capped at Twilio's maximum (36000 s),
 *   so Twilio will not deliver a stale reset either.
 * - `StatusCallback` carries `client_reference` as a query parameter: Twilio has no client
 *   reference field, and the callback URL is the only caller-chosen value a message keeps.
 * - Lookups only read (GET). By sid when one came back; otherwise by listing every message to the
 *   number and matching the `status_callback` extension (see {@link TwilioProviderOptions}).
 */
import type { Clock } from '../../domain/clock.js';
import { InvalidConfigurationError } from '../../domain/errors.js';
import {
  AbsenceProof,
  FindBy,
  type LookupOutcome,
  type LookupRef,
  type ProviderCapabilities,
  type SendCommand,
  type SendOutcome,
  type SmsProvider,
} from '../../domain/provider.js';
import {
  classifySend,
  MESSAGE_SID,
  normaliseStatus,
  observeTransportError,
  parseJson,
  parseRetryAfter,
  parseSendBody,
  type SendObservation,
} from './classification.js';

/** Options of {@link createTwilioProvider}. */
export interface TwilioProviderOptions {
  /** `https://api.twilio.com`, or the simulator's URL. No trailing path is required. */
  readonly baseUrl: string;
  readonly accountSid: string;
  readonly authToken: string;
  /** Sender: a Twilio number or alphanumeric sender id. */
  readonly from: string;
  /** The port's `name`; default `twilio`. */
  readonly name?: string;
  /** Budget of one whole lookup (all pages); default {@link DEFAULT_LOOKUP_TIMEOUT_MS}. */
  readonly lookupTimeoutMs?: number;
  /** Page size of list lookups (Twilio allows 1..1000); default 1000. */
  readonly lookupPageSize?: number;
  /** A listing longer than this many pages is inconclusive; default {@link DEFAULT_LOOKUP_MAX_PAGES}. */
  readonly lookupMaxPages?: number;
  /** Where Twilio posts status callbacks; default `${baseUrl}/_callbacks/status`. */
  readonly statusCallbackBase?: string;
  /** The only source of "now" for decisions (deadline budget, Retry-After dates, relevance). */
  readonly clock: Clock;
  /** Injected for tests; default the global fetch. */
  readonly fetch?: typeof fetch;
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
export const DEFAULT_LOOKUP_TIMEOUT_MS = 3_000;
export const DEFAULT_LOOKUP_PAGE_SIZE = 1_000;
export const DEFAULT_LOOKUP_MAX_PAGES = 20;
/**
 * A listed message created this long before `ref.attemptStartedAt` cannot be the attempt even with
 * clock skew, so it does not need a `status_callback` for the listing to prove absence.
 */
export const NOT_BEFORE_SKEW_MS = 3_600_000;
/** setTimeout's ceiling: a longer AbortSignal.timeout would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

type JsonRecord = Record<string, unknown>;

const asRecord = (value: unknown): JsonRecord | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : null;

const inconclusive = (detail: string): LookupOutcome => ({ kind: 'inconclusive', detail });

/**
 * What a listed message's `status_callback` says about its client reference: `known` (the field is a
 * readable URL; `reference` is its `client_reference`, null if it has none, so it is not one of
 * ours) or `unknown` (field missing, null or unreadable: it could be anything).
 */
function callbackReference(
  message: JsonRecord,
): { kind: 'known'; reference: string | null } | { kind: 'unknown' } {
  const callback = message.status_callback;
  if (typeof callback !== 'string') return { kind: 'unknown' };
  try {
    return { kind: 'known', reference: new URL(callback).searchParams.get('client_reference') };
  } catch {
    return { kind: 'unknown' };
  }
}

/**
 * Builds the Twilio provider. Throws {@link InvalidConfigurationError} on a malformed URL option
 * (a deployment error, found at start-up); every call outcome is returned, never thrown.
 */
export function createTwilioProvider(options: TwilioProviderOptions): SmsProvider {
  const base = options.baseUrl.replace(/\/+$/, '');
  const callbackBase = options.statusCallbackBase ?? `${base}/_callbacks/status`;
  for (const [name, value] of [
    ['baseUrl', base],
    ['statusCallbackBase', callbackBase],
  ] as const) {
    if (!URL.canParse(value)) throw new InvalidConfigurationError(`twilio ${name} is not a URL`);
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const clock = options.clock;
  const lookupTimeoutMs = options.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS;
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

  /** A `next_page_uri` we may follow: relative to the base, or absolute on the base. Never another host. */
  const resolveNextPage = (next: string): string | null => {
    if (next.startsWith('/') && !next.startsWith('//')) return `${base}${next}`;
    if (next.startsWith(`${base}/`)) return next;
    return null;
  };

  const lookupBySid = async (ref: LookupRef, sid: string, signal: AbortSignal): Promise<LookupOutcome> => {
    const { status, json } = await getJson(`${messagesUrl}/${encodeURIComponent(sid)}.json`, signal);
    // A 404 for a sid Twilio itself returned is odd (wrong account, data lag): never proof of absence.
    if (status === 404) return inconclusive('sid_not_found');
    if (status !== 200) return inconclusive(`http_${status}`);
    const message = asRecord(json);
    if (message === null || message.sid !== sid) return inconclusive('unreadable_message');
    const callback = callbackReference(message);
    if (
      callback.kind === 'known' &&
      callback.reference !== null &&
      callback.reference !== ref.clientReference
    ) {
      return inconclusive('client_reference_mismatch');
    }
    return { kind: 'found', messageId: sid, status: normaliseStatus(message.status) };
  };

  /**
   * Lists every message to `ref.to` (all pages) and matches `status_callback`'s client_reference.
   * No `DateSent` filter: Twilio filters on `date_sent`, which is null while a message is queued,
   * so a date-filtered listing would miss exactly the accepted-but-not-yet-sent message we look for.
   */
  const lookupByReference = async (ref: LookupRef, signal: AbortSignal): Promise<LookupOutcome> => {
    const oldestRelevant = ref.attemptStartedAt - NOT_BEFORE_SKEW_MS;
    const seen = new Set<string>();
    let url: string | null =
      `${messagesUrl}.json?${new URLSearchParams({ To: ref.to, PageSize: String(pageSize) })}`;
    let provable = true;
    for (let pages = 0; url !== null; pages += 1) {
      if (pages >= maxPages) return inconclusive('too_many_pages');
      if (seen.has(url)) return inconclusive('pagination_loop');
      seen.add(url);
      const { status, json } = await getJson(url, signal);
      if (status !== 200) return inconclusive(`http_${status}`);
      const page = asRecord(json);
      const listed = page?.messages;
      if (page === null || !Array.isArray(listed)) return inconclusive('unreadable_page');
      for (const item of listed) {
        const message = asRecord(item);
        if (message === null) {
          provable = false;
          continue;
        }
        const callback = callbackReference(message);
        if (callback.kind === 'known' && callback.reference === ref.clientReference) {
          if (typeof message.sid !== 'string' || !MESSAGE_SID.test(message.sid))
            return inconclusive('unreadable_match');
          return { kind: 'found', messageId: message.sid, status: normaliseStatus(message.status) };
        }
        if (callback.kind === 'unknown') {
          const created =
            typeof message.date_created === 'string' ? Date.parse(message.date_created) : Number.NaN;
          if (Number.isNaN(created) || created >= oldestRelevant) provable = false;
        }
      }
      const next = page.next_page_uri;
      if (next === null) {
        url = null;
      } else if (typeof next === 'string') {
        url = resolveNextPage(next);
        if (url === null) return inconclusive('foreign_next_page');
      } else {
        return inconclusive('unreadable_page');
      }
    }
    return provable ? { kind: 'absent' } : inconclusive('messages_without_status_callback');
  };

  return {
    name: options.name ?? 'twilio',
    capabilities: TWILIO_CAPABILITIES,

    async send(command: SendCommand): Promise<SendOutcome> {
      // The sender never calls with under a second of token life left: these are caller bugs,
      // answered without a call. Permanent, because the same command can only get worse.
      if (!Number.isFinite(command.validityPeriodSeconds)) {
        return { kind: 'not_sent_permanent', detail: 'invalid_validity_period' };
      }
      const validity = Math.min(Math.floor(command.validityPeriodSeconds), TWILIO_MAX_VALIDITY_SECONDS);
      if (validity < 1) return { kind: 'not_sent_permanent', detail: 'no_validity_left' };
      // A call that may not start is definitely not sent; whether another may follow is the sender's call.
      const budgetMs = command.deadline - clock.now();
      if (!(budgetMs > 0)) return { kind: 'not_sent_retryable', detail: 'deadline_passed' };
      const form = new URLSearchParams({
        To: command.to,
        From: options.from,
        Body: command.body,
        ValidityPeriod: String(validity),
        StatusCallback: statusCallbackFor(command.clientReference),
      });
      return classifySend(await observeSend(form, budgetMs));
    },

    async lookup(ref: LookupRef): Promise<LookupOutcome> {
      const signal = AbortSignal.timeout(Math.min(Math.max(1, lookupTimeoutMs), MAX_TIMER_MS));
      try {
        return ref.messageId === undefined
          ? await lookupByReference(ref, signal)
          : await lookupBySid(ref, ref.messageId, signal);
      } catch (error) {
        const observed = observeTransportError(error, signal.aborted);
        return inconclusive(observed.timedOut ? 'timeout' : `transport_${observed.code ?? 'error'}`);
      }
    },
  };
}
