import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/config.js';
import { decodeContext, orderedProviders, SETTINGS } from '../../../shared/settings.js';

/** An environment with the provider settings given, by variable (from the table, never spelled). */
const envWith = (values: { readonly provider?: string; readonly providers?: string }) => ({
  [SETTINGS.tableName.env]: 'notifications',
  ...(values.provider === undefined ? {} : { [SETTINGS.provider.env]: values.provider }),
  ...(values.providers === undefined ? {} : { [SETTINGS.providers.env]: values.providers }),
});

describe('the ordered provider list (PROVIDERS, PROVIDER the one-element case)', () => {
  it.each([
    { given: {}, providers: ['simulator'] },
    { given: { provider: 'twilio' }, providers: ['twilio'] },
    { given: { providers: 'twilio,eum' }, providers: ['twilio', 'eum'] },
    { given: { providers: ' eum , simulator ' }, providers: ['eum', 'simulator'] },
    { given: { provider: 'eum', providers: 'eum,twilio' }, providers: ['eum', 'twilio'] },
    { given: { provider: 'sns', providers: '' }, providers: ['sns'] },
  ])('$given reads as $providers, the first the primary', ({ given, providers }) => {
    // Act
    const config = loadConfig(envWith(given));
    // Assess
    expect(config.providers).toEqual(providers);
    expect(config.provider).toBe(providers[0]);
  });

  it.each([
    { given: { providers: 'twilio,twilio' }, message: /PROVIDERS must not name a provider twice/ },
    { given: { providers: 'twilio,bogus' }, message: /PROVIDERS must be one of simulator, twilio, sns, eum/ },
    { given: { providers: ',' }, message: /PROVIDERS must name at least one provider/ },
    {
      given: { provider: 'twilio', providers: 'eum,twilio' },
      message: /PROVIDER=twilio contradicts PROVIDERS=eum,twilio/,
    },
  ])('$given stops the start naming the variable', ({ given, message }) => {
    // Act / Assess
    expect(() => loadConfig(envWith(given))).toThrow(message);
  });

  it('the CDK context key `providers` parses with the same codec, and names the key', () => {
    // Act / Assess
    expect(decodeContext('providers', 'twilio,eum')).toEqual(['twilio', 'eum']);
    expect(() => decodeContext('providers', 'eum,eum')).toThrow(
      /context reset-notifier:providers must not name a provider twice/,
    );
  });

  it('the rule names the context keys when the deploy side applies it', () => {
    // Act / Assess
    expect(orderedProviders(undefined, undefined, 'sns')).toEqual(['sns']);
    expect(() =>
      orderedProviders('sns', ['eum', 'sns'], 'sns', {
        single: 'reset-notifier:provider',
        list: 'reset-notifier:providers',
      }),
    ).toThrow(/reset-notifier:provider=sns contradicts reset-notifier:providers=eum,sns/);
  });
});

describe('the simulator listed second', () => {
  it('still gets its own callback sink by default (its module refuses to start without one)', () => {
    // Act
    const config = loadConfig(envWith({ providers: 'eum,simulator' }));
    // Assess
    expect(config.providerStatusCallbackBase).toMatch(/\/_callbacks\/status$/);
  });

  it('not when real Twilio is listed too: its callback base must be set', () => {
    // Act
    const config = loadConfig(envWith({ providers: 'twilio,simulator' }));
    // Assess
    expect(config.providerStatusCallbackBase).toBeUndefined();
  });
});
