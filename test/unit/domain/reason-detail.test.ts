import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyTransition } from '../../../shared/domain/notification.js';
import {
  detailWithCause,
  parseReasonDetail,
  REASON_DETAIL_MAX_LENGTH,
  REFUSED_DETAIL,
  reasonDetailFrom,
} from '../../../shared/domain/reason-detail.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import { aDispatchingRecord, CODE, PHONE, RESET_URL, SECOND, T0 } from './fixtures.js';

/** A source and parts as the grammar admits them, with digit runs no longer than a provider code. */
const sourceArb = fc.stringMatching(/^[a-z_]{1,12}$/);
const partArb = fc.stringMatching(/^[A-Za-z_-]{1,8}\d{0,5}$/);
const validDetailArb = fc
  .tuple(sourceArb, fc.array(partArb, { maxLength: 5 }))
  .map(([source, parts]) => [source, ...parts].join(':'))
  .filter((s) => s.length <= REASON_DETAIL_MAX_LENGTH);

/** E.164 and national numbers, with or without the plus and separators. */
const phoneArb = fc
  .tuple(fc.constantFrom('+', '', '00'), fc.stringMatching(/^[1-9]\d{6,13}$/))
  .map(([prefix, digits]) => `${prefix}${digits}`);
/** One-time codes as the API admits them: 4 to 10 digits. */
const codeArb = fc.stringMatching(/^\d{4,10}$/);
const urlArb = fc.webUrl({ withQueryParameters: true, withFragments: true });
const hostArb = fc.domain();
const emailArb = fc.emailAddress();

describe('parseReasonDetail (grammar)', () => {
  it.each([
    'twilio:21211',
    'twilio:http_429',
    'twilio:config:21408',
    'eum:validation:PRICE_OVER_THRESHOLD',
    'sns:InvalidParameter',
    'absence_pending:canary_older_than_attempt',
    'absence_disabled:redaction_on',
    'never_claimed',
    'backoff_past_deadline:twilio:http_429',
    'twilio:transport_UND_ERR_SOCKET',
  ])('admits %s', (detail) => {
    // Act / Assess
    expect(parseReasonDetail(detail)).toBe(detail);
  });

  it.each([
    ['an empty string', ''],
    ['an upper-case source', 'Twilio:21211'],
    ['a space', 'twilio: 21211'],
    ['an empty part', 'twilio::21211'],
    ['a trailing colon', 'twilio:'],
    ['an E.164 number', PHONE],
    ['a number after a source', `twilio:${PHONE.slice(1)}`],
    ['a code after a source', `twilio:content:${CODE}`],
    ['a bare 5-digit code', '48392'],
    ['a URL', RESET_URL],
    ['a host name', 'twilio:example.test'],
    ['an e-mail address', 'user@example.test'],
    ['too long', `twilio:${'a'.repeat(REASON_DETAIL_MAX_LENGTH)}`],
    ['not a string', 21211],
  ])('refuses %s', (_what, value) => {
    // Act / Assess
    expect(parseReasonDetail(value)).toBeUndefined();
  });

  it('admits every string built from the grammar (property)', () => {
    fc.assert(
      fc.property(validDetailArb, (detail) => {
        expect(parseReasonDetail(detail)).toBe(detail);
      }),
      { seed: 20, numRuns: 2_000 },
    );
  });

  it('refuses phone numbers, codes, URLs, hosts and e-mail addresses, bare or behind a valid source (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(phoneArb, codeArb, urlArb, hostArb, emailArb),
        fc.constantFrom('', 'twilio:', 'absence_pending:', 'eum:validation:'),
        (pii, prefix) => {
          // Codes of 4-5 digits are a provider code's shape: only refused as a source of their own.
          fc.pre(!(prefix !== '' && /^\d{4,5}$/.test(pii)));
          expect(parseReasonDetail(`${prefix}${pii}`)).toBeUndefined();
        },
      ),
      { seed: 21, numRuns: 3_000 },
    );
  });

  it('admits only the grammar: whatever it admits matches the pattern, the length and the digit bound (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 140 }), (value) => {
        const parsed = parseReasonDetail(value);
        if (parsed === undefined) return;
        expect(parsed).toMatch(/^[a-z0-9_]+(:[A-Za-z0-9_.-]+)*$/);
        expect(parsed.length).toBeLessThanOrEqual(REASON_DETAIL_MAX_LENGTH);
        expect(parsed).not.toMatch(/\d{6}/);
      }),
      { seed: 22, numRuns: 5_000 },
    );
  });
});

