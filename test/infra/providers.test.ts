import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { beforeAll, describe, expect, it } from 'vitest';
import { RECEIPTS_THROTTLE_FACTOR } from '../../infra/constructs/api.js';
import {
  RECONCILE_WORKER_MAX_CONCURRENCY,
  STATUS_POLL_WORKER_MAX_CONCURRENCY,
} from '../../infra/constructs/pipeline.js';
import { defineApp, defineStack } from '../../infra/main.js';
import type { ProviderSettings, ResetNotifierProps } from '../../infra/settings.js';
import { synthesizeLocalTemplate } from '../../scripts/local-template.js';
import { snsInfra } from '../../shared/providers/sns/infra.js';
import { CONTEXT_PREFIX, type ContextName, SETTINGS } from '../../shared/settings.js';
import {
  actionsOf,
  EXAMPLE_ALLOW_LIST_CONTEXT,
  functionByDescription,
  onlyResource,
  referencedId,
  type Statement,
  SYNTH_TIMEOUT_MS,
  statementsOfFunction,
  stubCode,
  synthTemplate,
  testApp,
} from './support.js';

/**
 * An ordered provider list (issue 23 item 1, deploy side): `-c reset-notifier:providers=twilio,eum`
 * applies every listed provider's deploy side (environment, grants, resources, receipts path) and
 * writes `PROVIDERS` in order; one provider synthesizes exactly as `provider` always did; a list
 * that cannot work stops synthesis with a message naming what is wrong.
 */

const ACCOUNT = '111111111111';
const SECRET_ARN = `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:twilio-token-AbCdEf`;
const IDENTITY_ARN = `arn:aws:sms-voice:eu-west-1:${ACCOUNT}:pool/pool-0123456789abcdef`;

/** The context each provider needs (docs/deploy.md, "Context keys"). */
const OWN_KEYS = {
  sns: {},
  twilio: { twilioAccountSid: 'AC1', twilioFrom: '+15005550006', twilioAuthTokenSecretArn: SECRET_ARN },
  eum: { eumOriginationIdentityArn: IDENTITY_ARN },
  simulator: { simulatorBaseUrl: 'https://sim.example.test', twilioAuthTokenSecretArn: SECRET_ARN },
} as const satisfies Record<string, Partial<Record<ContextName, string>>>;
type Kind = keyof typeof OWN_KEYS;

/** One stub package for every synthesis: asset hashes stay equal, so templates compare. */
const CODE = stubCode();

function contextOf(context: Partial<Record<ContextName, string>>): Record<string, string> {
  return {
    ...EXAMPLE_ALLOW_LIST_CONTEXT,
    ...Object.fromEntries(
      Object.entries(context).map(([name, value]) => [`${CONTEXT_PREFIX}${name}`, value]),
    ),
  };
}

/** The context of `providers=<kinds>` with every listed provider's own keys. */
function listContext(kinds: readonly Kind[]): Partial<Record<ContextName, string>> {
  return Object.assign({ providers: kinds.join(',') }, ...kinds.map((kind) => OWN_KEYS[kind]));
}

/** The stack as `cdk deploy -c ...` defines it (no cdk-nag), as a template. */
function synth(context: Partial<Record<ContextName, string>>): Template {
  return Template.fromStack(defineStack(testApp({ context: contextOf(context) }), { code: CODE }));
}

type Props = Record<string, unknown>;
type Resources = Record<string, { Type: string; Properties: Props }>;
const resourcesOf = (template: Template) => template.toJSON().Resources as Resources;

const FUNCTIONS = {
  api: 'HTTP API (admission',
  forwarder: 'table stream -> dispatch queue',
  sender: 'calls the SMS provider once',
  reconciler: 'reconciles unknown outcomes and expiries',
  worker: 'reconcile worker, one due key per message',
  twilioReceipts: 'Twilio status callbacks',
  eumReceipts: 'End User Messaging events -> receipts',
} as const;

const envOf = (template: Template, fn: keyof typeof FUNCTIONS) =>
  (functionByDescription(template, FUNCTIONS[fn]).properties.Environment as { Variables: Props }).Variables;
const statementsOf = (template: Template, fn: keyof typeof FUNCTIONS) =>
  statementsOfFunction(template, functionByDescription(template, FUNCTIONS[fn]).logicalId);
