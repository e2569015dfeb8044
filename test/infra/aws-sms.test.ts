import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineApp } from '../../infra/main.js';
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

const IDENTITY = 'arn:aws:sms-voice:eu-west-1:111111111111:pool/pool-0123456789abcdef';
const allowing = (statements: readonly Statement[], action: string) =>
  statements.filter((s) => s.Effect === 'Allow' && actionsOf(s).includes(action));
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

describe('provider eum: configuration set, encrypted events topic, receipts function, scoped send', () => {
  let template: Template;
  beforeAll(() => {
    ({ template } = synthTemplate({
      provider: { kind: 'eum', originationIdentityArn: IDENTITY, protectConfigurationId: 'protect-abc' },
    }));
  }, SYNTH_TIMEOUT_MS);

  /** The events topic: the one the configuration set's event destination names (the alarm topic is another). */
  const eventsTopic = () => {
    const set = onlyResource(template, 'AWS::SMSVOICE::ConfigurationSet');
    const [destination] = set.properties.EventDestinations as Record<string, unknown>[];
    const sink = destination?.SnsDestination as { TopicArn?: unknown } | undefined;
    const logicalId = referencedId(sink?.TopicArn) as string;
    const resource = template.toJSON().Resources[logicalId] as { Properties: Record<string, unknown> };
    return { logicalId, properties: resource.Properties };
  };

  it('creates the configuration set with one enabled SNS event destination for every SMS event', () => {
    const set = onlyResource(template, 'AWS::SMSVOICE::ConfigurationSet', {
      ConfigurationSetName: 'TestStack',
    });
    const [destination] = set.properties.EventDestinations as Record<string, unknown>[];
    expect(destination).toMatchObject({ Enabled: true, MatchingEventTypes: ['TEXT_ALL'] });
    const sink = destination?.SnsDestination as { TopicArn?: unknown } | undefined;
    const topicId = referencedId(sink?.TopicArn);
    expect(template.toJSON().Resources[topicId as string].Type).toBe('AWS::SNS::Topic');
  });

  it('encrypts the topic with its own rotated key and lets only End User Messaging of this account publish', () => {
    const topic = eventsTopic();
    const keyId = referencedId(topic.properties.KmsMasterKeyId);
    expect(template.toJSON().Resources[keyId as string]).toMatchObject({
      Type: 'AWS::KMS::Key',
      Properties: { EnableKeyRotation: true },
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'sms-voice.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: Match.objectLike({ StringEquals: { 'aws:SourceAccount': Match.anyValue() } }),
          }),
        ]),
      },
    });
  });

  it('subscribes the receipts function to the topic, with a failure queue', () => {
    const receipts = functionByDescription(template, 'End User Messaging events -> receipts');
    const subscription = onlyResource(template, 'AWS::SNS::Subscription', { Protocol: 'lambda' });
    expect(referencedId(subscription.properties.Endpoint)).toBe(receipts.logicalId);
    expect(subscription.properties.RedrivePolicy).toBeDefined();
    const env = (receipts.properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(referencedId(env.EUM_EVENTS_TOPIC_ARN)).toBe(eventsTopic().logicalId);
    const actions = statementsOfFunction(template, receipts.logicalId).flatMap(actionsOf);
    expect(actions).not.toContain('sms-voice:SendTextMessage');
    expect(actions.filter((a) => a.startsWith('sns:') || a.startsWith('sms-voice:'))).toEqual([]);
  });

  it('lets the api forward user confirmations (PutMessageFeedback) and nothing else of sms-voice', () => {
    const api = functionByDescription(template, 'HTTP API');
    const actions = statementsOfFunction(template, api.logicalId).flatMap(actionsOf);
    expect(actions.filter((a) => a.startsWith('sms-voice:'))).toEqual(['sms-voice:PutMessageFeedback']);
    const sender = functionByDescription(template, 'calls the SMS provider once');
    expect(statementsOfFunction(template, sender.logicalId).flatMap(actionsOf)).not.toContain(
      'sms-voice:PutMessageFeedback',
    );
  });

  it('grants the sender sms-voice:SendTextMessage on the configuration set, the origination identity and the protect configuration only', () => {
    const sender = functionByDescription(template, 'calls the SMS provider once');
    const statements = allowing(
      statementsOfFunction(template, sender.logicalId),
      'sms-voice:SendTextMessage',
    );
    expect(statements).toHaveLength(1);
    const [statement] = statements as [Statement];
    expect(actionsOf(statement)).toEqual(['sms-voice:SendTextMessage']);
    const resources = JSON.stringify(list(statement.Resource));
    expect(list(statement.Resource)).toHaveLength(3);
    expect(resources).toContain(IDENTITY);
    expect(resources).toContain(':configuration-set/TestStack');
    expect(resources).toContain(':protect-configuration/protect-abc');
    expect(resources).not.toContain('"*"');
    const env = (sender.properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).toMatchObject({
      PROVIDER: 'eum',
      EUM_ORIGINATION_IDENTITY: IDENTITY,
      EUM_CONFIGURATION_SET: 'TestStack',
      EUM_PROTECT_CONFIGURATION_ID: 'protect-abc',
    });
  });

  it('creates no SNS delivery-status log groups and no sns:Publish grant', () => {
    const sender = functionByDescription(template, 'calls the SMS provider once');
    expect(allowing(statementsOfFunction(template, sender.logicalId), 'sns:Publish')).toEqual([]);
    expect(JSON.stringify(template.findResources('AWS::Logs::LogGroup'))).not.toContain(
      'DirectPublishToPhoneNumber',
    );
  });

  it('refuses an origination identity that is not an sms-voice ARN', () => {
    expect(() =>
      synthTemplate({ provider: { kind: 'eum', originationIdentityArn: '+12065550100' } }),
    ).toThrow(/originationIdentityArn/);
  });
});

