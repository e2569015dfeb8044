import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONFIGURATION_TWILIO_CODES,
  classifySend,
  matchSendRule,
  normaliseStatus,
  observeTransportError,
  PERMANENT_TWILIO_CODES,
  parseRetryAfter,
  parseSendBody,
  SEND_CLASSIFICATION,
  type SendObservation,
  statusDetail,
  TWILIO_FAILED_CODES,
  TWILIO_STATUS_MAP,
  type TwilioBody,
} from '../../../shared/providers/twilio/index.js';

// Fixture factories -------------------------------------------------------------------------------
const SID = `SM${'0123456789abcdef'.repeat(2)}`;
const message = (sid = SID): TwilioBody => ({ kind: 'message', sid });
const twilioError = (code: number): TwilioBody => ({ kind: 'error', code });
const other: TwilioBody = { kind: 'other' };
const transport = (code: string | null, timedOut = false): SendObservation => ({
  kind: 'transport',
  timedOut,
  code,
});
const http = (
  status: number,
  body: TwilioBody = other,
  retryAfterMs: number | null = null,
): SendObservation => ({
  kind: 'http',
  status,
  retryAfterMs,
  body,
});

/** Examples per table row. Every row must have some, and every example must land on its row. */
const EXAMPLES: Record<string, readonly SendObservation[]> = {
  deadline_reached: [transport(null, true), transport('ECONNRESET', true), transport('ECONNREFUSED', true)],
  never_connected: [
    transport('ECONNREFUSED'),
    transport('ENOTFOUND'),
    transport('EAI_AGAIN'),
    transport('UND_ERR_CONNECT_TIMEOUT'),
  ],
  response_timeout: [transport('UND_ERR_HEADERS_TIMEOUT'), transport('UND_ERR_BODY_TIMEOUT')],
  transport_failed: [
    transport('ECONNRESET'),
    transport('EPIPE'),
    transport('UND_ERR_SOCKET'),
    transport(null),
    transport('constructor'),
  ],
  accepted: [http(201, message()), http(200, message())],
  success_without_sid: [http(201), http(201, twilioError(20500)), http(202), http(204)],
  redirect: [http(301), http(307, message()), http(308)],
  request_timeout: [http(408), http(408, twilioError(21211))],
  rate_limited: [http(429, twilioError(20429), 2_000), http(429)],
  rejected_permanent: [
    ...Object.keys(PERMANENT_TWILIO_CODES).map((code) => http(400, twilioError(Number(code)))),
    http(404, twilioError(21211)),
  ],
  rejected_account_permanent: [http(400, twilioError(21408)), http(403, twilioError(21408))],
  rejected_configuration: [http(400, twilioError(21612))],
  auth_rejected: [http(401, twilioError(20003)), http(401), http(403), http(403, twilioError(20003))],
  rejected_retryable: [
    http(400, twilioError(21606)),
    http(400, twilioError(21611)),
    http(400),
    http(404, twilioError(20404)),
    http(404),
    http(405),
    http(413),
  ],
  server_error: [
    http(500, twilioError(20500)),
    http(502),
    http(503, twilioError(20503)),
    http(504),
    http(500, message()),
  ],
  unexpected: [http(100), http(600), http(199)],
};

