import { CredentialsError, InvalidArgumentError, ServiceUnavailableError } from './errors.js';
import { createSigner, type RequestSigner, type SigningOptions, signedHeaders } from './signing.js';
import type { ApiErrorBody } from './wire.js';

// The client's request, retry and time-budget steps: one HTTP attempt (signed, bounded), a retry
// loop that never sleeps past the call's budget, and the reading of an answer.

/** The subset of `fetch` the client uses (inject one in tests). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Statuses after which the same request may be sent again (the idempotency key makes it safe). */
const RETRYABLE = (status: number) => status === 429 || status >= 500;
const BACKOFF_BASE_MS = 200;
const BACKOFF_MAX_MS = 5_000;

/** One HTTP answer, its body read. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** What `send` ends with: an answer to act on, or the service stayed unavailable. */
export type Sent =
  | { readonly kind: 'answer'; readonly answer: Answer }
  | {
      readonly kind: 'gave_up';
      readonly attempts: number;
      readonly last: Answer | undefined;
      readonly failure: unknown;
    };

/** When a call must end (`budgetEnd`) and when its last retry may start (`retryEnd`), epoch ms. */
export interface Limits {
  readonly budgetEnd: number;
  readonly retryEnd: number;
}

/** The client's options with their defaults applied, and its signer (loaded on first use). */
export interface Transport {
  readonly base: URL;
  readonly fetch: FetchLike;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  readonly timeBudgetMs: number;
  readonly attemptTimeoutMs: number;
  readonly maxAttempts: number;
  readonly expiryMarginMs: number;
  readonly signing: SigningOptions | false;
  /** A signer given by the caller: kept even when it fails. */
  readonly fixedSigner: RequestSigner | undefined;
  /** The signer in use; a rejected one built from `signing` is dropped so the next call retries. */
  signer: Promise<RequestSigner> | undefined;
}

/** What {@link createTransport} reads from the client's options. */
export interface TransportOptions {
  readonly baseUrl: string;
  readonly signing: SigningOptions | false;
  readonly timeBudgetMs?: number;
  readonly attemptTimeoutMs?: number;
  readonly maxAttempts?: number;
  readonly expiryMarginMs?: number;
  readonly fetch?: FetchLike;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  readonly signer?: RequestSigner;
}

