import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { beforeAll, describe, expect, it } from 'vitest';
import { RECEIPTS_THROTTLE_FACTOR } from '../../infra/constructs/api.js';
import { defineApp } from '../../infra/main.js';
import { CONTEXT_KEYS } from '../../infra/stack.js';
import {
  allActions,
  EXAMPLE_ALLOW_LIST_CONTEXT,
  functionByDescription,
  onlyResource,
  SYNTH_TIMEOUT_MS,
  statementsOfFunction,
  stubCode,
  synthTemplate,
  testApp,
} from './support.js';

type Props = Record<string, unknown>;
const RECEIPTS = 'Twilio status callbacks';
const ROUTE_KEY = 'POST /v1/receipts/twilio';
const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:twilio-token-AbCdEf';

function envOf(template: Template, description: string): Record<string, unknown> {
  return (functionByDescription(template, description).properties.Environment as { Variables: Props })
    .Variables;
}

/** `<ApiEndpoint of the stack's HTTP API>/v1/receipts/twilio`, as CloudFormation renders it. */
function expectReceiptsUrl(value: unknown, apiLogicalId: string): void {
  expect(value).toEqual({
    'Fn::Join': ['', [{ 'Fn::GetAtt': [apiLogicalId, 'ApiEndpoint'] }, '/v1/receipts/twilio']],
  });
}

describe('Twilio receipts route (provider twilio)', () => {
  let template: Template;
  let apiId: string;
  beforeAll(() => {
    ({ template } = synthTemplate((stack) => ({
      provider: {
        kind: 'twilio',
        accountSid: 'AC123',
        from: '+15005550006',
        authTokenSecret: Secret.fromSecretCompleteArn(stack, 'Token', secretArn),
      },
      apiThrottle: { rateLimit: 20, burstLimit: 40 },
    })));
    apiId = onlyResource(template, 'AWS::ApiGatewayV2::Api').logicalId;
  }, SYNTH_TIMEOUT_MS);

  it('is public (authorization NONE) while every other route keeps IAM', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')) as Array<{
      Properties: Props;
    }>;
    const byKey = new Map(routes.map((r) => [String(r.Properties.RouteKey), r.Properties.AuthorizationType]));
    expect(byKey.get(ROUTE_KEY)).toBe('NONE');
    for (const [key, auth] of byKey) if (key !== ROUTE_KEY) expect(auth, key).toBe('AWS_IAM');
  });

  it('is throttled on its own route key, relative to the stage limits', () => {
    const stage = onlyResource(template, 'AWS::ApiGatewayV2::Stage').properties;
    expect(stage.RouteSettings).toEqual({
      [ROUTE_KEY]: {
        ThrottlingRateLimit: 20 * RECEIPTS_THROTTLE_FACTOR,
        ThrottlingBurstLimit: 40 * RECEIPTS_THROTTLE_FACTOR,
      },
    });
    expect(stage.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 });
  });

  it('is served by its own function, integrated with payload 2.0', () => {
    const receipts = functionByDescription(template, RECEIPTS);
    const integration = onlyResource(template, 'AWS::ApiGatewayV2::Integration', {
      IntegrationUri: { 'Fn::GetAtt': [receipts.logicalId, 'Arn'] },
    });
    expect(integration.properties).toMatchObject({
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
    });
    const route = onlyResource(template, 'AWS::ApiGatewayV2::Route', { RouteKey: ROUTE_KEY }).properties;
    expect(JSON.stringify(route.Target)).toContain(integration.logicalId);
  });

  it('the receipts function reads the Twilio secret and writes command items, nothing more', () => {
    // Prepare
    const receipts = functionByDescription(template, RECEIPTS);

    // Act
    const actions = allActions(statementsOfFunction(template, receipts.logicalId));

    // Assess
    expect(actions).toEqual(
      [
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'kms:Decrypt',
        'kms:DescribeKey',
        'kms:Encrypt',
        'kms:GenerateDataKey',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'secretsmanager:GetSecretValue',
      ].sort(),
    );
  });

  it('every function that builds the provider sends the stack’s own receipts URL as callback base', () => {
    for (const description of [
      'calls the SMS provider once',
      'reconciles unknown outcomes',
      'HTTP API',
      RECEIPTS,
    ]) {
      expectReceiptsUrl(envOf(template, description).PROVIDER_STATUS_CALLBACK_BASE, apiId);
    }
    expect(envOf(template, RECEIPTS)).toMatchObject({
      POWERTOOLS_METRICS_NAMESPACE: 'ResetNotifier/TestStack',
      PROVIDER_AUTH_TOKEN_SECRET_ARN: secretArn,
    });
  });
});

