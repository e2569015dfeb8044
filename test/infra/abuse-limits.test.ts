import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { defineApp } from '../../infra/main.js';
import { ResetNotifier } from '../../infra/reset-notifier.js';
import type { ResetNotifierProps } from '../../infra/settings.js';
import { CONTEXT_KEYS, notifierPropsFromContext } from '../../infra/stack.js';
import { loadConfig } from '../../shared/config.js';
import {
  EXAMPLE_ALLOW_LISTS,
  functionByDescription,
  SYNTH_TIMEOUT_MS,
  stubCode,
  synthTemplate,
  testApp,
} from './support.js';

const apiEnvironment = (template: ReturnType<typeof synthTemplate>['template']) =>
  (
    functionByDescription(template, 'HTTP API').properties.Environment as {
      Variables: Record<string, unknown>;
    }
  ).Variables;

describe('abuse limits through the stack', () => {
  it(
    'gives the api function the default limits (and the required allow-lists), read back by shared/config',
    () => {
      // Prepare / Act
      const { template } = synthTemplate({});
      const env = apiEnvironment(template);
      // Assess
      expect(env).toMatchObject({
        DESTINATION_LIMITS: '3/15m,10/24h',
        COUNTRY_LIMITS: 'off',
        ALLOWED_NUMBER_TYPES: 'MOBILE,FIXED_LINE_OR_MOBILE',
        MAX_SMS_SEGMENTS: '3',
        // The allow-lists have no default in AWS: these are the test's required examples.
        RESET_URL_HOSTS: 'id.example.com',
        ALLOWED_DESTINATION_COUNTRIES: 'US',
      });
      const config = loadConfig(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])));
      expect(config.budgets.destination.map((w) => w.label)).toEqual(['15m', '24h']);
      expect(config.budgets.country).toEqual([]);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'passes tuned limits as the environment variables the README names',
    () => {
      // Prepare / Act
      const { template } = synthTemplate({
        abuseLimits: {
          destinationLimits: '5/1h',
          countryLimits: 'US:1000/1h,50/1h',
          allowedNumberTypes: ['MOBILE'],
          allowedDestinationCountries: ['US', 'CA'],
          resetUrlHosts: ['id.example.com'],
          maxSmsSegments: 2,
        },
      });
      const env = apiEnvironment(template);
      // Assess
      expect(env).toMatchObject({
        DESTINATION_LIMITS: '5/1h',
        COUNTRY_LIMITS: 'US:1000/1h,50/1h',
        ALLOWED_NUMBER_TYPES: 'MOBILE',
        ALLOWED_DESTINATION_COUNTRIES: 'US,CA',
        RESET_URL_HOSTS: 'id.example.com',
        MAX_SMS_SEGMENTS: '2',
      });
      // Refusals are counted by the api function as the EMF metric AdmissionRefusals, in the stack's namespace.
      expect(env).toMatchObject({
        POWERTOOLS_METRICS_NAMESPACE: 'ResetNotifier/TestStack',
        POWERTOOLS_SERVICE_NAME: 'reset-notifier',
      });
      template.resourceCountIs('AWS::Logs::MetricFilter', 0);
    },
    SYNTH_TIMEOUT_MS,
  );

  it.each<[string, NonNullable<ResetNotifierProps['abuseLimits']>, RegExp]>([
    ['a malformed destination budget', { destinationLimits: '3 per hour' }, /abuseLimits.destinationLimits/],
    ['a malformed country budget', { countryLimits: 'USA:3/1h' }, /abuseLimits.countryLimits/],
    ['an unknown number type', { allowedNumberTypes: ['SATPHONE'] }, /abuseLimits.allowedNumberTypes/],
    [
      'a country that is not a region code',
      { allowedDestinationCountries: ['USA'] },
      /allowedDestinationCountries/,
    ],
    ['zero segments', { maxSmsSegments: 0 }, /maxSmsSegments/],
  ])('rejects %s, naming the prop', (_name, abuseLimits, message) => {
    const build = () =>
      new ResetNotifier(new Stack(testApp(), 'S'), 'N', {
        code: stubCode(),
        abuseLimits: { ...EXAMPLE_ALLOW_LISTS, ...abuseLimits },
      });
    expect(build).toThrow(message);
  });
});