describe('Twilio send classification table', () => {
  it('has examples for exactly the rows of the table', () => {
    // Prepare
    const rowIds = SEND_CLASSIFICATION.map((rule) => rule.id);

    // Act
    const exampleIds = Object.keys(EXAMPLES);

    // Assess
    expect(exampleIds.sort()).toEqual([...rowIds].sort());
    expect(new Set(rowIds).size).toBe(rowIds.length);
  });

  describe.each(SEND_CLASSIFICATION.map((rule) => [rule.id, rule] as const))('row %s', (id, rule) => {
    it.each((EXAMPLES[id] ?? []).map((example) => [JSON.stringify(example), example] as const))(
      `classifies %s as ${rule.outcome}`,
      (_, example) => {
        // Act
        const matched = matchSendRule(example);
        const outcome = classifySend(example);

        // Assess
        expect(matched.id).toBe(id);
        expect(outcome.kind).toBe(rule.outcome);
        if (outcome.kind === 'unknown') expect(outcome.timedOut).toBe(rule.timedOut);
        expect(outcome).not.toHaveProperty('detail', '');
      },
    );
  });

  it('returns the sid of an accepted message', () => {
    // Act
    const outcome = classifySend(http(201, message()));

    // Assess
    expect(outcome).toEqual({ kind: 'accepted', messageId: SID });
  });

  it('carries Retry-After into a rate-limited outcome, and omits it when absent', () => {
    // Act
    const withHeader = classifySend(http(429, twilioError(20429), 2_000));
    const withoutHeader = classifySend(http(429));

    // Assess
    expect(withHeader).toEqual({ kind: 'not_sent_retryable', detail: 'rate_limited', retryAfterMs: 2_000 });
    expect(withoutHeader).toEqual({ kind: 'not_sent_retryable', detail: 'rate_limited' });
  });

  it('names the Twilio code of a permanent rejection', () => {
    // Act
    const outcome = classifySend(http(400, twilioError(21610)));

    // Assess
    expect(outcome).toEqual({ kind: 'not_sent_permanent', detail: 'twilio_21610' });
  });

  it('reads 21408 (geo permissions) as not sent, permanent, named in the reason_detail grammar', () => {
    // Act
    const outcome = classifySend(http(400, twilioError(21408)));

    // Assess
    expect(outcome).toEqual({ kind: 'not_sent_permanent', detail: 'twilio:21408' });
  });

  it.each(Object.keys(CONFIGURATION_TWILIO_CODES))(
    'classes %s as our configuration: retryable, with a detail a metric can count',
    (code) => {
      // Act
      const outcome = classifySend(http(400, twilioError(Number(code))));

      // Assess
      expect(outcome).toEqual({ kind: 'not_sent_retryable', detail: `twilio:config:${code}` });
    },
  );

  it('reads an accepted sid with uppercase hex digits (the OpenAPI sid pattern)', () => {
    // Prepare
    const upper = `SM${'ABCDEF0123456789'.repeat(2)}`;

    // Act
    const outcome = classifySend(http(201, parseSendBody(JSON.stringify({ sid: upper }))));

    // Assess
    expect(outcome).toEqual({ kind: 'accepted', messageId: upper });
  });

  it('names the stage of a connection that never existed', () => {
    // Act
    const refused = classifySend(transport('ECONNREFUSED'));
    const dns = classifySend(transport('ENOTFOUND'));

    // Assess
    expect(refused).toEqual({ kind: 'not_sent_retryable', detail: 'connection_refused' });
    expect(dns).toEqual({ kind: 'not_sent_retryable', detail: 'dns_unresolved' });
  });

  it('keeps a sid found in a 5xx answer, so reconciliation can look it up by id', () => {
    // Act
    const outcome = classifySend(http(500, message()));

    // Assess
    expect(outcome).toEqual({ kind: 'unknown', detail: 'http_500', timedOut: false, messageId: SID });
  });

  it('never calls an answer "not sent" once the request may have reached Twilio (property)', () => {
    // Prepare
    const bodies = fc.oneof(
      fc.constant(other),
      fc.integer({ min: 10_000, max: 99_999 }).map(twilioError),
      fc.constant(message()),
    );
    const observations = fc.oneof(
      fc.record({
        kind: fc.constant('http' as const),
        status: fc.integer({ min: 100, max: 599 }),
        retryAfterMs: fc.option(fc.nat()),
        body: bodies,
      }),
      fc.record({
        kind: fc.constant('transport' as const),
        timedOut: fc.boolean(),
        code: fc.option(fc.constantFrom('ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNREFUSED', 'X')),
      }),
    );

    // Act + Assess
    fc.assert(
      fc.property(observations, (observation) => {
        const outcome = classifySend(observation);
        const mayHaveArrived =
          observation.kind === 'http'
            ? observation.status >= 500 || observation.status < 400 || observation.status === 408
            : observation.timedOut || observation.code !== 'ECONNREFUSED';
        if (mayHaveArrived) expect(outcome.kind === 'unknown' || outcome.kind === 'accepted').toBe(true);
        if (outcome.kind === 'accepted') {
          expect(observation).toMatchObject({ kind: 'http', body: { kind: 'message' } });
        }
      }),
    );
  });
});

