import middy from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { deriveIdempotencyKey } from '../domain/idempotency-key.js';
import type { NotificationRequest } from '../domain/notification.js';
import { countSegments, resetUrlProblem } from '../domain/sms-body.js';
import { renderBody } from '../domain/templates.js';
import { checkDestination, type DestinationPolicy, type RefusalReason } from '../http/destination.js';
import { renderOpenApiDocument } from '../http/openapi.js';
import {
  EventIdQuery,
  type FieldError,
  fieldErrors,
  IdempotencyKeyHeader,
  NotificationRequestBody,
} from '../http/request-schema.js';
import {
  type ErrorBody,
  eventAlreadyAdmitted,
  GENERIC_500_BODY,
  json,
  problem,
  temporarilyUnavailable,
} from '../http/responses.js';
import { transientFaultOf } from '../ports/faults.js';
import type { NotificationStore } from '../ports/store.js';
import { type AdmissionDeps, admitNotification } from '../usecases/admit-notification.js';
import { getEvidence, getNotification, listByEvent } from '../usecases/inspect-notification.js';
import { type ConfirmationRouteDeps, postConfirmation } from './confirmation-route.js';

/** Largest accepted request body (docs/design.md#http-api). */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * Time kept back before the function's own timeout to answer `503` instead of being cut off (a
 * Lambda timeout reaches the caller as a bare 5xx with no `Retry-After`).
 */
export const DEADLINE_MARGIN_MS = 250;

export interface ApiDeps extends AdmissionDeps, Omit<ConfirmationRouteDeps, 'store' | 'clock'> {
  readonly store: NotificationStore;
  readonly maxExpiryMs: number;
  /** E.164 prefixes accepted as destinations; empty or absent = any valid number. */
  readonly allowedDestinationPrefixes?: readonly string[];
  /** Number types and regions sent to (docs/design.md#abuse-limits); absent = any. */
  readonly destinations?: Omit<DestinationPolicy, 'allowedPrefixes'>;
  /** Hosts a `reset_url` may point at; empty or absent = any host. */
  readonly resetUrlHosts?: readonly string[];
  /** Most SMS segments a rendered body may take; absent = no limit. */
  readonly maxSmsSegments?: number;
  /** Receives unexpected errors (never request bodies). */
  readonly logError: (error: unknown) => void;
  /**
   * Told when a request runs out of the function's time and is answered `503` (the deadline
   * metric or log line); never given the request.
   */
  readonly onDeadline?: () => void;
  /** Told about every abuse-limit refusal (the refusal metric); never given a number, URL or code. */
  readonly onRefusal?: (refusal: Refusal) => void;
}

/** The `message` of the structured log line for a refusal: the refusal metric filters on it. */
export const REFUSAL_LOG_MESSAGE = 'admission refused';

/** One request refused by an abuse limit, as the refusal metric sees it. */
export interface Refusal {
  readonly code: 'destination_rate_limited' | 'destination_not_allowed' | 'validation_failed';
  /** `destination` or `country` budget; a destination rule; or the body rule that failed. */
  readonly reason: 'destination' | 'country' | RefusalReason | 'reset_url' | 'sms_segments';
  /** The destination's region, when known (a country is not personal data). */
  readonly country?: string;
}

type Result = APIGatewayProxyStructuredResultV2;
type Route = (event: APIGatewayProxyEventV2, match: RegExpMatchArray) => Promise<Result>;

/**
 * The HTTP API as one Lambda handler (API Gateway v2 events). Only deliberate 4xx carry detail;
 * anything unexpected becomes a generic 500 through middy's error handler.
 */
export function createApiHandler(deps: ApiDeps) {
  const routes: ReadonlyArray<readonly [string, RegExp, Route]> = [
    ['POST', /^\/v1\/notifications\/?$/, (event) => postNotification(deps, event)],
    ['GET', /^\/v1\/notifications\/?$/, (event) => listNotifications(deps, event)],
    ['GET', /^\/v1\/notifications\/([^/]+)\/evidence\/?$/, keyed((_e, key) => readEvidence(deps, key))],
    [
      'POST',
      /^\/v1\/notifications\/([^/]+)\/confirmation\/?$/,
      keyed((e, key) => postConfirmation(deps, e, key)),
    ],
    ['GET', /^\/v1\/notifications\/([^/]+)\/?$/, keyed((_e, key) => readNotification(deps, key))],
    ['GET', /^\/v1\/openapi\.json$/, async () => openApi()],
  ];
  const route = async (event: APIGatewayProxyEventV2): Promise<Result> => {
    const method = event.requestContext.http.method.toUpperCase();
    const path = event.rawPath;
    let pathMatched = false;
    for (const [routeMethod, pattern, handle] of routes) {
      const match = path.match(pattern);
      if (!match) continue;
      pathMatched = true;
      if (routeMethod === method) return handle(event, match);
    }
    return pathMatched
      ? problem(405, 'method_not_allowed', `${method} is not allowed on ${path}`)
      : problem(404, 'route_not_found', 'no such route');
  };
  // Out of time is retry-safe, never a bug: whatever the request had written is conditional, so the
  // caller's retry with the same key finds it (docs/design.md#http-api).
  return middy<APIGatewayProxyEventV2, Result>({
    timeoutEarlyInMillis: DEADLINE_MARGIN_MS,
    timeoutEarlyResponse: () => {
      deps.onDeadline?.();
      return temporarilyUnavailable(1);
    },
  })
    .use(httpHeaderNormalizer())
    .use(httpErrorHandler({ logger: deps.logError, fallbackMessage: GENERIC_500_BODY }))
    .handler(async (event) => {
      try {
        return await route(event);
      } catch (error) {
        // Throttling and transient store faults: retry-safe, so say so; anything else is a bug (500).
        const fault = transientFaultOf(error);
        if (fault === undefined) throw error;
        return temporarilyUnavailable(fault.retryAfterSeconds);
      }
    });
}

