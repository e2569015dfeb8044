import { deriveIdempotencyKey, IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency-key.js';
import type { NotificationRequestBody } from '../http/request-schema.js';
import type { EvidenceViewBody, NotificationViewBody } from '../http/view-schema.js';
import {
  type ApiErrorBody,
  InvalidArgumentError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from './errors.js';
import { createSigner, type RequestSigner, type SigningOptions, signedHeaders } from './signing.js';

/** A notification as the API shows it (never the phone number, params, token or URL). */
export type NotificationView = NotificationViewBody;
/** One evidence record. */
export type EvidenceView = EvidenceViewBody;
/** The body of `admit`: the wire format of `POST /v1/notifications` (`locale` defaults to `en`). */
export type AdmitRequest = Omit<NotificationRequestBody, 'locale'> & {
  readonly locale?: NotificationRequestBody['locale'];
};

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
  /** 429: the destination's budget is spent, and waiting `Retry-After` would outlive the token. */
  | {
      readonly kind: 'rate_limited';
      readonly error: ApiErrorBody;
      readonly retryAfterSeconds: number | undefined;
    };

/** The subset of `fetch` the client uses (inject one in tests). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Options of {@link createResetNotifierClient}. */
export interface ResetNotifierClientOptions {
  /** The API's base URL (stack output `ApiUrl`, or `http://127.0.0.1:3000` for `npm start`). */
  readonly baseUrl: string;
  /** SigV4 for AWS (IAM auth); `false` for the local stack, which has no auth. */
  readonly signing: SigningOptions | false;
  /** @default globalThis.fetch */
  readonly fetch?: FetchLike;
  /** Milliseconds since the epoch. @default Date.now */
  readonly now?: () => number;
  /** @default setTimeout-based */
  readonly sleep?: (ms: number) => Promise<void>;
  /** In [0, 1), for backoff jitter. @default Math.random */
  readonly random?: () => number;
  /** Upper bound of one HTTP attempt. @default 5000 */
  readonly attemptTimeoutMs?: number;
  /** Attempts per call, the first included. @default 6 */
  readonly maxAttempts?: number;
  /** Retries of `admit` stop this long before `expires_at` (the service's dispatch margin). @default 5000 */
  readonly expiryMarginMs?: number;
  /** How long reads (`get`, `evidence`, `byEvent`) and `confirm` keep retrying. @default 20000 */
  readonly readDeadlineMs?: number;
  /** A signer to use instead of one built from `signing` (tests). */
  readonly signer?: RequestSigner;
}

/** The typed client of the HTTP API. */
export interface ResetNotifierClient {
  /** `POST /v1/notifications`; retried with the same `Idempotency-Key` until `expires_at`. */
  admit(request: AdmitRequest, options?: { readonly idempotencyKey?: string }): Promise<AdmitOutcome>;
  /** `GET /v1/notifications/{key}`: the view, or `undefined` when there is no such key. */
  get(idempotencyKey: string): Promise<NotificationView | undefined>;
  /** `GET /v1/notifications/{key}/evidence`: every transition in order, or `undefined`. */
  evidence(idempotencyKey: string): Promise<EvidenceView[] | undefined>;
  /** `GET /v1/notifications?event_id=...`. */
  byEvent(eventId: string): Promise<NotificationView[]>;
  /** `POST /v1/notifications/{key}/confirmation`: the code or link was used; the view, or `undefined`. */
  confirm(idempotencyKey: string): Promise<NotificationView | undefined>;
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

/**
 * Creates the client. Every call is retried on timeouts, network errors, 5xx, 429 and 503,
 * waiting `Retry-After` when the API sends one and a jittered exponential backoff otherwise, with
 * the same `Idempotency-Key`, never past its deadline (for `admit`, the token's `expires_at`).
 */
export function createResetNotifierClient(options: ResetNotifierClientOptions): ResetNotifierClient {
  const base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const fetchFn: FetchLike = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 5_000;
  const maxAttempts = options.maxAttempts ?? 6;
  const expiryMarginMs = options.expiryMarginMs ?? 5_000;
  const readDeadlineMs = options.readDeadlineMs ?? 20_000;
  let signer: Promise<RequestSigner> | undefined =
    options.signer === undefined ? undefined : Promise.resolve(options.signer);
  const signerFor = (signing: SigningOptions) => {
    signer ??= createSigner(signing);
    return signer;
  };

  async function once(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
  ) {
    const signing = options.signing;
    const auth =
      signing === false && options.signer === undefined
        ? {}
        : await signedHeaders(
            await signerFor(signing === false ? { region: 'local' } : signing),
            body === undefined ? { method, url, headers } : { method, url, headers, body },
          );
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

  /** Sends until an answer that is not retryable, the attempts run out, or the deadline would pass. */
  async function send(
    method: string,
    path: string,
    deadline: number,
    init: { headers?: Record<string, string>; body?: string; query?: Record<string, string> } = {},
  ): Promise<Answer> {
    const url = new URL(path.replace(/^\//, ''), base);
    for (const [name, value] of Object.entries(init.query ?? {})) url.searchParams.set(name, value);
    const headers = { accept: 'application/json', ...init.headers };
    let last: Answer | undefined;
    let failure: unknown;
    let attempt = 0;
    while (attempt < maxAttempts) {
      attempt++;
      try {
        // An attempt never runs past the deadline either (at least 1 s, so a late call still gets an answer).
        const timeoutMs = Math.min(attemptTimeoutMs, Math.max(1_000, deadline - now()));
        last = await once(method, url, headers, init.body, timeoutMs);
        failure = undefined;
        if (!RETRYABLE(last.status)) return last;
      } catch (error) {
        // A timeout or a network error: the request may or may not have arrived; the key makes a retry safe.
        failure = error;
        last = undefined;
      }
      const wait = retryAfterMs(last, now()) ?? backoffMs(attempt, random);
      if (attempt >= maxAttempts || now() + wait >= deadline) break;
      await sleep(wait);
    }
    // The service's own 429 (a destination's budget) is an outcome; API Gateway's throttling
    // (429 without a code), like every other answer here, means the service stayed unavailable.
    if (last !== undefined && last.status === 429 && errorBody(last)?.code === 'destination_rate_limited') {
      return last;
    }
    throw new ServiceUnavailableError(
      `${method} ${path}: the service stayed unavailable for ${attempt} attempt(s)`,
      attempt,
      last?.status,
      last === undefined ? undefined : errorBody(last),
      failure === undefined ? undefined : { cause: failure },
    );
  }

  const readDeadline = () => now() + readDeadlineMs;
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
      const expiresAt = Date.parse(request.expires_at);
      const answer = await send('POST', '/v1/notifications', expiresAt - expiryMarginMs, {
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(request),
      });
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
        case 429: {
          const wait = retryAfterMs(answer, now());
          return {
            kind: 'rate_limited',
            error: errorBody(answer) ?? unexpected(answer),
            retryAfterSeconds: wait === undefined ? undefined : Math.ceil(wait / 1000),
          };
        }
        default:
          return unexpected(answer);
      }
    },
    async get(key) {
      const answer = await send('GET', keyPath(key), readDeadline());
      return found<NotificationView>(answer);
    },
    async evidence(key) {
      const answer = await send('GET', `${keyPath(key)}/evidence`, readDeadline());
      return found<{ transitions: EvidenceView[] }>(answer)?.transitions;
    },
    async byEvent(eventId) {
      if (!IDEMPOTENCY_KEY_PATTERN.test(eventId)) {
        throw new InvalidArgumentError('an event id is 1-255 characters of [A-Za-z0-9._:-]');
      }
      const answer = await send('GET', '/v1/notifications', readDeadline(), { query: { event_id: eventId } });
      if (answer.status !== 200) return unexpected(answer);
      return json<{ items: NotificationView[] }>(answer).items;
    },
    async confirm(key) {
      const answer = await send('POST', `${keyPath(key)}/confirmation`, readDeadline(), {
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      return found<NotificationView>(answer);
    },
  };
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
