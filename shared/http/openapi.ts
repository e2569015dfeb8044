import * as z from 'zod';
import { IdempotencyKeyHeader, NotificationRequestBody } from './request-schema.js';
import {
  ErrorBodySchema,
  EvidenceListSchema,
  NotificationListSchema,
  NotificationViewSchema,
  TwilioStatusCallbackSchema,
} from './view-schema.js';

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the zod schemas the handler validates
 * with and the view schemas of its answers. A route is one entry of {@link OPENAPI_ROUTES}; the
 * document is written to `docs/openapi.json` by `npm run openapi`, checked current by a test, and
 * served at `GET /v1/openapi.json`. Pure (no I/O): it runs inside the API function too.
 */

/** The component schemas, by the name the document gives them. Requests are described as input. */
const COMPONENTS = {
  requests: {
    NotificationRequest: NotificationRequestBody,
    TwilioStatusCallback: TwilioStatusCallbackSchema,
  },
  responses: {
    NotificationView: NotificationViewSchema,
    NotificationList: NotificationListSchema,
    EvidenceList: EvidenceListSchema,
    Error: ErrorBodySchema,
  },
} as const;
type ComponentName = keyof typeof COMPONENTS.requests | keyof typeof COMPONENTS.responses;

/** One response of a route: a component body (JSON unless said otherwise), and headers. */
export interface ResponseSpec {
  readonly description: string;
  readonly body?: ComponentName;
  readonly headers?: readonly HeaderName[];
}

/** One route: method, path (OpenAPI template), what it takes and what it answers. */
export interface RouteSpec {
  readonly method: 'get' | 'post';
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  /** `sigv4` (IAM auth in AWS, the default) or `public` (e.g. Twilio's callbacks, checked by signature). */
  readonly auth?: 'sigv4' | 'public';
  readonly parameters?: readonly ParameterName[];
  readonly body?: {
    readonly schema: ComponentName;
    readonly contentType?: string;
    readonly description?: string;
  };
  readonly responses: Readonly<Record<number, ResponseSpec>>;
}

const HEADERS = {
  Location: {
    description:
      "Path of the notification (on 202); on a 200 or 409 for an event another key admitted, that first command's path",
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: '`true` when the key existed with the same payload',
    schema: { type: 'string', enum: ['true'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying with the same Idempotency-Key',
    schema: { type: 'integer', minimum: 1 },
  },
} as const;
type HeaderName = keyof typeof HEADERS;

const PARAMETERS = {
  IdempotencyKeyPath: {
    name: 'idempotency_key',
    in: 'path',
    required: true,
    schema: toSchema(IdempotencyKeyHeader, 'input'),
  },
  IdempotencyKeyHeader: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'Defaults to a key derived from event_id, channel and template',
    schema: toSchema(IdempotencyKeyHeader, 'input'),
  },
  EventIdQuery: {
    name: 'event_id',
    in: 'query',
    required: true,
    schema: toSchema(IdempotencyKeyHeader, 'input'),
  },
  ClientReferenceQuery: {
    name: 'client_reference',
    in: 'query',
    required: true,
    description: '`<idempotency key>#<attempt>`, as given to Twilio in the StatusCallback URL',
    schema: { type: 'string' },
  },
} as const;
type ParameterName = keyof typeof PARAMETERS;

const error = (description: string): ResponseSpec => ({ description, body: 'Error' });
const unavailable: ResponseSpec = {
  description: 'Throttling or a transient store fault; retrying with the same key is safe',
  body: 'Error',
  headers: ['Retry-After'],
};
const notFound = error('No notification with this idempotency key');
const badKey = error(
  'validation_failed: the idempotency_key is not 1-255 characters of [A-Za-z0-9._:-] (field error path.idempotency_key)',
);

/** Every route of the API (docs/design.md#http-api). Adding a route is adding an entry here. */
export const OPENAPI_ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/notifications',
    operationId: 'admitNotification',
    summary: 'Admit a password-reset SMS, exactly once per idempotency key and per event',
    description:
      'destination.phone must be a valid number in international form (checked with libphonenumber); it is used in its canonical E.164 form (separators and a national trunk prefix removed), so every spelling of one number is one destination. expires_at at most the configured maximum ahead.',
    parameters: ['IdempotencyKeyHeader'],
    body: { schema: 'NotificationRequest' },
    responses: {
      200: {
        description:
          "Replayed: the key exists with the same payload, or another key admitted this event_id, channel and template with the same payload (the first command's view, Location names it)",
        body: 'NotificationView',
        headers: ['Idempotent-Replayed', 'Location'],
      },
      202: { description: 'Admitted', body: 'NotificationView', headers: ['Location'] },
      400: error('Malformed JSON'),
      409: {
        description:
          'idempotency_key_reused: same key, different payload; event_already_admitted: another key admitted this event_id, channel and template with a different payload (message and Location name that key)',
        body: 'Error',
        headers: ['Location'],
      },
      413: error('Body over 16 KiB'),
      415: error('Content-Type is not application/json'),
      422: error('Invalid fields (with a list of field errors), or already expired'),
      429: { description: 'destination_rate_limited', body: 'Error', headers: ['Retry-After'] },
      503: unavailable,
    },
  },
  {
    method: 'get',
    path: '/v1/notifications',
    operationId: 'listNotificationsByEvent',
    summary: 'The notifications of one event',
    parameters: ['EventIdQuery'],
    responses: {
      200: { description: 'The notifications', body: 'NotificationList' },
      422: error(
        'validation_failed: event_id missing or not 1-255 characters of [A-Za-z0-9._:-] (field error query.event_id)',
      ),
      503: unavailable,
    },
  },
  {
    method: 'get',
    path: '/v1/notifications/{idempotency_key}',
    operationId: 'getNotification',
    summary: 'The current view of one notification',
    parameters: ['IdempotencyKeyPath'],
    responses: {
      200: { description: 'The view', body: 'NotificationView' },
      404: notFound,
      422: badKey,
      503: unavailable,
    },
  },
  {
    method: 'get',
    path: '/v1/notifications/{idempotency_key}/evidence',
    operationId: 'getEvidence',
    summary: 'Every transition of one notification, in order',
    parameters: ['IdempotencyKeyPath'],
    responses: {
      200: { description: 'The evidence', body: 'EvidenceList' },
      404: notFound,
      422: badKey,
      503: unavailable,
    },
  },
  {
    method: 'post',
    path: '/v1/notifications/{idempotency_key}/confirmation',
    operationId: 'confirmNotification',
    summary: 'Record that the code or link was used (idempotent)',
    parameters: ['IdempotencyKeyPath'],
    responses: {
      200: { description: 'Recorded; the current view', body: 'NotificationView' },
      400: error('malformed_json: the body is not valid JSON'),
      403: error('cross_site_request: a browser request from another origin (Origin, Sec-Fetch-Site)'),
      404: notFound,
      409: error('not_sent: the notification was never sent, so it cannot have been used'),
      413: error('payload_too_large: the body is over 1 KiB'),
      415: error('unsupported_media_type: no Content-Type application/json, an empty body included'),
      422: error('validation_failed: a bad idempotency_key (path.idempotency_key) or confirmed_at'),
      503: unavailable,
    },
  },
  {
    method: 'post',
    path: '/v1/receipts/twilio',
    operationId: 'receiveTwilioStatus',
    summary: 'Twilio status callbacks (accepted only with a valid X-Twilio-Signature)',
    auth: 'public',
    parameters: ['ClientReferenceQuery'],
    body: { schema: 'TwilioStatusCallback', contentType: 'application/x-www-form-urlencoded' },
    responses: {
      200: { description: 'Accepted (duplicates and out-of-order callbacks are harmless)' },
      403: error('Signature missing or invalid; nothing written'),
    },
  },
  {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    responses: { 200: { description: 'The OpenAPI 3.1 document' } },
  },
];