describe('parseSendBody', () => {
  it.each([
    ['a created message', JSON.stringify({ sid: SID, status: 'queued' }), message()],
    ['a Twilio error', JSON.stringify({ code: 21211, message: 'x', status: 400 }), twilioError(21211)],
    ['a sid of another resource', JSON.stringify({ sid: `AC${'0'.repeat(32)}` }), other],
    ['a truncated sid', JSON.stringify({ sid: 'SM123' }), other],
    ['a non-integer code', JSON.stringify({ code: '21211' }), other],
    ['an array', '[]', other],
    ['HTML', '<html>bad gateway</html>', other],
    ['nothing', '', other],
  ])('reads %s', (_, text, expected) => {
    // Act
    const body = parseSendBody(text);

    // Assess
    expect(body).toEqual(expected);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 10, 29, 12, 0, 0);

  it.each([
    ['delta seconds', '3', 3_000],
    ['zero', '0', 0],
    ['an HTTP-date 10 s ahead', new Date(now + 10_000).toUTCString(), 10_000],
    ['an HTTP-date in the past', new Date(now - 10_000).toUTCString(), 0],
    ['a negative number', '-1', null],
    ['a fraction', '1.5', null],
    ['garbage', 'soon', null],
    ['no header', null, null],
  ])('reads %s', (_, header, expected) => {
    // Act
    const value = parseRetryAfter(header, now);

    // Assess
    expect(value).toBe(expected);
  });
});

describe('observeTransportError', () => {
  const withCode = (code: string) => Object.assign(new Error(code), { code });

  it('finds the socket error code under fetch\'s "fetch failed"', () => {
    // Prepare
    const error = new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') });

    // Act
    const observed = observeTransportError(error, false);

    // Assess
    expect(observed).toEqual({ kind: 'transport', timedOut: false, code: 'ECONNREFUSED' });
  });

  it('reads a code only when every attempt of an AggregateError agrees', () => {
    // Prepare
    const agreeing = new TypeError('fetch failed', {
      cause: new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
    });
    const mixed = new TypeError('fetch failed', {
      cause: new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNRESET')]),
    });

    // Act
    const fromAgreeing = observeTransportError(agreeing, false);
    const fromMixed = observeTransportError(mixed, false);

    // Assess
    expect(fromAgreeing.code).toBe('ECONNREFUSED');
    expect(fromMixed.code).toBeNull();
  });

  it('treats a fired deadline as a timeout whatever the error says', () => {
    // Prepare
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');

    // Act
    const byName = observeTransportError(timeout, false);
    const bySignal = observeTransportError(
      new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') }),
      true,
    );

    // Assess
    expect(byName.timedOut).toBe(true);
    expect(bySignal).toEqual({ kind: 'transport', timedOut: true, code: 'ECONNREFUSED' });
    expect(classifySend(bySignal).kind).toBe('unknown');
  });

  it('copes with things that are not errors', () => {
    // Act
    const observed = observeTransportError('boom', false);

    // Assess
    expect(observed).toEqual({ kind: 'transport', timedOut: false, code: null });
  });
});

describe('normaliseStatus', () => {
  it.each(Object.entries(TWILIO_STATUS_MAP))('maps %s to %s', (twilio, expected) => {
    // Act + Assess
    expect(normaliseStatus(twilio)).toBe(expected);
  });

  it.each([['receiving'], ['__proto__'], ['constructor'], [''], [null], [42]])(
    'reads %s as pending (the message exists)',
    (status) => {
      // Act + Assess
      expect(normaliseStatus(status)).toBe('pending');
    },
  );

  it('covers the statuses the brief names', () => {
    // Assess
    expect(['queued', 'accepted', 'sending', 'scheduled'].map(normaliseStatus)).toEqual(
      Array(4).fill('pending'),
    );
    expect(['sent', 'delivered', 'read'].map(normaliseStatus)).toEqual(['sent', 'delivered', 'delivered']);
    expect(['undelivered', 'failed', 'canceled'].map((s) => normaliseStatus(s))).toEqual(
      Array(3).fill('undelivered'),
    );
  });
});

describe('normaliseStatus with an error code', () => {
  it.each([
    ['failed', 30001, 'not_sent'],
    ['failed', '30036', 'not_sent'],
    // Other failures may have reached a carrier (30008 unknown, 30007 filtered by the carrier).
    ['failed', 30008, 'undelivered'],
    ['failed', 30007, 'undelivered'],
    ['failed', null, 'undelivered'],
    // `undelivered` is the carrier's answer: the message left Twilio's queue.
    ['undelivered', 30036, 'undelivered'],
    ['delivered', 30001, 'delivered'],
  ] as const)('reads %s with error %s as %s', (status, code, expected) => {
    // Act + Assess
    expect(normaliseStatus(status, code)).toBe(expected);
  });
});

/**
 * Twilio `failed` codes, from the documentation (docs/providers/twilio.md, "Failed messages, code
 * by code"): written out here independently of the adapter's table, so a change to either shows.
 */
const FAILED_CODES_FROM_THE_DOCS = [
  // Twilio's own failures and its queue: not sent, a new attempt may succeed.
  [30001, 'not_sent'],
  [30036, 'not_sent'],
  [30500, 'not_sent'],
  [12400, 'not_sent'],
  [20500, 'not_sent'],
  [20504, 'not_sent'],
  [30103, 'not_sent'],
  // The account, geo permissions, SMS pumping protection: not sent, never retried.
  [30002, 'not_sent_permanent'],
  [90010, 'not_sent_permanent'],
  [30454, 'not_sent_permanent'],
  [21408, 'not_sent_permanent'],
  [30450, 'not_sent_permanent'],
  // Anything else may have reached a carrier: a message that exists.
  [30003, 'undelivered'],
  [30005, 'undelivered'],
  [30006, 'undelivered'],
  [30007, 'undelivered'],
  [30008, 'undelivered'],
  [30034, 'undelivered'],
] as const;

describe('Twilio failed codes, code by code', () => {
  it.each(FAILED_CODES_FROM_THE_DOCS)('a failed message with error %i reads as %s', (code, expected) => {
    // Act
    const asNumber = normaliseStatus('failed', code);
    const asString = normaliseStatus('failed', String(code));

    // Assess
    expect(asNumber).toBe(expected);
    expect(asString).toBe(expected);
  });

  it.each(FAILED_CODES_FROM_THE_DOCS)('names error %i as twilio:<code> for reason_detail', (code) => {
    // Act
    const detail = statusDetail('failed', code);

    // Assess
    expect(detail).toBe(`twilio:${code}`);
    expect(detail).toMatch(/^[a-z0-9_]+(:[A-Za-z0-9_.-]+)*$/);
  });

  it('classifies exactly the codes the documentation table lists as not sent, and cites a Twilio page for each', () => {
    // Prepare
    const documented = FAILED_CODES_FROM_THE_DOCS.filter(([, status]) => status !== 'undelivered').map(
      ([code]) => code,
    );

    // Act
    const classified = Object.keys(TWILIO_FAILED_CODES).map(Number);

    // Assess
    expect(classified.sort()).toEqual([...documented].sort());
    for (const rule of Object.values(TWILIO_FAILED_CODES))
      expect(rule.source).toMatch(/^https:\/\/(www|support)\.twilio\.com\//);
  });

  it.each([30500, 30450])(
    "an `undelivered` message with error %i is the carrier's answer: it exists",
    (code) => {
      // Act + Assess
      expect(normaliseStatus('undelivered', code)).toBe('undelivered');
    },
  );

  it.each([
    ['failed', null, 'twilio:failed'],
    ['undelivered', '30003', 'twilio:30003'],
    ['canceled', null, 'twilio:canceled'],
    ['delivered', null, undefined],
    ['queued', null, undefined],
    ['failed', '1234567', 'twilio:failed'],
  ] as const)('details a %s status with error %s as %s', (status, code, expected) => {
    // Act + Assess
    expect(statusDetail(status, code)).toBe(expected);
  });
});
