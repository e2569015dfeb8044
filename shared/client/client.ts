import { deriveIdempotencyKey, IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency-key.js';
import { InvalidArgumentError, UnexpectedResponseError } from './errors.js';
import type { RequestSigner, SigningOptions } from './signing.js';
import {
  type Answer,
  createTransport,
  errorBody,
  type FetchLike,
  limitsFor,
  read,
  retryAfterSeconds,
  type Sent,
  send,
  type Transport,
} from './transport.js';
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

export type { FetchLike } from './transport.js';

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

/**
 * Creates the client. Every call is retried on timeouts, network errors, 5xx, 429 and 503,
 * waiting `Retry-After` when the API sends one and a jittered exponential backoff otherwise, with
 * the same `Idempotency-Key`, but never past the call's time budget (nor, for `admit`, past the
 * token's `expires_at`): a wait that would end after it is not slept, the call returns instead.
 */
export function createResetNotifierClient(options: ResetNotifierClientOptions): ResetNotifierClient {
  const t = createTransport(options);
  return {
    admit: (request, admitOptions = {}) => admit(t, request, admitOptions),
    async get(key) {
      return found<NotificationView>(await read(t, keyPath(key)));
    },
    async evidence(key) {
      return found<{ transitions: EvidenceView[] }>(await read(t, `${keyPath(key)}/evidence`))?.transitions;
    },
    async byEvent(eventId) {
      if (!IDEMPOTENCY_KEY_PATTERN.test(eventId)) {
        throw new InvalidArgumentError('an event id is 1-255 characters of [A-Za-z0-9._:-]');
      }
      const answer = await read(t, '/v1/notifications', { event_id: eventId });
      if (answer.status !== 200) return unexpected(answer);
      return json<{ items: NotificationView[] }>(answer).items;
    },
    confirm: (key, confirmOptions = {}) => confirm(t, key, confirmOptions),
  };
}

/** `POST /v1/notifications` with its retries, and the answer as an outcome. */
async function admit(
  t: Transport,
  request: AdmitRequest,
  admitOptions: CallOptions & { readonly idempotencyKey?: string },
): Promise<AdmitOutcome> {
  const key =
    admitOptions.idempotencyKey ?? deriveIdempotencyKey(request.event_id, request.channel, request.template);
  keyPath(key);
  // An unparsable expires_at is the service's to reject (422): only the budget bounds the call.
  const expiresAt = Date.parse(request.expires_at);
  const retryEnd = Number.isFinite(expiresAt) ? expiresAt - t.expiryMarginMs : undefined;
  const sent = await send(t, 'POST', '/v1/notifications', limitsFor(t, admitOptions.timeBudgetMs, retryEnd), {
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
        retryAfterSeconds: retryAfterSeconds(sent.last, t.now()),
      };
    }
    return unavailable(t, sent);
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
}

/** `POST /v1/notifications/{key}/confirmation` with its retries, and the answer as an outcome. */
async function confirm(t: Transport, key: string, confirmOptions: CallOptions): Promise<ConfirmOutcome> {
  const sent = await send(
    t,
    'POST',
    `${keyPath(key)}/confirmation`,
    limitsFor(t, confirmOptions.timeBudgetMs),
    {
      headers: { 'content-type': 'application/json' },
      body: '{}',
    },
  );
  if (sent.kind === 'gave_up') return unavailable(t, sent);
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
}

/** The outcome of a call whose budget ran out. */
function unavailable(t: Transport, sent: Extract<Sent, { kind: 'gave_up' }>): Unavailable {
  return {
    kind: 'unavailable',
    retryAfterSeconds: retryAfterSeconds(sent.last, t.now()),
    attempts: sent.attempts,
    lastStatus: sent.last?.status,
    error: sent.last === undefined ? undefined : errorBody(sent.last),
    ...(sent.failure === undefined ? {} : { cause: sent.failure }),
  };
}

/** The notification's path; refuses a key the service could never have. */
function keyPath(key: string): string {
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new InvalidArgumentError('an idempotency key is 1-255 characters of [A-Za-z0-9._:-]');
  }
  // Every allowed character is legal in a path segment: sent as is, encoded once by the signer.
  return `/v1/notifications/${key}`;
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
