import { CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { CfnConfigurationSet } from 'aws-cdk-lib/aws-smsvoice';
import * as sns from 'aws-cdk-lib/aws-sns';
import { LambdaSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { allowTableItems, allowTableKey } from '../../../infra/constructs/grants.js';
import { KeptReceipts, receiptsDeadLetterQueue } from '../../../infra/constructs/kept-receipts.js';
import { acknowledge } from '../../../infra/constructs/nag.js';
import { ServiceFunction } from '../../../infra/constructs/service-function.js';
import { settingsEnv } from '../../settings.js';
import {
  NO_GRANT,
  type ProviderInfra,
  type ProviderResources,
  type ProviderResourcesContext,
} from '../infra.js';

/**
 * AWS End User Messaging SMS: `SendTextMessage` through a configuration set whose event destination
 * (an encrypted SNS topic) feeds the receipts function.
 */
export interface EumProviderSettings {
  readonly kind: 'eum';
  /** ARN of the phone number, sender id or pool messages come from; `sms-voice:SendTextMessage` is scoped to it. */
  readonly originationIdentityArn: string;
  /** Name of the configuration set the stack creates. @default - the stack name (`infra/settings.ts`) */
  readonly configurationSetName?: string;
  /** `MaxPrice` per message in USD, e.g. `'0.05'`. @default - none */
  readonly maxPrice?: string;
  /** A protect configuration to send under (its id); the grant then names it too. @default - none */
  readonly protectConfigurationId?: string;
  /** Enable message feedback (`PutMessageFeedback` on confirmations). @default false */
  readonly messageFeedback?: boolean;
}

/** The configuration set name of an End User Messaging provider. */
export function eumConfigurationSetName(provider: EumProviderSettings): string {
  return provider.configurationSetName ?? 'reset-notifier';
}

const configurationSetArn = (scope: Construct, provider: EumProviderSettings) =>
  Stack.of(scope).formatArn({
    service: 'sms-voice',
    resource: 'configuration-set',
    resourceName: eumConfigurationSetName(provider),
  });

/**
 * A configuration set (`AWS::SMSVOICE::ConfigurationSet`) with one event destination, an SNS topic
 * encrypted with its own KMS key; the receipts function subscribed to it (the subscription is what
 * authenticates the events).
 */
function buildEum(
  scope: Construct,
  provider: EumProviderSettings,
  { settings, storage, pipeline, entry }: ProviderResourcesContext,
): ProviderResources {
  const stack = Stack.of(scope);
  const name = eumConfigurationSetName(provider);
  const key = new kms.Key(scope, 'EventsKey', {
    description: 'reset-notifier: End User Messaging events topic (events carry destination numbers)',
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const smsVoice = new iam.ServicePrincipal('sms-voice.amazonaws.com');
  // The service publishes to the encrypted topic, so it needs the topic key: only for this account's configuration set.
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      principals: [smsVoice],
      actions: ['kms:GenerateDataKey*', 'kms:Decrypt'],
      resources: ['*'],
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
    }),
  );
  const topic = new sns.Topic(scope, 'EventsTopic', {
    displayName: 'reset-notifier End User Messaging events',
    masterKey: key,
    enforceSSL: true,
  });
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      principals: [smsVoice],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: { 'aws:SourceArn': configurationSetArn(scope, provider) },
      },
    }),
  );
  const configurationSet = new CfnConfigurationSet(scope, 'ConfigurationSet', {
    configurationSetName: name,
    ...(provider.messageFeedback === true ? { messageFeedbackEnabled: true } : {}),
    ...(provider.protectConfigurationId === undefined
      ? {}
      : { protectConfigurationId: provider.protectConfigurationId }),
    eventDestinations: [
      {
        eventDestinationName: 'receipts',
        enabled: true,
        // Every SMS event: each one is evidence (see shared/providers/eum/events.ts).
        matchingEventTypes: ['TEXT_ALL'],
        snsDestination: { topicArn: topic.topicArn },
      },
    ],
  });
  configurationSet.node.addDependency(topic);

  const environment = { ...pipeline.environment, ...settingsEnv({ eumEventsTopicArn: topic.topicArn }) };
  const receipts = new ServiceFunction(scope, 'Receipts', {
    entry: entry('eumReceipts'),
    description: 'reset-notifier: End User Messaging events -> receipts (never sends)',
    timeout: Duration.seconds(30),
    memorySize: 256,
    environment,
    logRetention: settings.logRetention,
    projectRoot: settings.code.projectRoot,
    depsLockFilePath: settings.code.depsLockFilePath,
  });
  // SNS failing to reach the function: its raw copies (numbers in clear) wait here for the keeper.
  const failed = receiptsDeadLetterQueue(scope, 'ReceiptsFailureQueue');
  topic.addSubscription(new LambdaSubscription(receipts, { deadLetterQueue: failed }));
  // Events that keep failing (after Lambda's async retries) are kept without numbers, never dropped.
  const keptReceipts = new KeptReceipts(scope, 'KeptReceipts', {
    settings,
    receipts,
    entry: entry('eumReceipts'),
    environment,
    subscriptionDeadLetterQueue: failed,
    maxEventAge: Duration.hours(6),
  });
  allowTableItems(receipts, storage.table, ['GetItem', 'UpdateItem', 'PutItem']);
  allowTableKey(receipts, storage.tableKey, 'write');
  new CfnOutput(scope, 'EumEventsTopicArn', { value: topic.topicArn });
  return { eventsTopic: topic, configurationSet, receipts, keptReceipts };
}

