/**
 * The Twilio adapter's HTTP client (the REST API's Messages resource over the global fetch): one
 * POST per send under its deadline, never retried and never redirected (a followed 307 would
 * re-POST); GETs of one message or of a listing walked to its end; the absence probe's writes.
 * It classifies nothing: `./classification.ts` reads what it returns.
 */
import type { Clock } from '../../domain/clock.js';
import { CodedError } from '../../domain/errors.js';
import {
  observeTransportError,
  parseJson,
  parseRetryAfter,
  parseSendBody,
  type SendObservation,
} from './classification.js';

/** A message or page of the API, as parsed JSON. */
export type JsonRecord = Record<string, unknown>;

/** setTimeout's ceiling: a longer AbortSignal.timeout would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

export const asRecord = (value: unknown): JsonRecord | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : null;

/** A listing that could not be read to its end: the reason is the lookup's detail. */
export class IncompleteListing extends CodedError {
  readonly code = 'incomplete_listing';
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** Options of {@link createTwilioHttp}. */
export interface TwilioHttpOptions {
  /** Without a trailing slash. */
  readonly base: string;
  readonly accountSid: string;
  readonly authToken: string;
  readonly fetch: typeof fetch;
  /** For Retry-After dates. */
  readonly clock: Clock;
  /** Page size of listings (1..1000). */
  readonly pageSize: number;
  /** A listing longer than this many pages is incomplete. */
  readonly maxPages: number;
}

/** The requests the adapter makes. */
export interface TwilioHttp {
  /** One create-message POST, reduced to what classification needs. Never throws. */
  observeSend(form: URLSearchParams, budgetMs: number): Promise<SendObservation>;
  /** One message by sid. Throws on transport errors. */
  getMessage(sid: string, signal: AbortSignal): Promise<{ status: number; json: unknown }>;
  /** The probe's writes: create (no sid), cancel (a sid and a form), delete (a sid). Throws on transport errors. */
  probeRequest(
    method: 'POST' | 'DELETE',
    sid: string | undefined,
    form: URLSearchParams | undefined,
    signal: AbortSignal,
  ): Promise<{ status: number; json: JsonRecord | null }>;
  /**
   * Every message of a listing, all pages, newest first. Throws {@link IncompleteListing} when the
   * listing cannot be read to its end (HTTP error, unreadable page, page limit, loop, foreign host).
   * `visit` may stop the walk early by returning true.
   */
  walkListing(
    filters: Record<string, string>,
    signal: AbortSignal,
    visit: (message: JsonRecord | null) => boolean,
  ): Promise<void>;
}

/** The Twilio HTTP client of one account. */
export function createTwilioHttp(options: TwilioHttpOptions): TwilioHttp {
  const { base, clock, pageSize, maxPages } = options;
  const fetchImpl = options.fetch;
  const messagesUrl = `${base}/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/Messages`;
  const headers = {
    authorization: `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`,
    accept: 'application/json',
  };

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

  const probeRequest: TwilioHttp['probeRequest'] = async (method, sid, form, signal) => {
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

  const walkListing: TwilioHttp['walkListing'] = async (filters, signal, visit) => {
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

  return {
    observeSend,
    getMessage: (sid, signal) => getJson(`${messagesUrl}/${encodeURIComponent(sid)}.json`, signal),
    probeRequest,
    walkListing,
  };
}
