import { describe, expect, it } from 'vitest';
import { InvalidConfigurationError } from '../../../shared/domain/errors.js';
import {
  ANY_DESTINATION,
  checkDestination,
  classifyNumber,
  DEFAULT_ALLOWED_NUMBER_TYPES,
  type DestinationPolicy,
  parseCountries,
  parseNumberTypes,
} from '../../../shared/http/destination.js';
import { readSetting, SETTINGS, settingsEnv } from '../../../shared/settings.js';

const DEFAULTS: DestinationPolicy = { ...ANY_DESTINATION, allowedNumberTypes: DEFAULT_ALLOWED_NUMBER_TYPES };

describe('number types (ALLOWED_NUMBER_TYPES, default MOBILE,FIXED_LINE_OR_MOBILE)', () => {
  it.each([
    ['+14155550123', 'FIXED_LINE_OR_MOBILE', 'US'],
    ['+447400123456', 'MOBILE', 'GB'],
    ['+33612345678', 'MOBILE', 'FR'],
    ['+18765551234', 'MOBILE', 'JM'],
  ])('admits %s (%s, %s)', (phone, type, country) => {
    expect(checkDestination(phone, DEFAULTS)).toEqual({ kind: 'allowed', type, country });
  });

  it.each([
    ['+19005550123', 'PREMIUM_RATE', 'number_type'],
    ['+18005550199', 'TOLL_FREE', 'number_type'],
    ['+449090901234', 'PREMIUM_RATE', 'number_type'],
    ['+442071838750', 'FIXED_LINE', 'number_type'],
    ['+870773123456', 'MOBILE', 'non_geographic'],
    ['+881612345678', 'MOBILE', 'non_geographic'],
    ['+80012345678', 'TOLL_FREE', 'non_geographic'],
    ['+15005550006', 'PERSONAL_NUMBER', 'number_type'],
  ])('refuses %s (%s) for %s', (phone, type, reason) => {
    expect(checkDestination(phone, DEFAULTS)).toMatchObject({ kind: 'not_allowed', type, reason });
  });

  it('reports UNKNOWN for a number the metadata cannot classify', () => {
    expect(classifyNumber('+10000000000').type).toBe('UNKNOWN');
  });

  it('allows every type with an empty list ("any")', () => {
    expect(parseNumberTypes('any')).toEqual([]);
    expect(checkDestination('+19005550123', ANY_DESTINATION).kind).toBe('allowed');
  });

  it('parses a list case-insensitively and rejects unknown types by name', () => {
    expect(parseNumberTypes('mobile, fixed_line')).toEqual(['MOBILE', 'FIXED_LINE']);
    expect(() => parseNumberTypes('MOBILE,SATPHONE')).toThrow(InvalidConfigurationError);
  });
});

describe('countries (ALLOWED_DESTINATION_COUNTRIES) and prefixes', () => {
  const usOnly: DestinationPolicy = { ...DEFAULTS, allowedCountries: ['US'] };

  it('checks the region, not the dialling code: +1 is not only the US', () => {
    expect(checkDestination('+14155550123', usOnly).kind).toBe('allowed');
    expect(checkDestination('+18765551234', usOnly)).toMatchObject({ reason: 'country', country: 'JM' });
    expect(checkDestination('+12423571234', usOnly)).toMatchObject({ reason: 'country', country: 'BS' });
  });

  it('keeps the legacy prefix list working alongside', () => {
    const policy: DestinationPolicy = { ...DEFAULTS, allowedPrefixes: ['+44'] };
    expect(checkDestination('+14155550123', policy)).toMatchObject({ reason: 'prefix' });
    expect(checkDestination('+447400123456', policy).kind).toBe('allowed');
  });

  it('parses region codes and rejects anything else', () => {
    expect(parseCountries('us, ca')).toEqual(['US', 'CA']);
    expect(() => parseCountries('USA')).toThrow(InvalidConfigurationError);
    expect(() =>
      readSetting(settingsEnv({ allowedDestinationCountries: 'USA' }), SETTINGS.allowedDestinationCountries),
    ).toThrow(/^ALLOWED_DESTINATION_COUNTRIES: "USA" is not a region code/);
  });
});