/** AWS End User Messaging SMS, deploy side. */
export const eumInfra: ProviderInfra<EumProviderSettings> = {
  kind: 'eum',
  lookupsPerSecond: 20,
  statusCallbacks: false,
  // Account-level metric, published once the service-linked role exists
  // (https://docs.aws.amazon.com/sms-voice/latest/userguide/monitoring-cloudwatch.html).
  spendAlarm: {
    namespace: 'AWS/SMSVoice',
    metricName: 'TextMessageMonthlySpend',
    description: (usd) =>
      `End User Messaging SMS spend this month passed ${usd} USD (sending stops at the account's or the enforced spend limit)`,
  },
  fromContext(context) {
    const optional = (
      key: 'eumConfigurationSet' | 'eumMaxPrice' | 'eumProtectConfigurationId',
      name: 'configurationSetName' | 'maxPrice' | 'protectConfigurationId',
    ) => {
      const value = context.get(key);
      return value === undefined ? {} : { [name]: value };
    };
    return {
      kind: 'eum',
      originationIdentityArn: context.required('eumOriginationIdentityArn'),
      ...optional('eumConfigurationSet', 'configurationSetName'),
      ...optional('eumMaxPrice', 'maxPrice'),
      ...optional('eumProtectConfigurationId', 'protectConfigurationId'),
      ...(context.value('eumMessageFeedback') === 'on' ? { messageFeedback: true } : {}),
    };
  },
  // The configuration set's name is unique per account and region: called after the stack unless named.
  namedAfterStack: (provider, stackName) =>
    provider.configurationSetName === undefined ? { ...provider, configurationSetName: stackName } : provider,
  validate(provider, fail) {
    if (
      !/^arn:aws[a-z-]*:sms-voice:[a-z0-9-]*:\d{12}:(phone-number|sender-id|pool)\/.+$/.test(
        provider.originationIdentityArn,
      )
    ) {
      fail('provider.originationIdentityArn must be the ARN of an sms-voice phone number, sender id or pool');
    }
    if (provider.maxPrice !== undefined && !/^\d{1,4}(\.\d{1,5})?$/.test(provider.maxPrice)) {
      fail('provider.maxPrice must be a decimal amount in USD, e.g. 0.05');
    }
    if (
      provider.configurationSetName !== undefined &&
      !/^[A-Za-z0-9_-]{1,64}$/.test(provider.configurationSetName)
    ) {
      fail('provider.configurationSetName must be 1-64 letters, digits, _ or -');
    }
  },
  environment: (_scope, provider) =>
    settingsEnv({
      eumOriginationIdentity: provider.originationIdentityArn,
      eumConfigurationSet: eumConfigurationSetName(provider),
      eumMaxPrice: provider.maxPrice,
      eumProtectConfigurationId: provider.protectConfigurationId,
      eumMessageFeedback: provider.messageFeedback === true ? 'on' : undefined,
    }),
  // Least privilege: sending is allowed through this configuration set, from this identity only.
  grantSend(scope, sender, provider) {
    const resources = [configurationSetArn(scope, provider), provider.originationIdentityArn];
    if (provider.protectConfigurationId !== undefined) {
      resources.push(
        Stack.of(scope).formatArn({
          service: 'sms-voice',
          resource: 'protect-configuration',
          resourceName: provider.protectConfigurationId,
        }),
      );
    }
    sender.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'SendThroughConfigurationSet',
        actions: ['sms-voice:SendTextMessage'],
        resources,
      }),
    );
  },
  // Lookups read the events the receipts function recorded: nothing to call.
  grantLookup: NO_GRANT,
  // User confirmations are forwarded to End User Messaging's feedback API (PutMessageFeedback).
  grantFeedback(scope, api) {
    // PutMessageFeedback's resource is the message (`message/<MessageId>`, Service Authorization
    // Reference): any message of this account and region, since the ids are only known at run time.
    api.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'ForwardConfirmations',
        actions: ['sms-voice:PutMessageFeedback'],
        resources: [
          Stack.of(scope).formatArn({ service: 'sms-voice', resource: 'message', resourceName: '*' }),
        ],
      }),
    );
    acknowledge(
      api.serviceRole,
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sms-voice:<AWS::Region>:<AWS::AccountId>:message/*]',
      'PutMessageFeedback names a message id known only at run time; the grant covers the messages of this account and region, and only records that a user received one.',
    );
  },
  grantReceipts: NO_GRANT,
  resources: buildEum,
};