describe('abuse limits from CDK context (cdk deploy -c reset-notifier:destinationLimits=...)', () => {
  it('reads every abuse-limit key, and leaves the defaults when none is set', () => {
    // Prepare
    const propsFrom = (context: Record<string, string>) =>
      notifierPropsFromContext(new Stack(testApp({ context }), 'S'));
    // Act
    const props = propsFrom({
      [CONTEXT_KEYS.destinationLimits]: '5/1h,10/24h',
      [CONTEXT_KEYS.countryLimits]: 'US:2000/1h',
      [CONTEXT_KEYS.allowedNumberTypes]: 'MOBILE',
      [CONTEXT_KEYS.allowedDestinationCountries]: 'US, CA',
      [CONTEXT_KEYS.resetUrlHosts]: 'id.example.com',
      [CONTEXT_KEYS.maxSmsSegments]: '2',
    });
    // Assess
    expect(props.abuseLimits).toEqual({
      destinationLimits: '5/1h,10/24h',
      countryLimits: 'US:2000/1h',
      allowedNumberTypes: ['MOBILE'],
      allowedDestinationCountries: ['US', 'CA'],
      resetUrlHosts: ['id.example.com'],
      maxSmsSegments: 2,
    });
    expect(propsFrom({}).abuseLimits).toBeUndefined();
  });
});

describe('synth refuses a deployment without allow-lists (cdk deploy with no reset-notifier: keys)', () => {
  const synth = (context: Record<string, string>) => () =>
    defineApp(testApp({ context }), { code: stubCode() });

  it('fails without both, naming both context keys and an example command', () => {
    expect(synth({})).toThrow(
      new RegExp(
        `CDK context ${CONTEXT_KEYS.resetUrlHosts} and ${CONTEXT_KEYS.allowedDestinationCountries} are required, e\\.g\\. cdk deploy -c ${CONTEXT_KEYS.resetUrlHosts}=`,
      ),
    );
  });

  it.each([
    ['the host allow-list', { [CONTEXT_KEYS.allowedDestinationCountries]: 'US' }, CONTEXT_KEYS.resetUrlHosts],
    [
      'the country allow-list',
      { [CONTEXT_KEYS.resetUrlHosts]: 'id.example.com' },
      CONTEXT_KEYS.allowedDestinationCountries,
    ],
  ])('fails without %s alone, naming its key', (_name, context, key) => {
    expect(synth(context)).toThrow(new RegExp(`CDK context ${key} is required`));
  });

  it('a blank value counts as unset', () => {
    expect(
      synth({ [CONTEXT_KEYS.resetUrlHosts]: ' , ', [CONTEXT_KEYS.allowedDestinationCountries]: 'US' }),
    ).toThrow(new RegExp(`CDK context ${CONTEXT_KEYS.resetUrlHosts} is required`));
  });

  it(
    'synthesizes with both, writing them into the api function',
    () => {
      // Prepare / Act
      const stack = synth({
        [CONTEXT_KEYS.resetUrlHosts]: 'id.example.com',
        [CONTEXT_KEYS.allowedDestinationCountries]: 'US,CA',
      })();
      const env = apiEnvironment(Template.fromStack(stack));
      // Assess
      expect(env).toMatchObject({
        RESET_URL_HOSTS: 'id.example.com',
        ALLOWED_DESTINATION_COUNTRIES: 'US,CA',
      });
    },
    SYNTH_TIMEOUT_MS,
  );

  it.each([
    ['a port', 'id.example.com:8443', /bare host/],
    ['a mixed-script host', 'p\u0430ypal.com', /mixes scripts/],
  ])('refuses a host allow-list entry with %s', (_name, host, message) => {
    expect(
      synth({ [CONTEXT_KEYS.resetUrlHosts]: host, [CONTEXT_KEYS.allowedDestinationCountries]: 'US' }),
    ).toThrow(message);
  });
});
