import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { NotificationState as S } from '../../../shared/domain/states.js';
import {
  createTwilioReceiptsHandler,
  signedUrlCandidates,
  TWILIO_RECEIPTS_PATH,
} from '../../../shared/handlers/receipts-handler.js';
import { twilioSignature } from '../../../shared/providers/twilio/status-callback.js';
import type { StoreOperation } from '../../support/memory-store.js';
import { aSentRecord } from '../domain/fixtures.js';
import { seededStore, writtenAfterSeed } from '../usecases/seeded-store.js';

const KEY = 'sms:password_reset:evt-1';
const TOKEN = 'auth-token-1';
const SID = `SM${'a'.repeat(32)}`;
const PUBLIC_BASE = `https://abc123.execute-api.eu-west-1.amazonaws.com${TWILIO_RECEIPTS_PATH}`;
const QUERY = `client_reference=${encodeURIComponent(`${KEY}#1`)}`;
const ACCOUNT = `AC${'b'.repeat(32)}`;
const WELL_KNOWN = 'well-known-token';

function aForm(overrides: Record<string, string> = {}): URLSearchParams {
  return new URLSearchParams({
    AccountSid: ACCOUNT,
    ApiVersion: '2010-04-01',
    MessageSid: SID,
    MessageStatus: 'delivered',
    SmsSid: SID,
    SmsStatus: 'delivered',
    ...overrides,
  });
}

/** A callback as API Gateway delivers it, signed over `signedUrl` unless a signature is given. */
function aCallback(
  options: {
    form?: URLSearchParams;
    query?: string;
    signedUrl?: string;
    signature?: string | null;
    base64?: boolean;
    domainName?: string;
  } = {},
): APIGatewayProxyEventV2 {
  const form = options.form ?? aForm();
  const query = options.query ?? QUERY;
  const signedUrl = options.signedUrl ?? (query === '' ? PUBLIC_BASE : `${PUBLIC_BASE}?${query}`);
  const signature =
    options.signature === undefined ? twilioSignature(TOKEN, signedUrl, form) : options.signature;
  const body = form.toString();
  return {
    version: '2.0',
    routeKey: `POST ${TWILIO_RECEIPTS_PATH}`,
    rawPath: TWILIO_RECEIPTS_PATH,
    rawQueryString: query,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'i-twilio-idempotency-token': 'idem-1',
      ...(signature === null ? {} : { 'x-twilio-signature': signature }),
    },
    requestContext: {
      domainName: options.domainName ?? 'abc123.execute-api.eu-west-1.amazonaws.com',
      http: { method: 'POST', path: TWILIO_RECEIPTS_PATH },
    } as APIGatewayProxyEventV2['requestContext'],
    body: options.base64 ? Buffer.from(body).toString('base64') : body,
    isBase64Encoded: options.base64 ?? false,
  };
}

async function aHandler(
  options: {
    publicBase?: string | undefined;
    failOn?: StoreOperation;
    token?: string;
    allowWellKnownToken?: boolean;
  } = {},
) {
  const operations: StoreOperation[] = [];
  const setup = await seededStore(aSentRecord({ provider: { name: 'twilio', messageId: SID } }), {
    beforeOperation: (operation) => {
      operations.push(operation);
      if (operation === options.failOn) throw new Error('ThrottlingException: table internal-name');
    },
  });
  operations.length = 0;
  const metrics: string[] = [];
  const lines: Array<{ message: string; fields: Readonly<Record<string, unknown>> }> = [];
  const errors: unknown[] = [];
  const handler = createTwilioReceiptsHandler({
    store: setup.store,
    clock: setup.clock,
    policy: setup.policy,
    authToken: async () => options.token ?? TOKEN,
    wellKnownTokens: [WELL_KNOWN],
    ...(options.allowWellKnownToken === undefined
      ? {}
      : { allowWellKnownToken: options.allowWellKnownToken }),
    accountSid: ACCOUNT,
    ...('publicBase' in options
      ? options.publicBase === undefined
        ? {}
        : { publicBase: options.publicBase }
      : { publicBase: PUBLIC_BASE }),
    countSignatureFailure: () => metrics.push('ReceiptSignatureFailures'),
    log: (message, fields) => lines.push({ message, fields }),
    logError: (error) => errors.push(error),
  });
  return { ...setup, handler, operations, metrics, lines, errors };
}