let openApiBody: string | undefined;
/** `GET /v1/openapi.json`: built once per container from the same schemas the handler uses. */
function openApi(): Result {
  openApiBody ??= renderOpenApiDocument();
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: openApiBody };
}

function decode(segment: string | undefined): string {
  try {
    return decodeURIComponent(segment ?? '');
  } catch {
    return '';
  }
}

/**
 * A route on `/v1/notifications/{idempotency_key}/...`: the key is decoded and checked like the
 * `Idempotency-Key` header before the store sees it, so an oversized key (DynamoDB refuses keys
 * over 2,048 bytes) or one naming the table's own items (`_control#reconciler`, `LIMIT#...`:
 * no key can hold `#`) is a `422` field error, not a store error.
 */
function keyed(handle: (event: APIGatewayProxyEventV2, key: string) => Promise<Result>): Route {
  return async (event, match) => {
    const key = IdempotencyKeyHeader.safeParse(decode(match[1]));
    if (!key.success) return invalid(fieldErrors(key.error, 'path.idempotency_key'));
    return handle(event, key.data);
  };
}

function invalid(errors: readonly FieldError[]): Result {
  return problem(422, 'validation_failed', 'the request has invalid fields', errors);
}

async function postNotification(deps: ApiDeps, event: APIGatewayProxyEventV2): Promise<Result> {
  const contentType = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') {
    return problem(415, 'unsupported_media_type', 'Content-Type must be application/json');
  }
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.byteLength > MAX_BODY_BYTES) {
    return problem(413, 'payload_too_large', `the body must be at most ${MAX_BODY_BYTES} bytes`);
  }
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    return problem(400, 'malformed_json', 'the body is not valid JSON');
  }
  const parsed = NotificationRequestBody.safeParse(body);
  const header = event.headers['idempotency-key'];
  const key = header === undefined ? undefined : IdempotencyKeyHeader.safeParse(header);
  const errors = [
    ...(parsed.success ? [] : fieldErrors(parsed.error)),
    ...(key && !key.success ? fieldErrors(key.error, 'headers.idempotency-key') : []),
  ];
  if (!parsed.success || (key && !key.success)) {
    return problem(422, 'validation_failed', 'the request has invalid fields', errors);
  }
  const input = parsed.data;
  const now = deps.clock.now();
  const expiresAt = Date.parse(input.expires_at);
  if (expiresAt > now + deps.maxExpiryMs) {
    return problem(422, 'validation_failed', 'the request has invalid fields', [
      { path: 'expires_at', message: `must be at most ${deps.maxExpiryMs / 3_600_000} h ahead` },
    ]);
  }
  const refused = (refusal: Refusal, result: Result): Result => {
    deps.onRefusal?.(refusal);
    return result;
  };
  const allowed = deps.allowedDestinationPrefixes ?? [];
  if (allowed.length > 0 && !allowed.some((prefix) => input.destination.phone.startsWith(prefix))) {
    return refused(
      { code: 'validation_failed', reason: 'prefix' },
      problem(422, 'validation_failed', 'the request has invalid fields', [
        { path: 'destination.phone', message: 'is not an allowed destination' },
      ]),
    );
  }
  const destination = checkDestination(input.destination.phone, {
    allowedNumberTypes: deps.destinations?.allowedNumberTypes ?? [],
    allowedCountries: deps.destinations?.allowedCountries ?? [],
    allowedPrefixes: [],
  });
  const country = destination.country;
  if (destination.kind === 'not_allowed') {
    const message = DESTINATION_MESSAGES[destination.reason];
    return refused(
      { code: 'destination_not_allowed', reason: destination.reason, ...(country ? { country } : {}) },
      problem(422, 'destination_not_allowed', 'this deployment does not send to this destination', [
        { path: 'destination.phone', message },
      ]),
    );
  }
  const params = input.params as Record<string, string>;
  const bodyProblem = smsBodyProblem(deps, input.template, input.locale, params);
  if (bodyProblem) {
    return refused(
      { code: 'validation_failed', reason: bodyProblem.reason, ...(country ? { country } : {}) },
      problem(422, 'validation_failed', 'the request has invalid fields', [bodyProblem.error]),
    );
  }
  const request: NotificationRequest = {
    idempotencyKey: key?.data ?? deriveIdempotencyKey(input.event_id, input.channel, input.template),
    eventId: input.event_id,
    channel: input.channel,
    template: input.template,
    locale: input.locale,
    expiresAt,
    sensitive: { phone: input.destination.phone, params },
  };
  const outcome = await admitNotification(deps, request, { country });
  switch (outcome.kind) {
    case 'admitted':
      return json(202, outcome.view, {
        location: `/v1/notifications/${encodeURIComponent(outcome.view.idempotency_key)}`,
      });
    case 'replayed':
      // Also when another key admitted this event with the same payload: the view names that key.
      return json(200, outcome.view, {
        'idempotent-replayed': 'true',
        ...(outcome.view.idempotency_key === request.idempotencyKey
          ? {}
          : { location: `/v1/notifications/${encodeURIComponent(outcome.view.idempotency_key)}` }),
      });
    case 'conflict':
      return problem(409, 'idempotency_key_reused', 'this idempotency key was used with a different payload');
    case 'event_conflict':
      // Names the first command (a key, never a number), so the caller can read it instead.
      return eventAlreadyAdmitted(outcome.idempotencyKey);
    case 'expired':
      return problem(422, 'already_expired', 'expires_at leaves no time to dispatch', [
        { path: 'expires_at', message: 'is in the past or within the dispatch margin' },
      ]);
    case 'rate_limited':
      return refused(
        { code: 'destination_rate_limited', reason: outcome.scope, ...(country ? { country } : {}) },
        json(
          429,
          {
            code: 'destination_rate_limited',
            message:
              outcome.scope === 'destination'
                ? 'too many notifications to this destination; retry later'
                : "too many notifications to this destination's country; retry later",
          } satisfies ErrorBody,
          { 'retry-after': String(outcome.retryAfterSeconds) },
        ),
      );
  }
}