const allowing = (statements: readonly Statement[], action: string) =>
  statements.filter((s) => s.Effect === 'Allow' && actionsOf(s).includes(action));
const resources = (statement: Statement): unknown[] =>
  Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
const readsSecret = (statements: readonly Statement[]) =>
  allowing(statements, 'secretsmanager:GetSecretValue').some((s) => resources(s).includes(SECRET_ARN));
const outputNamed = (template: Template, pattern: RegExp) =>
  Object.keys(template.toJSON().Outputs).some((name) => pattern.test(name));

/** Every alarm, by the metric it watches. */
const alarmsOn = (template: Template, namespace: string, metricName: string) =>
  Object.values(resourcesOf(template)).filter(
    (r) =>
      r.Type === 'AWS::CloudWatch::Alarm' &&
      r.Properties.Namespace === namespace &&
      r.Properties.MetricName === metricName,
  );
const hourlySendAlarms = (template: Template) =>
  Object.values(resourcesOf(template)).filter(
    (r) => r.Type === 'AWS::CloudWatch::Alarm' && r.Properties.Period === 3600,
  );

/** A template's resources by logical id without the functions' code (its hash names a temp dir). */
function comparable(template: Template): unknown {
  const json = structuredClone(template.toJSON()) as { Resources: Resources };
  for (const resource of Object.values(json.Resources)) {
    if (resource.Type === 'AWS::Lambda::Function') delete resource.Properties.Code;
  }
  return json;
}

describe('providers twilio,eum: both deploy sides apply', () => {
  let template: Template;
  beforeAll(() => {
    template = synth(listContext(['twilio', 'eum']));
  }, SYNTH_TIMEOUT_MS);

  it('gives every function PROVIDERS in order and the primary as PROVIDER', () => {
    for (const fn of Object.keys(FUNCTIONS) as (keyof typeof FUNCTIONS)[]) {
      expect(envOf(template, fn), fn).toMatchObject({
        [SETTINGS.providers.env]: 'twilio,eum',
        [SETTINGS.provider.env]: 'twilio',
      });
    }
  });

  it("carries both providers' settings", () => {
    expect(envOf(template, 'sender')).toMatchObject({
      PROVIDER_ACCOUNT_SID: 'AC1',
      PROVIDER_FROM: '+15005550006',
      PROVIDER_AUTH_TOKEN_SECRET_ARN: SECRET_ARN,
      EUM_ORIGINATION_IDENTITY: IDENTITY_ARN,
      EUM_CONFIGURATION_SET: 'ResetNotifier',
    });
  });

  it('lets the sender send through either provider: the Twilio token and SendTextMessage', () => {
    const sender = statementsOf(template, 'sender');
    expect(readsSecret(sender)).toBe(true);
    const send = allowing(sender, 'sms-voice:SendTextMessage');
    expect(send).toHaveLength(1);
    expect(resources(send[0] as Statement)).toContain(IDENTITY_ARN);
  });

  it("gives the reconciler and its workers the Twilio lookup grant, and never End User Messaging's send", () => {
    for (const fn of ['reconciler', 'worker'] as const) {
      const statements = statementsOf(template, fn);
      expect(readsSecret(statements), fn).toBe(true);
      expect(allowing(statements, 'sms-voice:SendTextMessage'), fn).toEqual([]);
    }
  });

  it("forwards confirmations to either provider's feedback API", () => {
    const api = statementsOf(template, 'api');
    expect(readsSecret(api)).toBe(true);
    expect(allowing(api, 'sms-voice:PutMessageFeedback')).toHaveLength(1);
  });

  it("has Twilio's public receipts route, its function reading the token, and the callback base on the senders", () => {
    const receipts = functionByDescription(template, FUNCTIONS.twilioReceipts);
    onlyResource(template, 'AWS::ApiGatewayV2::Integration', {
      IntegrationUri: { 'Fn::GetAtt': [receipts.logicalId, 'Arn'] },
    });
    onlyResource(template, 'AWS::ApiGatewayV2::Route', {
      RouteKey: 'POST /v1/receipts/twilio',
      AuthorizationType: 'NONE',
    });
    expect(readsSecret(statementsOf(template, 'twilioReceipts'))).toBe(true);
    const stage = onlyResource(template, 'AWS::ApiGatewayV2::Stage').properties;
    expect(stage.RouteSettings).toMatchObject({
      'POST /v1/receipts/twilio': { ThrottlingRateLimit: 50 * RECEIPTS_THROTTLE_FACTOR },
    });
    for (const fn of ['sender', 'reconciler', 'api'] as const) {
      expect(envOf(template, fn)[SETTINGS.twilioStatusCallbackBase.env], fn).toBeDefined();
    }
  });

  it("has End User Messaging's receipts path: configuration set -> encrypted topic -> receipts function", () => {
    const set = onlyResource(template, 'AWS::SMSVOICE::ConfigurationSet', {
      ConfigurationSetName: 'ResetNotifier',
    });
    const [destination] = set.properties.EventDestinations as Array<{
      SnsDestination: { TopicArn: unknown };
    }>;
    const topicId = referencedId(destination?.SnsDestination.TopicArn);
    const receipts = functionByDescription(template, FUNCTIONS.eumReceipts);
    onlyResource(template, 'AWS::SNS::Subscription', {
      Protocol: 'lambda',
      TopicArn: { Ref: topicId },
      Endpoint: { 'Fn::GetAtt': [receipts.logicalId, 'Arn'] },
    });
    expect(outputNamed(template, /EumEventsTopicArn/)).toBe(true);
  });

  it("pages on End User Messaging's spend and, for Twilio, on sends per hour", () => {
    expect(alarmsOn(template, 'AWS/SMSVoice', 'TextMessageMonthlySpend')).toHaveLength(1);
    const hourly = hourlySendAlarms(template);
    expect(hourly).toHaveLength(1);
    expect(hourly[0]?.Properties.AlarmDescription).toMatch(/twilio publishes no spend metric/);
  });
});

