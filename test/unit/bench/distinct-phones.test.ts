import { describe, expect, it } from 'vitest';
import { distinctPhones } from '../../../bench/support.js';
import { checkDestination, DEFAULT_ALLOWED_NUMBER_TYPES } from '../../../shared/http/destination.js';
import { canonicalPhone } from '../../../shared/http/phone.js';

describe('the numbers bench sections spread their admissions over', () => {
  it('are distinct canonical numbers the API admits with its default number types, one per call', () => {
    // Prepare
    const next = distinctPhones();
    const policy = {
      allowedNumberTypes: DEFAULT_ALLOWED_NUMBER_TYPES,
      allowedCountries: [],
      allowedPrefixes: [],
    };

    // Act
    const phones = Array.from({ length: 2_000 }, () => next());

    // Assess: each its own canonical spelling (so its own fingerprint and budget), none refused.
    expect(new Set(phones).size).toBe(phones.length);
    for (const phone of phones) {
      expect(canonicalPhone(phone)).toEqual({ kind: 'canonical', e164: phone });
      expect(checkDestination(phone, policy).kind).toBe('allowed');
    }
  });

  it('start over for each source, so two sections never depend on each other', () => {
    // Prepare
    const first = distinctPhones();
    const second = distinctPhones();

    // Act
    const a = [first(), first()];
    const b = [second(), second()];

    // Assess
    expect(b).toEqual(a);
    expect(a[0]).not.toBe(a[1]);
  });
});