describe('Twilio receipts handler', () => {
  it('applies a correctly signed callback and answers 200 with an empty body', async () => {
    // Prepare
    const { handler, store } = await aHandler();

    // Act
    const response = await handler(aCallback());

    // Assess
    expect(response).toMatchObject({ statusCode: 200, body: '' });
    expect(store.records()[0]?.state).toBe(S.delivered);
  });

  it.each([
    ['no signature', { signature: null }],
    ['a wrong signature', { signature: 'AAAA' }],
    [
      'a signature made with another token',
      { signature: twilioSignature('other', `${PUBLIC_BASE}?${QUERY}`, aForm()) },
    ],
    [
      'a signature over another reference (query tampered)',
      { signedUrl: `${PUBLIC_BASE}?client_reference=x%231` },
    ],
    [
      'a signature over other parameters (status tampered)',
      { signature: twilioSignature(TOKEN, `${PUBLIC_BASE}?${QUERY}`, aForm({ MessageStatus: 'sent' })) },
    ],
  ] as const)('answers 403 to %s: nothing read or written, one metric', async (_label, options) => {
    // Prepare
    const { handler, operations, metrics, store } = await aHandler();

    // Act
    const response = await handler(aCallback(options));

    // Assess
    expect(response.statusCode).toBe(403);
    expect(operations).toEqual([]);
    expect(metrics).toEqual(['ReceiptSignatureFailures']);
    expect(store.records()[0]?.state).toBe(S.sent);
  });

  it.each([
    ['another account', { AccountSid: `AC${'c'.repeat(32)}` }, 'other_account'],
    ['no account', { AccountSid: '' }, 'no_account'],
  ] as const)(
    'answers 403 to a correctly signed callback for %s: nothing read or written, one metric',
    async (_label, override, why) => {
      // Prepare: signed with our token (Twilio signs every account's callbacks the same way)
      const { handler, operations, metrics, lines, store } = await aHandler();
      const form = aForm(override);
      if (override.AccountSid === '') form.delete('AccountSid');

      // Act
      const response = await handler(aCallback({ form }));

      // Assess
      expect(response.statusCode).toBe(403);
      expect(operations).toEqual([]);
      expect(metrics).toEqual(['ReceiptSignatureFailures']);
      expect(lines).toEqual([{ message: 'receipt rejected', fields: { provider: 'twilio', why } }]);
      expect(store.records()[0]?.state).toBe(S.sent);
    },
  );

  it.each([
    ['a well-known token', WELL_KNOWN],
    ['the empty token', ''],
  ])(
    'refuses every callback while its token is %s: 403, nothing written, one metric',
    async (_label, token) => {
      // Prepare: a callback correctly signed with that token (anyone can make one)
      const { handler, operations, metrics, lines, store } = await aHandler({ token });
      const signature = twilioSignature(
        token,
        `${PUBLIC_BASE}?${QUERY}`,
        aForm({ MessageStatus: 'undelivered' }),
      );

      // Act
      const response = await handler(aCallback({ form: aForm({ MessageStatus: 'undelivered' }), signature }));

      // Assess
      expect(response.statusCode).toBe(403);
      expect(operations).toEqual([]);
      expect(metrics).toEqual(['ReceiptSignatureFailures']);
      expect(lines.map((l) => l.fields.why)).toEqual(['well_known_token']);
      expect(store.records()[0]?.state).toBe(S.sent);
    },
  );

  it('believes a well-known token only where the local stack allows it', async () => {
    // Prepare
    const { handler, store } = await aHandler({ token: WELL_KNOWN, allowWellKnownToken: true });
    const signature = twilioSignature(WELL_KNOWN, `${PUBLIC_BASE}?${QUERY}`, aForm());

    // Act
    const response = await handler(aCallback({ signature }));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(store.records()[0]?.state).toBe(S.delivered);
  });

  it('checks the signature over the raw query exactly as requested (encoding kept)', async () => {
    // Prepare: Twilio signed `%23`; a URL rebuilt from parsed parameters would differ.
    const { handler } = await aHandler();
    const rawQuery = `client_reference=${KEY.replace(/:/g, '%3A')}%231`;

    // Act
    const response = await handler(aCallback({ query: rawQuery }));

    // Assess
    expect(response.statusCode).toBe(200);
  });

  it('reads a base64-encoded form body', async () => {
    const { handler, store } = await aHandler();
    const response = await handler(aCallback({ base64: true }));
    expect(response.statusCode).toBe(200);
    expect(store.records()[0]?.state).toBe(S.delivered);
  });

  it('without a configured base, verifies against https + the request domain name', async () => {
    // Prepare
    const { handler } = await aHandler({ publicBase: undefined });
    const domainName = 'receipts.example.com';

    // Act
    const response = await handler(
      aCallback({ domainName, signedUrl: `https://${domainName}${TWILIO_RECEIPTS_PATH}?${QUERY}` }),
    );

    // Assess
    expect(response.statusCode).toBe(200);
  });

  it.each([
    ['an unknown reference', { query: 'client_reference=nobody%231' }, 'unknown_command'],
    ['no reference at all', { query: '' }, 'unknown_reference'],
    ['a duplicate of an applied receipt', {}, 'ignored'],
  ] as const)('answers 200 to a valid callback with %s', async (_label, options, expected) => {
    // Prepare
    const { handler, lines } = await aHandler();
    await handler(aCallback());
    lines.length = 0;

    // Act
    const response = await handler(aCallback(options));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(lines.map((l) => l.fields.result)).toEqual([expected]);
  });

  it.each([
    ['a key over 2,048 bytes', `${'k'.repeat(2_049)}#1`],
    ["the reconciler's cursor partition", '_control#reconciler#1'],
    ['a budget counter partition', 'LIMIT#dst#fp1:0123#15m#1#1'],
  ])(
    'answers 200 to a signed callback whose reference names %s, without asking the store',
    async (_label, reference) => {
      // Prepare: the store would refuse a key over 2,048 bytes (a 500, and Twilio retrying for hours).
      const { handler, operations, lines } = await aHandler();

      // Act
      const response = await handler(
        aCallback({ query: `client_reference=${encodeURIComponent(reference)}` }),
      );

      // Assess
      expect(response.statusCode).toBe(200);
      expect(operations).toEqual([]);
      expect(lines.map((l) => l.fields.result)).toEqual(['unknown_reference']);
    },
  );

  it('answers 200 and writes nothing for a signed callback it cannot parse', async () => {
    // Prepare
    const { handler, operations } = await aHandler();

    // Act
    const response = await handler(
      aCallback({ form: aForm({ MessageSid: 'not-a-sid', SmsSid: 'not-a-sid' }) }),
    );

    // Assess
    expect(response.statusCode).toBe(200);
    expect(operations).toEqual([]);
  });

  it('writes one evidence record for two deliveries of the same callback', async () => {
    // Prepare
    const { handler, store } = await aHandler();

    // Act
    await handler(aCallback());
    await handler(aCallback());

    // Assess
    expect(await writtenAfterSeed(store, KEY, 3)).toHaveLength(1);
  });

  it('turns a store fault into a bare 500 that leaks nothing, and logs it', async () => {
    // Prepare
    const { handler, errors } = await aHandler({ failOn: 'get' });

    // Act
    const response = await handler(aCallback());

    // Assess
    expect(response).toMatchObject({ statusCode: 500, body: '' });
    expect(errors).toHaveLength(1);
  });

  it('logs ids and outcomes only', async () => {
    const { handler, lines } = await aHandler();
    await handler(aCallback());
    expect(lines).toEqual([
      {
        message: 'receipt',
        fields: expect.objectContaining({
          message_id: SID,
          result: 'applied',
          to: 'delivered',
          dedupe_token: 'idem-1',
        }),
      },
    ]);
  });
});

describe('signedUrlCandidates', () => {
  it('puts the configured origin first and the request domain second, with raw path and query', () => {
    // Prepare
    const event = aCallback({ domainName: 'api.internal', query: 'a=1&b=%20' });

    // Act
    const urls = signedUrlCandidates(event, 'https://public.example.com/anything');

    // Assess
    expect(urls).toEqual([
      `https://public.example.com${TWILIO_RECEIPTS_PATH}?a=1&b=%20`,
      `https://api.internal${TWILIO_RECEIPTS_PATH}?a=1&b=%20`,
    ]);
  });
});