describe('reasonDetailFrom (adapter details into the grammar, one place)', () => {
  it.each([
    ['twilio', 'twilio_21211', 'twilio:21211'],
    ['simulator', 'twilio_21211', 'twilio:21211'],
    ['twilio', 'auth_rejected_twilio_20003', 'twilio:auth_rejected:20003'],
    ['twilio', 'unreadable_twilio_20001', 'twilio:unreadable:20001'],
    ['twilio', 'http_429', 'twilio:http_429'],
    ['simulator', 'rate_limited', 'simulator:rate_limited'],
    ['twilio', 'twilio:config:21408', 'twilio:config:21408'],
    ['twilio', 'content:masked_number', 'twilio:content:masked_number'],
    ['twilio', 'absence_pending:canary_older_than_attempt', 'absence_pending:canary_older_than_attempt'],
    ['twilio', 'absence_disabled:redaction_on', 'absence_disabled:redaction_on'],
    ['twilio', 'absence_unprovable', 'absence_unprovable'],
    ['twilio', 'payload_unavailable', 'payload_unavailable'],
    ['eum', 'eum:validation:PRICE_OVER_THRESHOLD', 'eum:validation:PRICE_OVER_THRESHOLD'],
    ['sns', 'sns:logs_timeout', 'sns:logs_timeout'],
    ['twilio', 'transport_ECONNRESET', 'twilio:transport_ECONNRESET'],
  ])('%s %s -> %s', (provider, detail, expected) => {
    // Act / Assess
    expect(reasonDetailFrom(provider, detail)).toBe(expected);
  });

  it('records a detail the grammar refuses as detail_refused, never as its text', () => {
    // Act / Assess
    expect(reasonDetailFrom('twilio', `echo ${PHONE}`)).toBe(REFUSED_DETAIL);
    expect(reasonDetailFrom('twilio', RESET_URL)).toBe(REFUSED_DETAIL);
  });

  it('chains a cause only while the result stays in the grammar', () => {
    // Act / Assess
    expect(detailWithCause('max_attempts', 'twilio:http_429')).toBe('max_attempts:twilio:http_429');
    expect(detailWithCause('max_attempts', undefined)).toBe('max_attempts');
    expect(detailWithCause('max_attempts', `twilio:${'a'.repeat(120)}`)).toBe('max_attempts');
  });
});

describe('applyTransition stores only admitted details', () => {
  const failed = (reasonDetail: string) =>
    applyTransition(aDispatchingRecord(), {
      to: S.failed,
      reason: R.providerRejectedPermanent,
      reasonDetail,
      actor: 'sender',
      at: T0 + SECOND,
    });

  it('carries an admitted detail on the evidence and the record', () => {
    // Act
    const applied = failed('twilio:21211');

    // Assess
    expect(applied.evidence.reasonDetail).toBe('twilio:21211');
    expect(applied.next.reasonDetail).toBe('twilio:21211');
  });

  it('never stores a phone number, a code or a URL given as a detail (property)', () => {
    fc.assert(
      fc.property(fc.oneof(phoneArb, codeArb, urlArb, emailArb), (pii) => {
        const applied = failed(pii);
        expect(applied.evidence.reasonDetail).toBe(REFUSED_DETAIL);
        expect(JSON.stringify(applied)).not.toContain(pii);
      }),
      { seed: 23, numRuns: 500 },
    );
  });

  it('clears the record detail on a transition without one (the detail is always the last transition’s)', () => {
    // Prepare
    const record = aDispatchingRecord({ reasonDetail: reasonDetailFrom('twilio', 'http_429') });

    // Act
    const applied = applyTransition(record, {
      to: S.sent,
      reason: R.providerAccepted,
      actor: 'sender',
      at: T0 + SECOND,
    });

    // Assess
    expect('reasonDetail' in applied.next).toBe(false);
    expect('reasonDetail' in applied.evidence).toBe(false);
  });
});
