import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import {
  canonicalPayload,
  createFingerprinter,
  FINGERPRINT_VERSION,
} from '../../../shared/domain/fingerprint.js';
import type { NotificationRequest } from '../../../shared/domain/notification.js';
import { aKey, aRequest, CODE, PHONE, RESET_URL, SECOND } from './fixtures.js';

const e164 = fc
  .tuple(
    fc.integer({ min: 1, max: 9 }),
    fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 7, maxLength: 13 }),
  )
  .map(([first, rest]) => `+${first}${rest}`);

describe('destination fingerprint', () => {
  it('is fp1:<32 hex chars>', () => {
    // Prepare
    const fingerprinter = createFingerprinter(aKey());

    // Act
    const fingerprint = fingerprinter.destination(PHONE);

    // Assess
    expect(FINGERPRINT_VERSION).toBe('fp1');
    expect(fingerprint).toMatch(/^fp1:[0-9a-f]{32}$/);
  });

  it('is deterministic: same key and number give the same value, also across instances', () => {
    // Prepare
    const a = createFingerprinter(aKey(1));
    const b = createFingerprinter(aKey(1));

    // Act / Assess
    fc.assert(
      fc.property(e164, (number) => {
        expect(a.destination(number)).toBe(a.destination(number));
        expect(a.destination(number)).toBe(b.destination(number));
      }),
      { numRuns: 1000 },
    );
  });

  it('is keyed: another key gives another value for the same number', () => {
    // Prepare
    const a = createFingerprinter(aKey(1));
    const b = createFingerprinter(aKey(2));

    // Act / Assess
    fc.assert(
      fc.property(e164, (number) => {
        expect(a.destination(number)).not.toBe(b.destination(number));
      }),
      { numRuns: 1000 },
    );
  });

  it('differs for different numbers and never contains the number or its digits run', () => {
    // Prepare
    const fingerprinter = createFingerprinter(aKey());

    // Act / Assess
    fc.assert(
      fc.property(e164, e164, (x, y) => {
        fc.pre(x !== y);
        const fx = fingerprinter.destination(x);
        expect(fx).not.toBe(fingerprinter.destination(y));
        expect(fx).not.toContain(x);
        expect(fx).not.toContain(x.slice(1));
      }),
      { numRuns: 1000 },
    );
  });

  it('is not a plain hash of the number (it depends on the key bytes, not only their length)', () => {
    // Prepare
    const key = aKey(3);
    const fingerprinter = createFingerprinter(key);
    const before = fingerprinter.destination(PHONE);

    // Act: mutating the caller's buffer afterwards must not change the closure's key.
    key.fill(9);
    const after = fingerprinter.destination(PHONE);

    // Assess
    expect(after).toBe(before);
    expect(createFingerprinter(key).destination(PHONE)).not.toBe(before);
  });

  it.each([0, 16, 31])('rejects a key of %i bytes', (length) => {
    // Act
    const act = () => createFingerprinter(aKey(1, length));

    // Assess
    expect(act).toThrow(InvalidConfigurationError);
    expect(act).toThrow(expect.objectContaining({ code: 'invalid_configuration' }));
  });

  it.each([32, 64])('accepts a key of %i bytes', (length) => {
    expect(createFingerprinter(aKey(1, length)).destination(PHONE)).toMatch(/^fp1:/);
  });
});

describe('payload fingerprint', () => {
  const fingerprinter = createFingerprinter(aKey());

  it('is versioned, deterministic and reveals none of the payload', () => {
    // Prepare
    const request = aRequest({ sensitive: { phone: PHONE, params: { code: CODE, reset_url: RESET_URL } } });

    // Act
    const first = fingerprinter.payload(request);
    const second = createFingerprinter(aKey()).payload(structuredClone(request));

    // Assess
    expect(first).toMatch(/^pf1:[0-9a-f]{64}$/);
    expect(second).toBe(first);
    for (const secret of [PHONE, CODE, RESET_URL]) expect(first).not.toContain(secret);
  });

  it('is keyed', () => {
    expect(createFingerprinter(aKey(1)).payload(aRequest())).not.toBe(
      createFingerprinter(aKey(2)).payload(aRequest()),
    );
  });

  it('does not depend on the property order of params', () => {
    // Prepare
    const entries = fc.uniqueArray(fc.tuple(fc.string({ minLength: 1 }), fc.string()), {
      selector: ([key]) => key,
      maxLength: 6,
    });

    // Act / Assess
    fc.assert(
      fc.property(entries, (pairs) => {
        const forward = Object.fromEntries(pairs);
        const backward = Object.fromEntries([...pairs].reverse());
        const a = fingerprinter.payload(aRequest({ sensitive: { phone: PHONE, params: forward } }));
        const b = fingerprinter.payload(aRequest({ sensitive: { phone: PHONE, params: backward } }));
        expect(a).toBe(b);
      }),
      { numRuns: 500 },
    );
  });

  it('does not depend on the property order of the request object', () => {
    // Prepare
    const request = aRequest();
    const reordered = Object.fromEntries(Object.entries(request).reverse()) as unknown as NotificationRequest;

    // Act / Assess
    expect(canonicalPayload(reordered)).toBe(canonicalPayload(request));
    expect(fingerprinter.payload(reordered)).toBe(fingerprinter.payload(request));
  });

  const base = aRequest({ sensitive: { phone: PHONE, params: { code: CODE } } });
  const variants: [string, NotificationRequest][] = [
    ['phone', { ...base, sensitive: { ...base.sensitive, phone: '+14155550124' } }],
    ['code', { ...base, sensitive: { ...base.sensitive, params: { code: '483921' } } }],
    ['url instead of code', { ...base, sensitive: { ...base.sensitive, params: { reset_url: RESET_URL } } }],
    ['url', { ...base, sensitive: { ...base.sensitive, params: { reset_url: `${RESET_URL}x` } } }],
    ['extra param', { ...base, sensitive: { ...base.sensitive, params: { code: CODE, extra: '' } } }],
    ['expires_at', { ...base, expiresAt: base.expiresAt + SECOND }],
    ['template', { ...base, template: 'password_reset_v2' }],
    ['locale', { ...base, locale: 'de' }],
    ['event_id', { ...base, eventId: 'evt-2' }],
  ];

  it.each(variants)('changes when %s changes', (_field, variant) => {
    // Act
    const original = fingerprinter.payload(base);
    const changed = fingerprinter.payload(variant);

    // Assess
    expect(changed).not.toBe(original);
  });

  it('separates field boundaries (no ambiguity from concatenation)', () => {
    // Prepare
    const a = aRequest({ sensitive: { phone: PHONE, params: { ab: 'c' } } });
    const b = aRequest({ sensitive: { phone: PHONE, params: { a: 'bc' } } });

    // Act / Assess
    expect(fingerprinter.payload(a)).not.toBe(fingerprinter.payload(b));
  });
});
