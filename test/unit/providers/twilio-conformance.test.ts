/**
 * Conformance with Twilio itself, not with our own reading of it:
 * - the official `twilio` npm client drives the simulator (create, fetch, list and paging, body
 *   redaction, delete, errors) and its `validateRequest` checks the callbacks the simulator posts;
 * - the simulator's Message and list responses, and the adapter's outgoing requests, validate
 *   against Twilio's OpenAPI document (../shared/reference/twilio/twilio_api_v2010.json) with ajv.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../../local/simulator/server.js';
import { eventually } from '../../support/eventually.js';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  aClock,
  anAfterDeadlineRef,
  aPhoneNumber,
  aProvider,
  aRecordingFetch,
  aResetBody,
  aSendCommand,
  FROM,
  primeCanary,
  type SimHarness,
  startHarness,
} from './support.js';

/**
 * The Messages part of Twilio's OpenAPI document (REST API v2010, MIT licence), extracted from the
 * full document with every schema it references and committed with the tests
 * (`test/fixtures/twilio/`), so a clean clone needs nothing beside it. TWILIO_OPENAPI_FILE points
 * the tests at another copy (the full document validates the same).
 */
function findOpenApiFile(): string {
  const fromEnv = process.env.TWILIO_OPENAPI_FILE;
  if (fromEnv) return fromEnv;
  const committed = resolve(import.meta.dirname, '../../fixtures/twilio/twilio_api_v2010.messages.json');
  if (existsSync(committed)) return committed;
  throw new Error('Twilio OpenAPI document not found: set TWILIO_OPENAPI_FILE');
}
const OPENAPI_FILE = findOpenApiFile();
const MESSAGES_PATH = '/2010-04-01/Accounts/{AccountSid}/Messages.json';
const MESSAGE_PATH = '/2010-04-01/Accounts/{AccountSid}/Messages/{Sid}.json';
const DELAYS = { sent: 60, delivered: 120 };

type JsonSchema = Record<string, unknown>;
interface OpenApiDocument {
  readonly paths: Record<string, Record<string, Record<string, unknown>>>;
  readonly components: { readonly schemas: Record<string, JsonSchema> };
}

const openapi = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;

/** The schemas `root` references, transitively, under their component names. */
function referencedSchemas(
  root: unknown,
  found: Record<string, JsonSchema> = {},
): Record<string, JsonSchema> {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const name = value.replace('#/components/schemas/', '');
        const schema = openapi.components.schemas[name];
        if (schema !== undefined && found[name] === undefined) {
          found[name] = schema;
          visit(schema);
        }
      } else {
        visit(value);
      }
    }
  };
  visit(root);
  return found;
}

/** Ajv for OpenAPI 3.0 schemas: `nullable` is native to ajv; Twilio's own formats are added. */
function openApiAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: true });
  ajv.addFormat(
    'date-time-rfc-2822',
    /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$/,
  );
  // Twilio's `uri` values are relative to https://api.twilio.com (its own examples show them so).
  ajv.addFormat('uri', (value: string) => value.startsWith('/') || URL.canParse(value));
  ajv.addFormat('phone-number', /^\S+$/);
  ajv.addFormat('currency', /^[A-Za-z]{3}$/);
  ajv.addFormat('uri-map', () => true);
  ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));
  ajv.addFormat('int64', /^-?\d+$/);
  return ajv;
}

/** Compiles `schema` with every component it references, as `$ref`s resolve in the document. */
function compile(ajv: Ajv, schema: unknown): ValidateFunction {
  const components = referencedSchemas(schema);
  return ajv.compile({ ...(schema as JsonSchema), components: { schemas: components } });
}

const operation = (path: string, method: string) => {
  const op = openapi.paths[path]?.[method];
  if (op === undefined) throw new Error(`no ${method} ${path} in the OpenAPI document`);
  return op as {
    parameters: { name: string; in: string; schema: JsonSchema }[];
    requestBody?: { content: Record<string, { schema: JsonSchema }> };
    responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
  };
};
const responseSchema = (path: string, method: string, status: string) => {
  const schema = operation(path, method).responses[status]?.content?.['application/json']?.schema;
  if (schema === undefined) throw new Error(`no ${status} schema for ${method} ${path}`);
  return schema;
};