const DESTINATION_MESSAGES: Readonly<Record<RefusalReason, string>> = {
  number_type: 'is a number type this deployment does not send to (e.g. premium rate, toll free, pager)',
  non_geographic: 'is a satellite or non-geographic number',
  country: 'is in a country this deployment does not send to',
  prefix: 'is not an allowed destination',
};

/** The reset URL's host and the rendered body's size: the body rules that depend on the deployment. */
function smsBodyProblem(
  deps: ApiDeps,
  template: string,
  locale: string,
  params: Record<string, string>,
): { reason: 'reset_url' | 'sms_segments'; error: { path: string; message: string } } | undefined {
  const url = params.reset_url;
  // Always checked: with no allow-list (the local default) an internationalized host is still refused.
  if (url !== undefined) {
    const message = resetUrlProblem(url, deps.resetUrlHosts ?? []);
    if (message) return { reason: 'reset_url', error: { path: 'params.reset_url', message } };
  }
  if (deps.maxSmsSegments !== undefined) {
    // The body exists only here, in memory, to be measured; it is neither stored nor logged.
    const count = countSegments(renderBody(template, locale, params));
    if (count.segments > deps.maxSmsSegments) {
      return {
        reason: 'sms_segments',
        error: {
          path: url === undefined ? 'params' : 'params.reset_url',
          message: `makes the SMS ${count.segments} ${count.encoding} segments long; at most ${deps.maxSmsSegments} are allowed`,
        },
      };
    }
  }
  return undefined;
}

async function readNotification(deps: ApiDeps, key: string): Promise<Result> {
  const view = key ? await getNotification(deps.store, key) : undefined;
  return view ? json(200, view) : problem(404, 'not_found', 'no notification with this idempotency key');
}

async function readEvidence(deps: ApiDeps, key: string): Promise<Result> {
  const transitions = key ? await getEvidence(deps.store, key) : undefined;
  return transitions
    ? json(200, { transitions })
    : problem(404, 'not_found', 'no notification with this idempotency key');
}

async function listNotifications(deps: ApiDeps, event: APIGatewayProxyEventV2): Promise<Result> {
  const eventId = event.queryStringParameters?.event_id;
  if (!eventId) return invalid([{ path: 'query.event_id', message: 'is required' }]);
  // Checked like an admitted event_id (a repeated parameter arrives joined by a comma, so it fails too).
  const parsed = EventIdQuery.safeParse(eventId);
  if (!parsed.success) return invalid(fieldErrors(parsed.error, 'query.event_id'));
  return json(200, { items: await listByEvent(deps.store, parsed.data) });
}