describe('provider sns: the stack owns the delivery-status log groups', () => {
  let template: Template;
  beforeAll(() => {
    ({ template } = synthTemplate());
  }, SYNTH_TIMEOUT_MS);

  it('creates both groups with a retention and a rotated KMS key the logs service may use for them only', () => {
    // The names hold the region and account as tokens: they are matched in their rendered form.
    const props = Object.values(template.findResources('AWS::Logs::LogGroup'))
      .map((g) => (g as { Properties: Record<string, unknown> }).Properties)
      .filter((p) => JSON.stringify(p.LogGroupName ?? '').includes('DirectPublishToPhoneNumber'));
    expect(props).toHaveLength(2);
    expect(JSON.stringify(props.map((p) => p.LogGroupName))).toContain('DirectPublishToPhoneNumber/Failure');
    for (const p of props) {
      expect(p.RetentionInDays).toBe(7);
      const keyId = referencedId(p.KmsKeyId);
      const key = template.toJSON().Resources[keyId as string];
      expect(key).toMatchObject({ Type: 'AWS::KMS::Key', Properties: { EnableKeyRotation: true } });
      const logsStatement = (key.Properties.KeyPolicy.Statement as Record<string, unknown>[]).find((s) =>
        JSON.stringify(s.Principal).includes('logs.'),
      );
      expect(JSON.stringify(logsStatement?.Condition)).toContain('kms:EncryptionContext:aws:logs:arn');
    }
  });

  it('creates the role SNS writes them with: only those groups, only writing', () => {
    const role = onlyResource(template, 'AWS::IAM::Role', {
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'sns.amazonaws.com' } })]),
      }),
    });
    const policies = template.findResources('AWS::IAM::Policy', {
      Properties: { Roles: Match.arrayWith([{ Ref: role.logicalId }]) },
    });
    const statements = Object.values(policies).flatMap(
      (p) =>
        (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument
          .Statement,
    );
    expect(statements.flatMap(actionsOf).sort()).toEqual([
      'logs:CreateLogGroup',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]);
    expect(JSON.stringify(statements.map((s) => s.Resource))).toContain('DirectPublishToPhoneNumber');
  });

  it('leaves existing groups alone when told to', () => {
    const { template: unmanaged } = synthTemplate({
      provider: { kind: 'sns', manageDeliveryLogGroups: false },
    });
    expect(JSON.stringify(unmanaged.findResources('AWS::Logs::LogGroup'))).not.toContain(
      'DirectPublishToPhoneNumber',
    );
  });
});

describe('cdk-nag with provider eum (from context, as `cdk deploy -c reset-notifier:provider=eum`)', () => {
  it('synthesizes with no unacknowledged finding', () => {
    const app = testApp({
      validation: true,
      context: {
        ...EXAMPLE_ALLOW_LIST_CONTEXT,
        'reset-notifier:provider': 'eum',
        'reset-notifier:eumOriginationIdentityArn': IDENTITY,
      },
    });
    defineApp(app, { code: stubCode() });
    const assembly = app.synth();
    const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
      pluginReports: { violations?: unknown[] }[];
    };
    expect(report.pluginReports.flatMap((p) => p.violations ?? [])).toEqual([]);
  }, 60_000);
});