const ajv = openApiAjv();
// The Message schema lists properties without `additionalProperties: false`; we add it, so an
// extra field (like the old `status_callback`) fails: exactly Twilio's fields, no more.
const messageSchema = {
  ...openapi.components.schemas['api.v2010.account.message'],
  additionalProperties: false,
  required: Object.keys(
    (openapi.components.schemas['api.v2010.account.message']?.properties ?? {}) as Record<string, unknown>,
  ),
};
const validateMessage = compile(ajv, messageSchema);
const listSchema = responseSchema(MESSAGES_PATH, 'get', '200');
const validateList = compile(ajv, {
  ...listSchema,
  properties: { ...(listSchema.properties as JsonSchema), messages: { type: 'array', items: messageSchema } },
});
const createOperation = operation(MESSAGES_PATH, 'post');
const validateCreateForm = compile(
  ajv,
  createOperation.requestBody?.content['application/x-www-form-urlencoded']?.schema,
);
const listParameters = operation(MESSAGES_PATH, 'get').parameters.filter((p) => p.in === 'query');
const validateListQuery = compile(ajv, {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(listParameters.map((p) => [p.name, p.schema])),
});
const validateSidPath = compile(ajv, {
  type: 'object',
  properties: Object.fromEntries(operation(MESSAGE_PATH, 'get').parameters.map((p) => [p.name, p.schema])),
});

const errorsOf = (validate: ValidateFunction) => JSON.stringify(validate.errors ?? []);

/** A twilio client whose requests go to the simulator instead of https://api.twilio.com. */
function aTwilioClient(simUrl: string, authToken = AUTH_TOKEN) {
  class SimulatorRequestClient extends twilio.RequestClient {
    override request<TData>(opts: RequestClient.RequestOptions<TData>) {
      // Only the origin changes: path, query, auth and body are the client's own.
      const uri = new URL(opts.uri);
      return super.request<TData>({ ...opts, uri: `${simUrl}${uri.pathname}${uri.search}` });
    }
  }
  return twilio(ACCOUNT_SID, authToken, { httpClient: new SimulatorRequestClient() });
}