describe('without a Twilio provider (sns, the default)', () => {
  it('has no receipts route, no receipts function and no callback base', () => {
    // Act
    const { template } = synthTemplate();

    // Assess
    template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Route', { RouteKey: ROUTE_KEY }, 0);
    // api, forwarder, sender, reconciler, reconcile worker: no receipts function.
    expect(Object.keys(template.findResources('AWS::Lambda::Function'))).toHaveLength(5);
    expect(envOf(template, 'calls the SMS provider once').PROVIDER_STATUS_CALLBACK_BASE).toBeUndefined();
  });
});

describe('cdk-nag with a Twilio provider', () => {
  it('synthesizes with no unacknowledged finding (the public receipts route is acknowledged with its reason)', () => {
    // Prepare: the deployable app, configured for Twilio through context, with stub handlers.
    const app = testApp({
      validation: true,
      context: {
        ...EXAMPLE_ALLOW_LIST_CONTEXT,
        [CONTEXT_KEYS.provider]: 'twilio',
        [CONTEXT_KEYS.twilioAccountSid]: 'AC123',
        [CONTEXT_KEYS.twilioFrom]: '+15005550006',
        [CONTEXT_KEYS.twilioAuthTokenSecretArn]: secretArn,
      },
    });
    defineApp(app, { code: stubCode() });

    // Act: an unacknowledged finding makes synthesis throw.
    const assembly = app.synth();

    // Assess
    const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
      pluginReports: ReadonlyArray<{ violations?: readonly unknown[] }>;
    };
    expect(report.pluginReports.flatMap((p) => p.violations ?? [])).toEqual([]);
    const template = assembly.getStackByName('ResetNotifier').template as {
      Resources: Record<string, { Type: string; Properties: Props }>;
    };
    const routeKeys = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route')
      .map((r) => r.Properties.RouteKey);
    expect(routeKeys).toContain(ROUTE_KEY);
  }, 60_000);
});

describe('provider simulator: no public route keyed with a well-known token', () => {
  const simulatorContext = {
    ...EXAMPLE_ALLOW_LIST_CONTEXT,
    [CONTEXT_KEYS.provider]: 'simulator',
    [CONTEXT_KEYS.simulatorBaseUrl]: 'https://sim.example.test',
  };

  it('synth refuses it without the auth token secret, naming the context key', () => {
    // Prepare
    const app = testApp({ context: simulatorContext });

    // Act
    const synth = () => defineApp(app, { code: stubCode() });

    // Assess
    expect(synth).toThrow(new RegExp(`context ${CONTEXT_KEYS.twilioAuthTokenSecretArn} is required`));
  });

  it('props without authTokenSecret are refused too', () => {
    expect(() =>
      synthTemplate({ provider: { kind: 'simulator', baseUrl: 'https://sim.example.test' } as never }),
    ).toThrow(/provider \(simulator\) needs authTokenSecret/);
  });

  it(
    'with the secret: every function that checks or makes Twilio requests reads it; no token in any environment',
    () => {
      // Prepare
      const app = testApp({
        context: { ...simulatorContext, [CONTEXT_KEYS.twilioAuthTokenSecretArn]: secretArn },
      });

      // Act
      const template = Template.fromStack(defineApp(app, { code: stubCode() }));

      // Assess
      template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Route', { RouteKey: ROUTE_KEY }, 1);
      const receipts = functionByDescription(template, RECEIPTS);
      expect(envOf(template, RECEIPTS).PROVIDER_AUTH_TOKEN_SECRET_ARN).toBe(secretArn);
      expect(allActions(statementsOfFunction(template, receipts.logicalId))).toContain(
        'secretsmanager:GetSecretValue',
      );
      for (const description of ['calls the SMS provider once', 'reconciles unknown outcomes', 'HTTP API']) {
        expect(envOf(template, description).PROVIDER_AUTH_TOKEN_SECRET_ARN, description).toBe(secretArn);
      }
      const functions = Object.values(template.findResources('AWS::Lambda::Function')) as Array<{
        Properties: { Environment?: { Variables?: Props } };
      }>;
      for (const fn of functions)
        expect(fn.Properties.Environment?.Variables ?? {}).not.toHaveProperty('PROVIDER_AUTH_TOKEN');
    },
    SYNTH_TIMEOUT_MS,
  );
});