type JsonSchema = Record<string, unknown>;

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as JsonSchema;
  return rest;
}

/** The component schemas: requests as input (defaults optional), responses as output; `$ref`s between them. */
function componentSchemas(): Record<string, JsonSchema> {
  const uri = (id: string) => `#/components/schemas/${id}`;
  const render = (group: Record<string, z.ZodType>, io: 'input' | 'output') => {
    const registry = z.registry<{ id: string }>();
    for (const [id, schema] of Object.entries(group)) registry.add(schema, { id });
    const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', io, uri }) as {
      schemas: Record<string, JsonSchema>;
    };
    return Object.fromEntries(
      Object.entries(schemas).map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]),
    );
  };
  return { ...render(COMPONENTS.requests, 'input'), ...render(COMPONENTS.responses, 'output') };
}

function operation(route: RouteSpec): JsonSchema {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const responses = Object.fromEntries(
    Object.entries(route.responses).map(([status, spec]) => [
      status,
      {
        description: spec.description,
        ...(spec.headers ? { headers: Object.fromEntries(spec.headers.map((h) => [h, HEADERS[h]])) } : {}),
        ...(spec.body ? { content: { 'application/json': { schema: ref(spec.body) } } } : {}),
      },
    ]),
  );
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.auth === 'public' ? { security: [] } : {}),
    ...(route.parameters ? { parameters: route.parameters.map((p) => PARAMETERS[p]) } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { [route.body.contentType ?? 'application/json']: { schema: ref(route.body.schema) } },
          },
        }
      : {}),
    responses: {
      ...responses,
      500: {
        description: 'A bug: nothing internal is exposed',
        content: { 'application/json': { schema: ref('Error') } },
      },
    },
  };
}

/** The OpenAPI 3.1 document for `routes` (default: every route). Deterministic: no dates, stable order. */
export function buildOpenApiDocument(routes: readonly RouteSpec[] = OPENAPI_ROUTES): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, JsonSchema>)[route.method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'reset-notifier',
      version: '1',
      description:
        'Password-reset SMS, sent exactly once. In AWS every route except the provider callbacks needs AWS SigV4 (service execute-api); locally the API listens on loopback without auth.',
    },
    servers: [{ url: 'http://127.0.0.1:3000', description: 'npm start (local)' }],
    security: [{ sigv4: [] }],
    paths,
    components: {
      securitySchemes: {
        sigv4: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'AWS Signature Version 4 for service execute-api (IAM auth of the HTTP API)',
        },
      },
      schemas: componentSchemas(),
    },
  };
}

/** The document as `docs/openapi.json` stores it (2-space JSON and a final newline). */
export function renderOpenApiDocument(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}