/** A small HTTP server capturing status callbacks (port 0). */
async function aCallbackCapture() {
  const received: { url: string; params: Record<string, string>; headers: Record<string, string> }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        url: `http://${req.headers.host}${req.url}`,
        params: Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))),
        headers: Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]),
        ),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/twilio/status`,
    received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('Twilio conformance: the official client drives the simulator', () => {
  let harness: SimHarness;
  let client: ReturnType<typeof aTwilioClient>;

  beforeAll(async () => {
    harness = await startHarness({ statusDelaysMs: DELAYS });
    client = aTwilioClient(harness.url);
  });

  afterAll(async () => {
    await harness.stop();
  });

  beforeEach(async () => {
    await harness.reset();
  });

  it('creates a message; the 201 is a schema-valid Message with exactly its fields', async () => {
    // Prepare
    const to = aPhoneNumber();
    const body = aResetBody();

    // Act
    const message = await client.messages.create({ to, from: FROM, body, validityPeriod: 600 });
    const raw = await (
      await fetch(`${harness.url}${message.uri}`, {
        headers: { authorization: `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}` },
      })
    ).json();

    // Assess
    expect(message).toMatchObject({ to, from: FROM, body, status: 'queued', accountSid: ACCOUNT_SID });
    expect(message.sid).toMatch(/^SM[0-9a-fA-F]{32}$/);
    expect(message.dateCreated).toBeInstanceOf(Date);
    expect(validateMessage(raw), errorsOf(validateMessage)).toBe(true);
  });

  it('creates through a messaging service without From', async () => {
    // Act
    const message = await client.messages.create({
      to: aPhoneNumber(),
      messagingServiceSid: `MG${'c'.repeat(32)}`,
      body: aResetBody(),
    });

    // Assess
    expect(message).toMatchObject({
      status: 'accepted',
      from: null,
      messagingServiceSid: `MG${'c'.repeat(32)}`,
    });
  });

  it('fetches a message and follows its status', async () => {
    // Prepare
    const created = await client.messages.create({ to: aPhoneNumber(), from: FROM, body: aResetBody() });

    // Act
    const queued = await client.messages(created.sid).fetch();
    harness.clock.advance(DELAYS.sent);
    const sent = await client.messages(created.sid).fetch();
    harness.clock.advance(DELAYS.delivered - DELAYS.sent);
    const fetched = await client.messages(created.sid).fetch();

    // Assess
    expect([queued.status, sent.status]).toEqual(['queued', 'sent']);
    expect(queued.dateSent).toBeNull();
    expect(fetched).toMatchObject({ sid: created.sid, status: 'delivered' });
    expect(fetched.dateSent).toBeInstanceOf(Date);
  });

  it('lists newest first and pages through next_page_uri; every page is schema-valid', async () => {
    // Prepare
    const to = aPhoneNumber();
    const sids: string[] = [];
    for (let i = 0; i < 5; i += 1)
      sids.push((await client.messages.create({ to, from: FROM, body: aResetBody() })).sid);
    const pages: unknown[] = [];
    const recording = aRecordingFetch(async (url, init) => {
      const response = await fetch(url, init);
      pages.push(await response.clone().json());
      return response;
    });

    // Act
    const listed = await client.messages.list({ to, pageSize: 2 });
    const firstPage = await client.messages.page({ to, pageSize: 2 });
    const secondPage = await firstPage.nextPage();
    let next: string | null =
      `${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json?To=${encodeURIComponent(to)}&PageSize=2`;
    while (next !== null) {
      const page = (await (
        await recording.fetch(next, {
          headers: {
            authorization: `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`,
          },
        })
      ).json()) as { next_page_uri: string | null };
      next = page.next_page_uri === null ? null : `${harness.url}${page.next_page_uri}`;
    }

    // Assess
    expect(listed.map((m) => m.sid)).toEqual([...sids].reverse());
    expect(firstPage.instances.map((m) => m.sid)).toEqual(sids.slice(3).reverse());
    expect(secondPage?.instances.map((m) => m.sid)).toEqual(sids.slice(1, 3).reverse());
    expect(pages).toHaveLength(3);
    for (const page of pages) expect(validateList(page), errorsOf(validateList)).toBe(true);
  });

  it('filters by the day it was sent (dateSent, dateSentAfter, dateSentBefore)', async () => {
    // Prepare
    const to = aPhoneNumber();
    const message = await client.messages.create({ to, from: FROM, body: aResetBody() });
    harness.clock.advance(DELAYS.sent);
    const now = new Date(harness.clock.now());
    const tomorrow = new Date(harness.clock.now() + 86_400_000);

    // Act
    const onDay = await client.messages.list({ to, dateSent: now });
    const after = await client.messages.list({ to, dateSentAfter: now });
    const afterTomorrow = await client.messages.list({ to, dateSentAfter: tomorrow });
    const before = await client.messages.list({ to, dateSentBefore: now });

    // Assess
    expect(onDay.map((m) => m.sid)).toEqual([message.sid]);
    expect(after.map((m) => m.sid)).toEqual([message.sid]);
    expect(afterTomorrow).toEqual([]);
    expect(before.map((m) => m.sid)).toEqual([message.sid]);
  });

  it('redacts a body with update({ body: "" }) and deletes with remove()', async () => {
    // Prepare
    const created = await client.messages.create({ to: aPhoneNumber(), from: FROM, body: aResetBody() });

    // Act
    const redacted = await client.messages(created.sid).update({ body: '' });
    const removed = await client.messages(created.sid).remove();
    const afterRemove = await client
      .messages(created.sid)
      .fetch()
      .catch((error: unknown) => error);

    // Assess
    expect(redacted).toMatchObject({ sid: created.sid, body: '' });
    expect(removed).toBe(true);
    expect(afterRemove).toMatchObject({ status: 404, code: 20404 });
  });

  it.each([
    ['a wrong auth token', 'wrong-token', { to: '+14155550100' }, { status: 401, code: 20003 }],
    ['an invalid To', AUTH_TOKEN, { to: '4155550100' }, { status: 400, code: 21211 }],
    ['a region without geo permission', AUTH_TOKEN, { to: '+15005550003' }, { status: 400, code: 21408 }],
    ['an unreachable To', AUTH_TOKEN, { to: '+15005550002' }, { status: 400, code: 21612 }],
  ])('surfaces %s as a RestException with Twilio status and code', async (_, token, params, expected) => {
    // Prepare
    const other = aTwilioClient(harness.url, token);

    // Act
    const error = await other.messages
      .create({ from: FROM, body: aResetBody(), ...params })
      .catch((thrown: unknown) => thrown);

    // Assess
    expect(error).toBeInstanceOf(twilio.RestException);
    expect(error).toMatchObject({
      ...expected,
      moreInfo: `https://www.twilio.com/docs/errors/${expected.code}`,
    });
  });

  it('surfaces a 429 (rate_limited) as code 20429 and records nothing', async () => {
    // Prepare
    await harness.setFaults({ mode: 'rate_limited', count: 1 });

    // Act
    const error = await client.messages
      .create({ to: aPhoneNumber(), from: FROM, body: aResetBody() })
      .catch((thrown: unknown) => thrown);

    // Assess
    expect(error).toMatchObject({ status: 429, code: 20429 });
    expect(await harness.ledger()).toEqual([]);
  });

  it('posts status callbacks that twilio.validateRequest accepts, with an idempotency token', async () => {
    // Prepare
    const capture = await aCallbackCapture();
    const statusCallback = `${capture.url}?client_reference=${encodeURIComponent('key-1#1')}`;

    // Act
    const message = await client.messages.create({
      to: aPhoneNumber(),
      from: FROM,
      body: aResetBody(),
      statusCallback,
    });
    harness.clock.advance(DELAYS.delivered);
    await eventually(() => expect(capture.received).toHaveLength(2));
    await capture.stop();

    // Assess
    expect(capture.received.map((c) => c.params.MessageStatus)).toEqual(['sent', 'delivered']);
    for (const callback of capture.received) {
      expect(callback.params).toMatchObject({ MessageSid: message.sid, AccountSid: ACCOUNT_SID });
      const signature = callback.headers['x-twilio-signature'] ?? '';
      expect(twilio.validateRequest(AUTH_TOKEN, signature, callback.url, callback.params)).toBe(true);
      expect(twilio.validateRequest('another-token', signature, callback.url, callback.params)).toBe(false);
      expect(callback.headers['i-twilio-idempotency-token']).toMatch(/\S+/);
    }
  });
});

