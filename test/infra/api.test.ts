import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { ResetNotifier } from '../../infra/reset-notifier.js';
import {
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
    const notifier = new ResetNotifier(stack, 'Notifier', { code: stubCode() });
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
      '/*/POST/v1/notifications',
      // The confirmation route: CDK grants path parameters and what follows them as "*".
      '/*/POST/v1/notifications/*',
    ]);
  });
});
