import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import {
  canonicalPayload,
  createFingerprinter,
  fingerprintVersion,
  parseFingerprintKeys,
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
    expect(fingerprint).toMatch(/^fp1:[0-9a-f]{32}$/);
    expect(fingerprintVersion(fingerprint)).toBe(1);
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

describe('fingerprint key ring (docs/security.md#fingerprint-key-rotation)', () => {
  const before = createFingerprinter(aKey(1));
  const ring = (current: number, ...versions: number[]) =>
    createFingerprinter({ current, keys: versions.map((version) => ({ version, secret: aKey(version) })) });

  it('names the current key in every new fingerprint: fp2/pf2 under version 2', () => {
    // Prepare
    const after = ring(2, 1, 2);

    // Act
    const destination = after.destination(PHONE);
    const payload = after.payload(aRequest());

    // Assess
    expect(after.version).toBe(2);
    expect(destination).toMatch(/^fp2:[0-9a-f]{32}$/);
    expect(payload).toMatch(/^pf2:[0-9a-f]{64}$/);
    expect(fingerprintVersion(payload)).toBe(2);
    expect(destination.slice(4)).not.toBe(before.destination(PHONE).slice(4));
  });

  it("gives the number's fingerprint under every key held, the current one first", () => {
    // Act
    const all = ring(2, 1, 2).destinations(PHONE);

    // Assess: under version 1 it is what the single key gave before the rotation.
    expect(all).toEqual([ring(2, 2).destination(PHONE), before.destination(PHONE)]);
    expect(before.destinations(PHONE)).toEqual([before.destination(PHONE)]);
  });

  it('matches a stored payload fingerprint under the key its version names', () => {
    // Prepare
    const request = aRequest();
    const stored = before.payload(request);
    const after = ring(2, 1, 2);

    // Act / Assess
    expect(after.payloadMatches(stored, request)).toBe(true);
    expect(after.payloadMatches(stored, aRequest({ locale: 'fr' }))).toBe(false);
    expect(after.payloadMatches(after.payload(request), request)).toBe(true);
    expect(ring(2, 2).payloadMatches(stored, request)).toBeUndefined();
    expect(before.payloadMatches('pf9:00', request)).toBeUndefined();
    expect(before.payloadMatches('no-version', request)).toBeUndefined();
  });

  it('refuses a ring without its current version, or with one version twice', () => {
    expect(() => ring(3, 1, 2)).toThrow(/version 3 is not among the keys \(1, 2\)/);
    expect(() => ring(1, 1, 1)).toThrow(/one version twice/);
    expect(() => ring(0, 0)).toThrow(InvalidConfigurationError);
  });
});

describe('parseFingerprintKeys', () => {
  const hex = (fill: number) => Buffer.from(aKey(fill)).toString('hex');
  const decode = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

  it('reads one bare key as version 1 (every key before rotation existed)', () => {
    expect(parseFingerprintKeys(hex(1), decode, 'KEY')).toEqual([{ version: 1, secret: aKey(1) }]);
  });

  it('reads a ring of versioned keys', () => {
    expect(parseFingerprintKeys(` 1:${hex(1)} , 2:${hex(2)}`, decode, 'KEY')).toEqual([
      { version: 1, secret: aKey(1) },
      { version: 2, secret: aKey(2) },
    ]);
  });

  it('names the source and never the value when an entry of a ring has no version', () => {
    // Act
    const act = () => parseFingerprintKeys(`1:${hex(1)},${hex(2)}`, decode, 'KEY');

    // Assess
    expect(act).toThrow(/KEY: entry 2 is not <version>:<key>/);
    expect(act).not.toThrow(hex(2));
    expect(() => parseFingerprintKeys(' ', decode, 'KEY')).toThrow('KEY is empty');
  });
});