describe('providers sns,eum: two AWS providers side by side', () => {
  let template: Template;
  beforeAll(() => {
    template = synth(listContext(['sns', 'eum']));
  }, SYNTH_TIMEOUT_MS);

  it('gives every function PROVIDERS in order', () => {
    for (const fn of ['api', 'forwarder', 'sender', 'reconciler', 'worker', 'eumReceipts'] as const) {
      expect(envOf(template, fn)[SETTINGS.providers.env], fn).toBe('sns,eum');
    }
  });

  it('lets the sender publish through SNS and send through the configuration set', () => {
    const sender = statementsOf(template, 'sender');
    expect(allowing(sender, 'sns:Publish').map((s) => s.Resource)).toEqual(['*']);
    expect(allowing(sender, 'sms-voice:SendTextMessage')).toHaveLength(1);
  });

  it('lets the reconciler and its workers read the SNS delivery-status logs, and send through neither', () => {
    for (const fn of ['reconciler', 'worker'] as const) {
      const statements = statementsOf(template, fn);
      expect(allowing(statements, 'logs:FilterLogEvents'), fn).toHaveLength(1);
      expect(allowing(statements, 'sns:Publish'), fn).toEqual([]);
      expect(allowing(statements, 'sms-voice:SendTextMessage'), fn).toEqual([]);
    }
  });

  it("creates both providers' resources: delivery-status log groups and role, configuration set and receipts", () => {
    const named = Object.values(resourcesOf(template)).filter(
      (r) => r.Type === 'AWS::Logs::LogGroup' && r.Properties.LogGroupName !== undefined,
    );
    expect(named).toHaveLength(2);
    onlyResource(template, 'AWS::SMSVOICE::ConfigurationSet');
    functionByDescription(template, FUNCTIONS.eumReceipts);
    expect(outputNamed(template, /SnsDeliveryStatusRoleArn/)).toBe(true);
    expect(outputNamed(template, /EumEventsTopicArn/)).toBe(true);
    // No status-callback provider listed: no public route.
    expect(JSON.stringify(template.findResources('AWS::ApiGatewayV2::Route'))).not.toContain('receipts');
  });

  it('has one spend alarm per provider and no sends-per-hour alarm', () => {
    expect(alarmsOn(template, 'AWS/SNS', 'SMSMonthToDateSpentUSD')).toHaveLength(1);
    expect(alarmsOn(template, 'AWS/SMSVoice', 'TextMessageMonthlySpend')).toHaveLength(1);
    expect(hourlySendAlarms(template)).toEqual([]);
  });

  it("bounds each worker's lookups by the strictest provider's rate (SNS's FilterLogEvents)", () => {
    expect(envOf(template, 'worker')[SETTINGS.providerLookupRate.env]).toBe(
      String(
        snsInfra.lookupsPerSecond / (RECONCILE_WORKER_MAX_CONCURRENCY + STATUS_POLL_WORKER_MAX_CONCURRENCY),
      ),
    );
  });

  it(
    "keeps each provider's logical ids whatever the order, and the primary's when a failover provider is added",
    () => {
      // Prepare
      const reversed = synth(listContext(['eum', 'sns']));
      const eumAlone = synth({ provider: 'eum', ...OWN_KEYS.eum });

      // Act
      const ids = (t: Template) => new Set(Object.keys(resourcesOf(t)));

      // Assess: no provider resource is replaced by reordering or by adding a provider (the
      // configuration set is named: a replacement would fail on its own name).
      expect(envOf(reversed, 'sender')[SETTINGS.providers.env]).toBe('eum,sns');
      expect(envOf(reversed, 'sender')[SETTINGS.provider.env]).toBe('eum');
      const awsSms = (t: Template) => [...ids(t)].filter((id) => id.includes('AwsSms')).sort();
      expect(awsSms(reversed)).toEqual(awsSms(template));
      for (const id of awsSms(eumAlone)) expect(ids(template).has(id), id).toBe(true);
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('one provider synthesizes exactly as before', () => {
  it.each(Object.keys(OWN_KEYS) as Kind[])(
    'providers=%s synthesizes as provider=<it> always did, with no PROVIDERS variable',
    (kind) => {
      // Prepare
      const single = synth({ provider: kind, ...OWN_KEYS[kind] });

      // Act
      const listed = synth(listContext([kind]));

      // Assess
      expect(comparable(listed)).toEqual(comparable(single));
      for (const fn of Object.values(resourcesOf(single)).filter((r) => r.Type === 'AWS::Lambda::Function')) {
        const variables = (fn.Properties.Environment as { Variables: Props }).Variables;
        expect(variables[SETTINGS.provider.env]).toBe(kind);
        expect(variables).not.toHaveProperty(SETTINGS.providers.env);
      }
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'takes provider=<the first> beside providers, as the runtime does',
    () => {
      const both = synth({ ...listContext(['sns', 'eum']), provider: 'sns' });
      expect(envOf(both, 'sender')[SETTINGS.providers.env]).toBe('sns,eum');
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'gives the construct the same template for providers: [p] as for provider: p',
    () => {
      const eum: ProviderSettings = { kind: 'eum', originationIdentityArn: IDENTITY_ARN };
      expect(comparable(synthTemplate({ providers: [eum], code: CODE }).template)).toEqual(
        comparable(synthTemplate({ provider: eum, code: CODE }).template),
      );
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('a list that cannot work stops synthesis', () => {
  it.each<[string, Partial<Record<ContextName, string>>, RegExp]>([
    [
      'an unknown kind',
      { ...listContext(['twilio']), providers: 'twilio,bogus' },
      /context reset-notifier:providers.*bogus/,
    ],
    [
      'a kind listed twice',
      { ...listContext(['eum']), providers: 'eum,eum' },
      /reset-notifier:providers.*twice/,
    ],
    [
      'a provider that contradicts the list',
      { ...listContext(['twilio', 'eum']), provider: 'sns' },
      /reset-notifier:provider=sns contradicts reset-notifier:providers=twilio,eum/,
    ],
    [
      'Twilio and the simulator together (one receipts route, one set of PROVIDER_* variables)',
      listContext(['twilio', 'simulator']),
      /ResetNotifier: providers: twilio and simulator both take status callbacks on the one receipts route/,
    ],
    [
      'a listed provider without its required key',
      { providers: 'sns,eum' },
      /context reset-notifier:eumOriginationIdentityArn is required/,
    ],
    [
      'a key of a provider that is not listed',
      { ...listContext(['twilio', 'eum']), snsSenderId: 'ResetCode' },
      /context reset-notifier:snsSenderId is not read with providers twilio,eum/,
    ],
  ])('context: %s', (_name, context, message) => {
    expect(() => synth(context)).toThrow(message);
  });

  it.each<[string, (stack: Stack) => ResetNotifierProps, RegExp]>([
    [
      'a kind listed twice',
      () => ({ providers: [{ kind: 'sns' }, { kind: 'sns', senderId: 'Other' }] }),
      /ResetNotifier: providers: sns is listed twice/,
    ],
    [
      'an unknown kind (a JavaScript caller)',
      () => ({ providers: [{ kind: 'sns' }, { kind: 'bogus' } as unknown as ProviderSettings] }),
      /ResetNotifier: providers\[1\]: unknown provider kind "bogus" \(sns, eum, twilio or simulator\)/,
    ],
    ['an empty list', () => ({ providers: [] }), /ResetNotifier: providers must name at least one provider/],
    [
      'provider and providers both',
      () => ({ provider: { kind: 'sns' }, providers: [{ kind: 'sns' }] }),
      /ResetNotifier: set provider or providers, not both/,
    ],
    [
      'an invalid failover provider, named by its place',
      () => ({ providers: [{ kind: 'sns' }, { kind: 'eum', originationIdentityArn: 'not-an-arn' }] }),
      /ResetNotifier: providers\[1\] \(eum\): provider.originationIdentityArn must be the ARN/,
    ],
    [
      'two providers writing one variable',
      (stack) => ({
        providers: [
          {
            kind: 'twilio',
            accountSid: 'AC1',
            from: '+15005550006',
            authTokenSecret: Secret.fromSecretCompleteArn(stack, 'Token', SECRET_ARN),
          },
          {
            kind: 'simulator',
            baseUrl: 'https://sim.example.test',
            authTokenSecret: Secret.fromSecretCompleteArn(stack, 'SimToken', SECRET_ARN),
          },
        ],
      }),
      /twilio and simulator both/,
    ],
  ])('construct props: %s', (_name, props, message) => {
    expect(() => synthTemplate(props)).toThrow(message);
  });
});

interface Report {
  readonly pluginReports: ReadonlyArray<{
    readonly violations?: ReadonlyArray<{ readonly ruleName: string }>;
  }>;
}

describe('cdk-nag AwsSolutionsChecks with two providers', () => {
  it.each([['twilio', 'eum'] as const, ['sns', 'eum'] as const])(
    'providers=%s,%s synthesizes the deployable app with no unacknowledged finding',
    (...kinds) => {
      // Prepare: what `npm run synth -- -c reset-notifier:providers=...` builds, with stub handlers.
      const app = testApp({ validation: true, context: contextOf(listContext(kinds)) });
      defineApp(app, { code: stubCode() });

      // Act: an unacknowledged finding makes synthesis throw.
      const assembly = app.synth();

      // Assess
      const report = JSON.parse(
        readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8'),
      ) as Report;
      expect(report.pluginReports.flatMap((p) => p.violations ?? [])).toEqual([]);
    },
    SYNTH_TIMEOUT_MS * 2,
  );
});

describe('the local template of a provider list (local IAM enforcement)', () => {
  it(
    "holds every listed provider's grants and functions",
    () => {
      // Act: what `localTemplate(['simulator', 'eum'])` runs in its child process.
      const { template, functions } = synthesizeLocalTemplate(['simulator', 'eum']);

      // Assess
      expect(Object.keys(functions).sort()).toEqual(
        ['api', 'eumReceipts', 'forwarder', 'receipts', 'reconcileWorker', 'reconciler', 'sender'].sort(),
      );
      const assertions = Template.fromJSON(template as unknown as Record<string, unknown>);
      const sender = statementsOfFunction(assertions, functions.sender as string);
      expect(allowing(sender, 'sms-voice:SendTextMessage')).toHaveLength(1);
      expect(allowing(sender, 'secretsmanager:GetSecretValue')).toHaveLength(1);
      const variables = (
        assertions.toJSON().Resources[functions.sender as string].Properties.Environment as {
          Variables: Props;
        }
      ).Variables;
      expect(variables[SETTINGS.providers.env]).toBe('simulator,eum');
    },
    SYNTH_TIMEOUT_MS,
  );
});