/** The transport of one client: defaults applied, durations checked. */
export function createTransport(options: TransportOptions): Transport {
  return {
    base: new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`),
    fetch: options.fetch ?? ((url, init) => globalThis.fetch(url, init)),
    now: options.now ?? Date.now,
    sleep: options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    random: options.random ?? Math.random,
    timeBudgetMs: positive('timeBudgetMs', options.timeBudgetMs ?? 5_000),
    attemptTimeoutMs: positive('attemptTimeoutMs', options.attemptTimeoutMs ?? 2_000),
    maxAttempts: options.maxAttempts ?? 6,
    expiryMarginMs: options.expiryMarginMs ?? 5_000,
    signing: options.signing,
    fixedSigner: options.signer,
    signer: options.signer === undefined ? undefined : Promise.resolve(options.signer),
  };
}

/** The limits of a call starting now, with the client's time budget unless the call sets its own. */
export function limitsFor(
  t: Transport,
  budgetMs: number | undefined,
  retryEnd = Number.POSITIVE_INFINITY,
): Limits {
  const budgetEnd = t.now() + positive('timeBudgetMs', budgetMs ?? t.timeBudgetMs);
  return { budgetEnd, retryEnd: Math.min(budgetEnd, retryEnd) };
}

/** The signature headers; a failure to sign (no credentials) is a CredentialsError, never retried. */
async function authHeaders(
  t: Transport,
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<Record<string, string>> {
  const signing = t.signing;
  if (signing === false && t.fixedSigner === undefined) return {};
  try {
    t.signer ??= createSigner(signing === false ? { region: 'local' } : signing);
    return await signedHeaders(
      await t.signer,
      body === undefined ? { method, url, headers } : { method, url, headers, body },
    );
  } catch (error) {
    // A rejected signer is not kept: the next call loads the credentials again.
    if (t.fixedSigner === undefined) t.signer = undefined;
    const detail = error instanceof Error ? error.message : String(error);
    throw new CredentialsError(
      `${method} ${url.pathname}: could not sign the request (${detail}); nothing was sent`,
      { cause: error },
    );
  }
}

/** One attempt, aborted after `timeoutMs`. */
async function once(
  t: Transport,
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
): Promise<Answer> {
  const auth = await authHeaders(t, method, url, headers, body);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await t.fetch(url.toString(), {
      method,
      headers: { ...headers, ...auth },
      ...(body === undefined ? {} : { body }),
      signal: controller.signal,
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends until an answer that is not retryable, the attempts run out, or the next wait would
 * end past `limits.retryEnd`. Each attempt ends by `limits.budgetEnd`.
 */
export async function send(
  t: Transport,
  method: string,
  path: string,
  limits: Limits,
  init: { headers?: Record<string, string>; body?: string; query?: Record<string, string> } = {},
): Promise<Sent> {
  const url = new URL(path.replace(/^\//, ''), t.base);
  for (const [name, value] of Object.entries(init.query ?? {})) url.searchParams.set(name, value);
  const headers = { accept: 'application/json', ...init.headers };
  let last: Answer | undefined;
  let failure: unknown;
  let attempt = 0;
  while (attempt < t.maxAttempts) {
    attempt++;
    const timeoutMs = Math.min(t.attemptTimeoutMs, Math.max(0, limits.budgetEnd - t.now()));
    try {
      last = await once(t, method, url, headers, init.body, timeoutMs);
      failure = undefined;
      if (!RETRYABLE(last.status)) return { kind: 'answer', answer: last };
    } catch (error) {
      if (error instanceof CredentialsError) throw error;
      // A timeout or a network error: the request may or may not have arrived; the key makes a retry safe.
      failure = error;
      last = undefined;
    }
    const wait = retryAfterMs(last, t.now()) ?? backoffMs(attempt, t.random);
    if (attempt >= t.maxAttempts || t.now() + wait >= limits.retryEnd) break;
    await t.sleep(wait);
  }
  return { kind: 'gave_up', attempts: attempt, last, failure };
}

/** A read's answer, or ServiceUnavailableError once its budget ran out. */
export async function read(t: Transport, path: string, query?: Record<string, string>): Promise<Answer> {
  const sent = await send(t, 'GET', path, limitsFor(t, undefined), query === undefined ? {} : { query });
  if (sent.kind === 'answer') return sent.answer;
  throw new ServiceUnavailableError(
    `GET ${path}: the service stayed unavailable for ${sent.attempts} attempt(s)`,
    sent.attempts,
    sent.last?.status,
    sent.last === undefined ? undefined : errorBody(sent.last),
    sent.failure === undefined ? undefined : { cause: sent.failure },
  );
}

/** A duration option: a positive, finite number of milliseconds. */
function positive(name: string, ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new InvalidArgumentError(`${name} must be a positive number of milliseconds`);
  }
  return ms;
}

/** `Retry-After` in whole seconds from now, if the answer has one. */
export function retryAfterSeconds(answer: Answer | undefined, nowMs: number): number | undefined {
  const wait = retryAfterMs(answer, nowMs);
  return wait === undefined ? undefined : Math.ceil(wait / 1000);
}

/** `Retry-After` in milliseconds from now (delta-seconds or an HTTP date), if the answer has one. */
function retryAfterMs(answer: Answer | undefined, nowMs: number): number | undefined {
  const raw = answer?.headers.get('retry-after');
  if (raw === null || raw === undefined || raw.trim() === '') return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim()) * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Full-jitter exponential backoff: uniform in [0, min(max, base * 2^(attempt-1))]. */
function backoffMs(attempt: number, random: () => number): number {
  return Math.floor(random() * Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1)));
}

/** The answer's body as an API error, if it is one. */
export function errorBody(answer: Answer): ApiErrorBody | undefined {
  try {
    const body = JSON.parse(answer.text) as Partial<ApiErrorBody>;
    return typeof body.code === 'string' && typeof body.message === 'string'
      ? (body as ApiErrorBody)
      : undefined;
  } catch {
    return undefined;
  }
}
