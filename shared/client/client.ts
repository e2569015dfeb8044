import { deriveIdempotencyKey, IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency-key.js';
import {
  CredentialsError,
  InvalidArgumentError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from './errors.js';
import { createSigner, type RequestSigner, type SigningOptions, signedHeaders } from './signing.js';
import type { AdmitRequest, ApiErrorBody, EvidenceView, NotificationView } from './wire.js';

export type { AdmitRequest, ApiErrorBody, EvidenceView, NotificationView } from './wire.js';

/**
 * The call's time budget ran out (or, for `admit`, the token would expire) while the service was
 * unavailable: timeouts, network errors, 5xx, 503 or API Gateway's throttling (429 without a
 * code). The request may or may not have arrived; calling again with the same key is safe.
 */
export interface Unavailable {
  readonly kind: 'unavailable';
  /** The last answer's `Retry-After`, in seconds; `undefined` after a timeout or network error. */
  readonly retryAfterSeconds: number | undefined;
  readonly attempts: number;
  /** The last answer's status; `undefined` when the last attempt got no answer. */
  readonly lastStatus: number | undefined;
  readonly error: ApiErrorBody | undefined;
  /** The last attempt's timeout or network error, if it had no answer. */
  readonly cause?: unknown;
}

/** Every expected outcome of `admit`; faults throw (see `errors.ts`). */
export type AdmitOutcome =
  | { readonly kind: 'admitted'; readonly notification: NotificationView; readonly location: string }
  | { readonly kind: 'replayed'; readonly notification: NotificationView }
  /**
   * 409: the key was used with a different payload (`idempotency_key_reused`), or another key
   * already admitted this event with a different payload (`event_already_admitted`; the message
   * names that key). A second key with the same payload is `replayed`, with the first command.
   */
  | { readonly kind: 'conflict'; readonly error: ApiErrorBody }
  /** 422: invalid fields, already expired, or a destination the deployment does not send to. */
  | { readonly kind: 'rejected'; readonly error: ApiErrorBody }
  /**
   * 429: the destination's budget is spent, and its `Retry-After` ends after the call's time
   * budget (or after the token's expiry): nothing was admitted. Ask again after `retryAfterSeconds`.
   */
  | {
      readonly kind: 'rate_limited';
      readonly error: ApiErrorBody;
      readonly retryAfterSeconds: number | undefined;
    }
  | Unavailable;

/** Every expected outcome of `confirm`; faults throw (see `errors.ts`). */
export type ConfirmOutcome =
  /** 200: recorded now. */
  | { readonly kind: 'confirmed'; readonly notification: NotificationView }
  /** 200 with `Idempotent-Replayed: true`: an earlier confirmation was recorded. */
  | { readonly kind: 'already_confirmed'; readonly notification: NotificationView }
  /** 404: no notification with this key. */
  | { readonly kind: 'not_found'; readonly error: ApiErrorBody }
  /** 409 `not_sent`: the notification was never sent, so its code or link cannot have been used. */
  | { readonly kind: 'not_sent'; readonly error: ApiErrorBody }
  | Unavailable;

/** The subset of `fetch` the client uses (inject one in tests). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Per-call options of `admit` and `confirm`. */
export interface CallOptions {
  /** This call's time budget (see {@link ResetNotifierClientOptions.timeBudgetMs}). */
  readonly timeBudgetMs?: number;
}

/** Options of {@link createResetNotifierClient}. */
export interface ResetNotifierClientOptions {
  /** The API's base URL (stack output `ApiUrl`, or `http://127.0.0.1:3000` for `npm start`). */
  readonly baseUrl: string;
  /** SigV4 for AWS (IAM auth); `false` for the local stack, which has no auth. */
  readonly signing: SigningOptions | false;
  /**
   * How long one call may take, retries and waits included: the client never sleeps past it.
   * When it runs out, `admit` returns `rate_limited` or `unavailable` with the server's
   * `Retry-After`, `confirm` returns `unavailable`, and reads throw `ServiceUnavailableError`.
   * Keep it below the caller's own timeout (an auth Lambda's, an HTTP request's).
   * @default 5000
   */
  readonly timeBudgetMs?: number;
  /** Upper bound of one HTTP attempt (also never past the time budget). @default 2000 */
  readonly attemptTimeoutMs?: number;
  /** Attempts per call, the first included. @default 6 */
  readonly maxAttempts?: number;
  /** Retries of `admit` stop this long before `expires_at` (the service's dispatch margin). @default 5000 */
  readonly expiryMarginMs?: number;
  /** @default globalThis.fetch */
  readonly fetch?: FetchLike;
  /** Milliseconds since the epoch. @default Date.now */
  readonly now?: () => number;
  /** @default setTimeout-based */
  readonly sleep?: (ms: number) => Promise<void>;
  /** In [0, 1), for backoff jitter. @default Math.random */
  readonly random?: () => number;
  /** A signer to use instead of one built from `signing` (tests). */
  readonly signer?: RequestSigner;
}

/** The typed client of the HTTP API. */
export interface ResetNotifierClient {
  /**
   * `POST /v1/notifications`, retried with the same `Idempotency-Key` within the time budget and
   * before `expires_at`.
   */
  admit(
    request: AdmitRequest,
    options?: CallOptions & { readonly idempotencyKey?: string },
  ): Promise<AdmitOutcome>;
  /** `GET /v1/notifications/{key}`: the view, or `undefined` when there is no such key. */
  get(idempotencyKey: string): Promise<NotificationView | undefined>;
  /** `GET /v1/notifications/{key}/evidence`: every transition in order, or `undefined`. */
  evidence(idempotencyKey: string): Promise<EvidenceView[] | undefined>;
  /** `GET /v1/notifications?event_id=...`. */
  byEvent(eventId: string): Promise<NotificationView[]>;
  /** `POST /v1/notifications/{key}/confirmation`: the code or link was used. */
  confirm(idempotencyKey: string, options?: CallOptions): Promise<ConfirmOutcome>;
}

/** Statuses after which the same request may be sent again (the idempotency key makes it safe). */
const RETRYABLE = (status: number) => status === 429 || status >= 500;
const BACKOFF_BASE_MS = 200;
const BACKOFF_MAX_MS = 5_000;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** What `send` ends with: an answer to act on, or the service stayed unavailable. */
type Sent =
  | { readonly kind: 'answer'; readonly answer: Answer }
  | {
      readonly kind: 'gave_up';
      readonly attempts: number;
      readonly last: Answer | undefined;
      readonly failure: unknown;
    };

/** When a call must end (`budgetEnd`) and when its last retry may start (`retryEnd`), epoch ms. */
interface Limits {
  readonly budgetEnd: number;
  readonly retryEnd: number;
}

/**
 * Creates the client. Every call is retried on timeouts, network errors, 5xx, 429 and 503,
 * waiting `Retry-After` when the API sends one and a jittered exponential backoff otherwise, with
 * the same `Idempotency-Key`, but never past the call's time budget (nor, for `admit`, past the
 * token's `expires_at`): a wait that would end after it is not slept, the call returns instead.
 */
export function createResetNotifierClient(options: ResetNotifierClientOptions): ResetNotifierClient {
  const base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const fetchFn: FetchLike = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const timeBudgetMs = positive('timeBudgetMs', options.timeBudgetMs ?? 5_000);
  const attemptTimeoutMs = positive('attemptTimeoutMs', options.attemptTimeoutMs ?? 2_000);
  const maxAttempts = options.maxAttempts ?? 6;
  const expiryMarginMs = options.expiryMarginMs ?? 5_000;
  let signer: Promise<RequestSigner> | undefined =
    options.signer === undefined ? undefined : Promise.resolve(options.signer);

  /** The signature headers; a failure to sign (no credentials) is a CredentialsError, never retried. */
  async function authHeaders(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<Record<string, string>> {
    const signing = options.signing;
    if (signing === false && options.signer === undefined) return {};
    try {
      signer ??= createSigner(signing === false ? { region: 'local' } : signing);
      return await signedHeaders(
        await signer,
        body === undefined ? { method, url, headers } : { method, url, headers, body },
      );
    } catch (error) {
      // A rejected signer is not kept: the next call loads the credentials again.
      if (options.signer === undefined) signer = undefined;
      const detail = error instanceof Error ? error.message : String(error);
      throw new CredentialsError(
        `${method} ${url.pathname}: could not sign the request (${detail}); nothing was sent`,
        { cause: error },
      );
    }
  }

  async function once(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
  ): Promise<Answer> {
    const auth = await authHeaders(method, url, headers, body);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await fetchFn(url.toString(), {
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
  async function send(
    method: string,
    path: string,
    limits: Limits,
    init: { headers?: Record<string, string>; body?: string; query?: Record<string, string> } = {},
  ): Promise<Sent> {
    const url = new URL(path.replace(/^\//, ''), base);
    for (const [name, value] of Object.entries(init.query ?? {})) url.searchParams.set(name, value);
    const headers = { accept: 'application/json', ...init.headers };
    let last: Answer | undefined;
    let failure: unknown;
    let attempt = 0;
    while (attempt < maxAttempts) {
      attempt++;
      const timeoutMs = Math.min(attemptTimeoutMs, Math.max(0, limits.budgetEnd - now()));
      try {
        last = await once(method, url, headers, init.body, timeoutMs);
        failure = undefined;
        if (!RETRYABLE(last.status)) return { kind: 'answer', answer: last };
      } catch (error) {
        if (error instanceof CredentialsError) throw error;
        // A timeout or a network error: the request may or may not have arrived; the key makes a retry safe.
        failure = error;
        last = undefined;
      }
      const wait = retryAfterMs(last, now()) ?? backoffMs(attempt, random);
      if (attempt >= maxAttempts || now() + wait >= limits.retryEnd) break;
      await sleep(wait);
    }
    return { kind: 'gave_up', attempts: attempt, last, failure };
  }

  /** The limits of a call starting now, with `timeBudgetMs` unless the call sets its own. */
  const limitsFor = (budgetMs: number | undefined, retryEnd = Number.POSITIVE_INFINITY): Limits => {
    const budgetEnd = now() + positive('timeBudgetMs', budgetMs ?? timeBudgetMs);
    return { budgetEnd, retryEnd: Math.min(budgetEnd, retryEnd) };
  };

  /** A read's answer, or ServiceUnavailableError once its budget ran out. */
  async function read(path: string, query?: Record<string, string>): Promise<Answer> {
    const sent = await send('GET', path, limitsFor(undefined), query === undefined ? {} : { query });
    if (sent.kind === 'answer') return sent.answer;
    throw new ServiceUnavailableError(
      `GET ${path}: the service stayed unavailable for ${sent.attempts} attempt(s)`,
      sent.attempts,
      sent.last?.status,
      sent.last === undefined ? undefined : errorBody(sent.last),
      sent.failure === undefined ? undefined : { cause: sent.failure },
    );
  }

  const unavailable = (sent: Extract<Sent, { kind: 'gave_up' }>): Unavailable => ({
    kind: 'unavailable',
    retryAfterSeconds: retryAfterSeconds(sent.last, now()),
    attempts: sent.attempts,
    lastStatus: sent.last?.status,
    error: sent.last === undefined ? undefined : errorBody(sent.last),
    ...(sent.failure === undefined ? {} : { cause: sent.failure }),
  });

  const keyPath = (key: string) => {
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new InvalidArgumentError('an idempotency key is 1-255 characters of [A-Za-z0-9._:-]');
    }
    // Every allowed character is legal in a path segment: sent as is, encoded once by the signer.
    return `/v1/notifications/${key}`;
  };

  return {
    async admit(request, admitOptions = {}) {
      const key =
        admitOptions.idempotencyKey ??
        deriveIdempotencyKey(request.event_id, request.channel, request.template);
      keyPath(key);
      // An unparsable expires_at is the service's to reject (422): only the budget bounds the call.
      const expiresAt = Date.parse(request.expires_at);
      const retryEnd = Number.isFinite(expiresAt) ? expiresAt - expiryMarginMs : undefined;
      const sent = await send('POST', '/v1/notifications', limitsFor(admitOptions.timeBudgetMs, retryEnd), {
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(request),
      });
      if (sent.kind === 'gave_up') {
        // The service's own 429 (a destination's budget) is its own outcome; API Gateway's
        // throttling (429 without a code), like every other answer here, is `unavailable`.
        const body = sent.last === undefined ? undefined : errorBody(sent.last);
        if (sent.last?.status === 429 && body?.code === 'destination_rate_limited') {
          return {
            kind: 'rate_limited',
            error: body,
            retryAfterSeconds: retryAfterSeconds(sent.last, now()),
          };
        }
        return unavailable(sent);
      }
      const { answer } = sent;
      switch (answer.status) {
        case 202:
          return {
            kind: 'admitted',
            notification: json<NotificationView>(answer),
            location: answer.headers.get('location') ?? keyPath(key),
          };
        case 200:
          return { kind: 'replayed', notification: json<NotificationView>(answer) };
        case 409:
          return { kind: 'conflict', error: errorBody(answer) ?? unexpected(answer) };
        case 422:
          return { kind: 'rejected', error: errorBody(answer) ?? unexpected(answer) };
        default:
          return unexpected(answer);
      }
    },
    async get(key) {
      return found<NotificationView>(await read(keyPath(key)));
    },
    async evidence(key) {
      return found<{ transitions: EvidenceView[] }>(await read(`${keyPath(key)}/evidence`))?.transitions;
    },
    async byEvent(eventId) {
      if (!IDEMPOTENCY_KEY_PATTERN.test(eventId)) {
        throw new InvalidArgumentError('an event id is 1-255 characters of [A-Za-z0-9._:-]');
      }
      const answer = await read('/v1/notifications', { event_id: eventId });
      if (answer.status !== 200) return unexpected(answer);
      return json<{ items: NotificationView[] }>(answer).items;
    },
    async confirm(key, confirmOptions = {}) {
      const sent = await send(
        'POST',
        `${keyPath(key)}/confirmation`,
        limitsFor(confirmOptions.timeBudgetMs),
        {
          headers: { 'content-type': 'application/json' },
          body: '{}',
        },
      );
      if (sent.kind === 'gave_up') return unavailable(sent);
      const { answer } = sent;
      const body = errorBody(answer);
      if (answer.status === 200) {
        const notification = json<NotificationView>(answer);
        return answer.headers.get('idempotent-replayed') === 'true'
          ? { kind: 'already_confirmed', notification }
          : { kind: 'confirmed', notification };
      }
      if (answer.status === 404 && body?.code === 'not_found') return { kind: 'not_found', error: body };
      if (answer.status === 409 && body?.code === 'not_sent') return { kind: 'not_sent', error: body };
      return unexpected(answer);
    },
  };
}

/** A duration option: a positive, finite number of milliseconds. */
function positive(name: string, ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new InvalidArgumentError(`${name} must be a positive number of milliseconds`);
  }
  return ms;
}

/** `Retry-After` in whole seconds from now, if the answer has one. */
function retryAfterSeconds(answer: Answer | undefined, nowMs: number): number | undefined {
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

function json<T>(answer: Answer): T {
  try {
    return JSON.parse(answer.text) as T;
  } catch {
    throw new UnexpectedResponseError(
      `status ${answer.status} with a body that is not JSON`,
      answer.status,
      undefined,
    );
  }
}

function errorBody(answer: Answer): ApiErrorBody | undefined {
  try {
    const body = JSON.parse(answer.text) as Partial<ApiErrorBody>;
    return typeof body.code === 'string' && typeof body.message === 'string'
      ? (body as ApiErrorBody)
      : undefined;
  } catch {
    return undefined;
  }
}

function found<T>(answer: Answer): T | undefined {
  if (answer.status === 404 && errorBody(answer)?.code === 'not_found') return undefined;
  if (answer.status !== 200) return unexpected(answer);
  return json<T>(answer);
}

function unexpected(answer: Answer): never {
  const body = errorBody(answer);
  throw new UnexpectedResponseError(
    `unexpected status ${answer.status}${body ? ` (${body.code})` : ''}`,
    answer.status,
    body,
  );
}