describe('Twilio conformance: the adapter speaks the OpenAPI document', () => {
  let harness: SimHarness;

  beforeAll(async () => {
    harness = await startHarness({ statusDelaysMs: DELAYS });
  });

  afterAll(async () => {
    await harness.stop();
  });

  it('its create, fetch and list requests validate against CreateMessage, FetchMessage and ListMessage', async () => {
    // Prepare
    const clock = aClock();
    const requests: { url: URL; method: string; body: string }[] = [];
    const recording = aRecordingFetch(async (url, init) => {
      requests.push({ url: new URL(url), method: init?.method ?? 'GET', body: String(init?.body ?? '') });
      return undefined;
    });
    const provider = aProvider(harness, clock, { fetch: recording.fetch });
    const sid = await primeCanary(provider, clock);
    const command = aSendCommand(clock);

    // Act
    await provider.lookup(anAfterDeadlineRef(command, clock, { messageId: sid }));
    await provider.lookup(anAfterDeadlineRef(command, clock));

    // Assess
    const creates = requests.filter((r) => r.method === 'POST');
    const fetches = requests.filter((r) => r.method === 'GET' && !r.url.pathname.endsWith('/Messages.json'));
    const lists = requests.filter((r) => r.method === 'GET' && r.url.pathname.endsWith('/Messages.json'));
    expect([creates.length, fetches.length > 0, lists.length > 0]).toEqual([1, true, true]);
    for (const create of creates) {
      const form = Object.fromEntries(new URLSearchParams(create.body));
      expect(validateCreateForm(form), errorsOf(validateCreateForm)).toBe(true);
      expect(Object.keys(form).sort()).toEqual(['Body', 'From', 'StatusCallback', 'To', 'ValidityPeriod']);
    }
    for (const read of fetches) {
      const [, accountSid, messageSid] =
        /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\/([^/]+)\.json$/.exec(read.url.pathname) ?? [];
      expect(validateSidPath({ AccountSid: accountSid, Sid: messageSid }), errorsOf(validateSidPath)).toBe(
        true,
      );
    }
    for (const list of lists) {
      const query = Object.fromEntries(list.url.searchParams);
      expect(validateListQuery(query), errorsOf(validateListQuery)).toBe(true);
    }
  });

  it('the Message validator bites: the old status_callback extension and an unknown status are refused', async () => {
    // Prepare
    const sim = await startSimulator({ authToken: AUTH_TOKEN, extensions: true });
    const clock = aClock();
    const provider = aProvider({ url: sim.url }, clock);
    const sid = await primeCanary(provider, clock);

    // Act
    const raw = (await (
      await fetch(`${sim.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/${sid}.json`, {
        headers: { authorization: `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}` },
      })
    ).json()) as Record<string, unknown>;
    await sim.stop();
    const { status_callback: _extension, ...plain } = raw;

    // Assess
    expect(validateMessage(raw)).toBe(false);
    expect(validateMessage(plain)).toBe(true);
    expect(validateMessage({ ...plain, status: 'lost' })).toBe(false);
  });

  it('the simulator never returns a field Twilio does not document, even for a message it failed', async () => {
    // Prepare
    const clock = aClock();
    const provider = aProvider(harness, clock);
    await harness.setFaults({ mode: 'fail_not_sent', count: 1 });
    const sid = await primeCanary(provider, clock);
    harness.clock.advance(DELAYS.sent);

    // Act
    const raw = await (
      await fetch(`${harness.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/${sid}.json`, {
        headers: { authorization: `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}` },
      })
    ).json();

    // Assess
    expect(validateMessage(raw), errorsOf(validateMessage)).toBe(true);
    expect(raw).toMatchObject({ status: 'failed', error_code: 30001 });
  });
});
