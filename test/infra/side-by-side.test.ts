import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { E164_IDENTIFIER, PHONE_NUMBER_IDENTIFIERS } from '../../infra/constructs/log-protection.js';
import { defineStack } from '../../infra/main.js';
import { CONTEXT_PREFIX, type ContextName } from '../../shared/settings.js';
import {
  EXAMPLE_ALLOW_LIST_CONTEXT,
  resolveIntrinsics,
  SYNTH_TIMEOUT_MS,
  stubCode,
  testApp,
} from './support.js';

const CODE = stubCode();
const IDENTITY_ARN = 'arn:aws:sms-voice:eu-west-1:111111111111:phone-number/phone-1234';

/** The stack `cdk deploy -c reset-notifier:<key>=<value> ...` defines, and its template. */
function deployed(context: Partial<Record<ContextName, string>>) {
  const full = Object.fromEntries(Object.entries(context).map(([k, v]) => [`${CONTEXT_PREFIX}${k}`, v]));
  const stack = defineStack(testApp({ context: { ...EXAMPLE_ALLOW_LIST_CONTEXT, ...full } }), { code: CODE });
  return { stack, template: Template.fromStack(stack) };
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

/**
 * Names CloudFormation gives resources that must be unique in an account and region (a second
 * stack asking for one fails to create), resolved as one account and region would resolve them.
 */
const UNIQUE_NAME_PROPERTIES: Readonly<Record<string, string>> = {
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::SMSVOICE::ConfigurationSet': 'ConfigurationSetName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
  'AWS::SecretsManager::Secret': 'Name',
  'AWS::KMS::Alias': 'AliasName',
  'AWS::Events::Rule': 'Name',
  'AWS::SSM::Parameter': 'Name',
};

function uniqueNames(template: Template): string[] {
  const json = template.toJSON() as { Resources: Resources; Outputs?: Record<string, { Export?: unknown }> };
  const names = Object.values(json.Resources).flatMap((r) => {
    const property = UNIQUE_NAME_PROPERTIES[r.Type];
    const value = property === undefined ? undefined : r.Properties?.[property];
    return value === undefined ? [] : [`${r.Type} ${String(resolveIntrinsics(value, {}))}`];
  });
  const exports = Object.values(json.Outputs ?? {}).flatMap((o) =>
    o.Export === undefined ? [] : [`export ${JSON.stringify(resolveIntrinsics(o.Export, {}))}`],
  );
  return [...names, ...exports];
}

const shared = (a: readonly string[], b: readonly string[]) => a.filter((name) => b.includes(name));

describe('two stacks in one account and region (-c reset-notifier:stackName=...)', () => {
  it(
    'share no unique name with provider eum: the configuration set is named after the stack',
    () => {
      // Prepare / Act
      const a = deployed({
        stackName: 'ResetNotifierA',
        provider: 'eum',
        eumOriginationIdentityArn: IDENTITY_ARN,
      });
      const b = deployed({
        stackName: 'ResetNotifierB',
        provider: 'eum',
        eumOriginationIdentityArn: IDENTITY_ARN,
      });

      // Assess
      expect([a.stack.stackName, b.stack.stackName]).toEqual(['ResetNotifierA', 'ResetNotifierB']);
      expect(uniqueNames(a.template)).toContain('AWS::SMSVOICE::ConfigurationSet ResetNotifierA');
      // Not required to be unique, but named after the stack too, so the two read apart.
      a.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { Name: 'ResetNotifierA' });
      expect(shared(uniqueNames(a.template), uniqueNames(b.template))).toEqual([]);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "share no unique name with provider sns when the second leaves the account's delivery-status log groups to the first",
    () => {
      // Prepare / Act
      const a = deployed({ stackName: 'ResetNotifierA' });
      const b = deployed({ stackName: 'ResetNotifierB', snsManageDeliveryLogGroups: 'off' });
      const both = deployed({ stackName: 'ResetNotifierC' });

      // Assess: SNS chooses those two names itself (sns/<region>/<account>/DirectPublishToPhoneNumber),
      // so they cannot carry a stack name: only one stack of the account and region may create them.
      expect(shared(uniqueNames(a.template), uniqueNames(b.template))).toEqual([]);
      expect(shared(uniqueNames(a.template), uniqueNames(both.template))).toEqual([
        'AWS::Logs::LogGroup sns/eu-west-1/111111111111/DirectPublishToPhoneNumber',
        'AWS::Logs::LogGroup sns/eu-west-1/111111111111/DirectPublishToPhoneNumber/Failure',
      ]);
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('phone numbers are masked in every log group the stack creates', () => {
  it.each([
    ['sns', {}],
    ['eum', { provider: 'eum', eumOriginationIdentityArn: IDENTITY_ARN }],
    [
      'twilio',
      {
        provider: 'twilio',
        twilioAccountSid: 'AC1',
        twilioFrom: '+15005550006',
        twilioAuthTokenSecretArn: 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:tok-AbCdEf',
      },
    ],
  ] as const)(
    'provider %s: a data protection policy that audits and masks phone numbers on each AWS::Logs::LogGroup',
    (_name, context) => {
      // Prepare / Act
      const { template } = deployed(context);
      const groups = Object.values((template.toJSON() as { Resources: Resources }).Resources).filter(
        (r) => r.Type === 'AWS::Logs::LogGroup',
      );

      // Assess
      expect(groups.length).toBeGreaterThanOrEqual(6);
      for (const group of groups) {
        const policy = resolveIntrinsics(group.Properties?.DataProtectionPolicy, {}) as {
          Version: string;
          Statement: { DataIdentifier: string[]; Operation: Record<string, unknown> }[];
          Configuration: { CustomDataIdentifier: { Name: string; Regex: string }[] };
        };
        expect(policy.Version).toBe('2021-06-01');
        const identifiers = [
          ...PHONE_NUMBER_IDENTIFIERS.map((id) => `arn:aws:dataprotection::aws:data-identifier/${id}`),
          E164_IDENTIFIER.Name,
        ];
        expect(policy.Statement.map((s) => Object.keys(s.Operation)[0])).toEqual(['Audit', 'Deidentify']);
        for (const statement of policy.Statement) expect(statement.DataIdentifier).toEqual(identifiers);
        expect(policy.Configuration.CustomDataIdentifier).toEqual([E164_IDENTIFIER]);
      }
    },
    SYNTH_TIMEOUT_MS,
  );

  it('the custom identifier matches every E.164 number and nothing a timestamp or a price looks like', () => {
    // Prepare: CloudWatch Logs applies the regex to the ingested text as a search, as here.
    const regex = new RegExp(E164_IDENTIFIER.Regex, 'g');
    const delivered =
      '{"delivery":{"destination":"+14155550123","smsType":"Transactional","priceInUSD":0.00645},"status":"SUCCESS"}';

    // Act / Assess
    expect(delivered.replace(regex, '***')).toBe(
      '{"delivery":{"destination":"***","smsType":"Transactional","priceInUSD":0.00645},"status":"SUCCESS"}',
    );
    for (const number of ['+447700900123', '+33612345678', '+8613812345678', '+5511912345678']) {
      expect(number.replace(regex, '***')).toBe('***');
    }
    for (const text of ['2026-12-02T13:40:50.123+0000', '2026-12-02T13:40:50+05:30', 'fp1:3f2a', 'pf2:+']) {
      expect(text.replace(regex, '***')).toBe(text);
    }
  });
});
