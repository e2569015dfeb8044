import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../infra/constructs/api.js';
import { ResetNotifier } from '../../infra/reset-notifier.js';
import {
  EXAMPLE_ALLOW_LISTS,
  functionByDescription,
  onlyResource,
  SYNTH_TIMEOUT_MS,
  stubCode,
  synthTemplate,
  testApp,
} from './support.js';

type Props = Record<string, unknown>;

describe('HTTP API', () => {
  let template: Template;
  beforeAll(() => {
    ({ template } = synthTemplate({ apiThrottle: { rateLimit: 20, burstLimit: 40 } }));
  }, SYNTH_TIMEOUT_MS);

  it('exposes exactly the v1 routes', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')) as Array<{
      Properties: Props;
    }>;
    expect(routes.map((r) => r.Properties.RouteKey).sort()).toEqual(
      [
        'GET /v1/notifications',
        'GET /v1/notifications/{idempotency_key}',
        'GET /v1/notifications/{idempotency_key}/evidence',
        'GET /v1/openapi.json',
        'POST /v1/notifications',
        'POST /v1/notifications/{idempotency_key}/confirmation',
      ].sort(),
    );
  });

  it('requires IAM (SigV4) authorization on every route', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')) as Array<{
      Properties: Props;
    }>;
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes)
      expect(route.Properties.AuthorizationType, String(route.Properties.RouteKey)).toBe('AWS_IAM');
    // No catch-all route that could bypass the authorizer.
    template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Route', { RouteKey: '$default' }, 0);
  });

  it('throttles the stage and writes JSON access logs to a log group with retention', () => {
    // Prepare
    const stage = onlyResource(template, 'AWS::ApiGatewayV2::Stage', { StageName: '$default' }).properties;

    // Act
    const access = stage.AccessLogSettings as {
      DestinationArn: { 'Fn::GetAtt': [string, string] };
      Format: string;
    };

    // Assess
    expect(stage).toMatchObject({
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
    });
    expect(JSON.parse(access.Format)).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
    });
    expect(template.toJSON().Resources[access.DestinationArn['Fn::GetAtt'][0]]).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 90 },
    });
  });

  it('integrates the API function with payload format 2.0 (what the local runtime emulates)', () => {
    const api = functionByDescription(template, 'HTTP API');
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: { 'Fn::GetAtt': [api.logicalId, 'Arn'] },
    });
  });

  it('grants execute-api:Invoke on the routes to the invokers given as props', () => {
    // Prepare: another team's stack in the same app, with the auth service's role.
    const app = testApp();
    const stack = new Stack(app, 'AuthService');
    const authRole = new Role(stack, 'AuthFunctionRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    });

    // Act
    const notifier = new ResetNotifier(stack, 'Notifier', {
      code: stubCode(),
      abuseLimits: EXAMPLE_ALLOW_LISTS,
    });
    notifier.grantInvokeApi(authRole);
    const authTemplate = Template.fromStack(stack);

    // Assess
    const roleId = onlyResource(authTemplate, 'AWS::IAM::Role', {
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: [Match.objectLike({ Principal: { Service: 'lambda.amazonaws.com' } })],
      }),
      Description: Match.absent(),
    }).logicalId;
    const policies = authTemplate.findResources('AWS::IAM::Policy', {
      Properties: { Roles: [{ Ref: roleId }] },
    }) as Record<
      string,
      { Properties: { PolicyDocument: { Statement: Array<{ Action: unknown; Resource: unknown }> } } }
    >;
    const statements = Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements.map((s) => s.Action)).toEqual(['execute-api:Invoke']);
    // Path parameters become "*", which also covers `/{idempotency_key}/evidence`.
    const suffixes = statements
      .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]))
      .map((r) => {
        const parts = (r as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
        return parts[parts.length - 1];
      });
    expect(suffixes.sort()).toEqual([
      '/*/GET/v1/notifications',
      '/*/GET/v1/notifications/*',
      '/*/GET/v1/openapi.json',
      '/*/POST/v1/notifications',
      // The confirmation route: CDK grants path parameters and what follows them as "*".
      '/*/POST/v1/notifications/*',
    ]);
  });

  it('creates an invoker role for callers in other accounts: trusts exactly them, invokes exactly the routes', () => {
    // Act
    const { template: withInvokers } = synthTemplate({
      apiInvokerPrincipals: ['111111111111', 'arn:aws:iam::222222222222:role/auth-service'],
    });

    // Assess
    const role = onlyResource(withInvokers, 'AWS::IAM::Role', {
      Description: Match.stringLikeRegexp('callers in other accounts'),
    });
    const trust = role.properties.AssumeRolePolicyDocument as {
      Statement: Array<{ Action: string; Principal: { AWS: unknown } }>;
    };
    expect(trust.Statement.map((s) => s.Action)).toEqual(['sts:AssumeRole']);
    const trusted = JSON.stringify(trust.Statement.map((s) => s.Principal.AWS));
    expect(trusted).toContain(':iam::111111111111:root');
    expect(trusted).toContain('arn:aws:iam::222222222222:role/auth-service');
    const policies = withInvokers.findResources('AWS::IAM::Policy', {
      Properties: { Roles: [{ Ref: role.logicalId }] },
    }) as Record<
      string,
      { Properties: { PolicyDocument: { Statement: Array<{ Action: unknown; Resource: unknown }> } } }
    >;
    const statements = Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements.map((st) => st.Action)).toEqual(['execute-api:Invoke']);
    const apiId = Object.keys(withInvokers.findResources('AWS::ApiGatewayV2::Api'))[0];
    const resources = statements.flatMap((st) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]));
    // Every IAM route (never the public receipts route, which is not in the list). A route ARN ends at
    // its first path parameter, so GET /v1/notifications/{key} and .../{key}/evidence share one.
    expect(API_ROUTES).toHaveLength(6);
    expect(resources).toHaveLength(5);
    for (const resource of resources) expect(JSON.stringify(resource)).toContain(`"Ref":"${apiId}"`);
    withInvokers.hasOutput('ApiInvokerRoleArn', { Value: { 'Fn::GetAtt': [role.logicalId, 'Arn'] } });
  });

  it('creates no invoker role without principals, and rejects principals that are neither account nor role', () => {
    // Assess
    template.resourcePropertiesCountIs(
      'AWS::IAM::Role',
      { Description: Match.stringLikeRegexp('callers in other accounts') },
      0,
    );
    expect(() => synthTemplate({ apiInvokerPrincipals: ['arn:aws:iam::111111111111:user/bob'] })).toThrow(
      /apiInvokerPrincipals: "arn:aws:iam::111111111111:user\/bob" is neither a 12-digit account id nor an IAM role ARN/,
    );
  });
});
