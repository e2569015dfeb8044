import { join } from 'node:path';
import { Arn, ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnConfigurationSet } from 'aws-cdk-lib/aws-smsvoice';
import * as sns from 'aws-cdk-lib/aws-sns';
import { LambdaSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  type EumProviderSettings,
  eumConfigurationSetName,
  FUNCTION_ENTRIES,
  type ResolvedSettings,
  type SnsProviderSettings,
  snsDeliveryLogGroups,
} from '../settings.js';
import { allowTableItems, allowTableKey, logGroupArns } from './grants.js';
import { acknowledge } from './nag.js';
import type { Pipeline } from './pipeline.js';
import { ServiceFunction } from './service-function.js';
import type { Storage } from './storage.js';

/** Props of {@link AwsSmsResources}. */
export interface AwsSmsResourcesProps {
  readonly settings: ResolvedSettings;
  readonly storage: Storage;
  readonly pipeline: Pipeline;
}

/**
 * The AWS side of the AWS SMS providers:
 *
 * - `eum`: a configuration set (`AWS::SMSVOICE::ConfigurationSet`) with one event destination, an
 *   SNS topic encrypted with its own KMS key; the receipts function subscribed to it (the
 *   subscription is what authenticates the events); the sender's `sms-voice:SendTextMessage`
 *   scoped to that configuration set and the origination identity (and protect configuration).
 * - `sns`: the SMS delivery-status log groups SNS writes (`sns/<region>/<account>/DirectPublishToPhoneNumber`
 *   and `/Failure`), with a retention and a KMS key, because every line holds a destination
 *   number in clear; and the role SNS writes them with (set it as the account's
 *   `DeliveryStatusIAMRole`, see docs/providers/aws.md).
 */
export class AwsSmsResources extends Construct {
  readonly eventsTopic?: sns.Topic;
  readonly configurationSet?: CfnConfigurationSet;
  readonly receipts?: ServiceFunction;
  readonly deliveryLogGroups: readonly LogGroup[] = [];
  readonly deliveryStatusRole?: iam.Role;

  constructor(scope: Construct, id: string, props: AwsSmsResourcesProps) {
    super(scope, id);
    const { provider } = props.settings;
    if (provider.kind === 'eum') {
      const built = this.buildEum(props, provider);
      this.eventsTopic = built.topic;
      this.configurationSet = built.configurationSet;
      this.receipts = built.receipts;
    } else if (provider.kind === 'sns' && provider.manageDeliveryLogGroups !== false) {
      const built = this.buildSnsLogs(provider);
      this.deliveryLogGroups = built.groups;
      this.deliveryStatusRole = built.role;
    }
  }

  private buildEum(props: AwsSmsResourcesProps, provider: EumProviderSettings) {
    const { settings, storage, pipeline } = props;
    const stack = Stack.of(this);
    const name = eumConfigurationSetName(provider);
    const configurationSetArn = stack.formatArn({
      service: 'sms-voice',
      resource: 'configuration-set',
      resourceName: name,
    });

    const key = new kms.Key(this, 'EventsKey', {
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
    const topic = new sns.Topic(this, 'EventsTopic', {
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
          ArnLike: { 'aws:SourceArn': configurationSetArn },
        },
      }),
    );
    const configurationSet = new CfnConfigurationSet(this, 'ConfigurationSet', {
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

    const receipts = new ServiceFunction(this, 'Receipts', {
      entry: join(settings.code.entryDirectory, FUNCTION_ENTRIES.eumReceipts),
      description: 'reset-notifier: End User Messaging events -> receipts (never sends)',
      timeout: Duration.seconds(30),
      memorySize: 256,
      environment: { ...pipeline.environment, EUM_EVENTS_TOPIC_ARN: topic.topicArn },
      logRetention: settings.logRetention,
      projectRoot: settings.code.projectRoot,
      depsLockFilePath: settings.code.depsLockFilePath,
    });
    // Events that keep failing (after Lambda's async retries) are kept, never dropped silently.
    const failed = new Queue(this, 'ReceiptsFailureQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      failed,
      'AwsSolutions-SQS3',
      'This queue is itself the failure destination of the receipts function.',
    );
    receipts.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.hours(6) });
    topic.addSubscription(new LambdaSubscription(receipts, { deadLetterQueue: failed }));
    allowTableItems(receipts, storage.table, ['GetItem', 'UpdateItem', 'PutItem']);
    allowTableKey(receipts, storage.tableKey, 'write');

    // Least privilege: sending is allowed through this configuration set, from this identity only.
    const resources = [configurationSetArn, provider.originationIdentityArn];
    if (provider.protectConfigurationId !== undefined) {
      resources.push(
        stack.formatArn({
          service: 'sms-voice',
          resource: 'protect-configuration',
          resourceName: provider.protectConfigurationId,
        }),
      );
    }
    pipeline.sender.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'SendThroughConfigurationSet',
        actions: ['sms-voice:SendTextMessage'],
        resources,
      }),
    );
    new CfnOutput(this, 'EumEventsTopicArn', { value: topic.topicArn });
    return { topic, configurationSet, receipts };
  }

  private buildSnsLogs(provider: SnsProviderSettings) {
    const stack = Stack.of(this);
    const { names, nagNames } = snsDeliveryLogGroups(this, provider.deliveryLogGroupNames);
    const key = new kms.Key(this, 'DeliveryLogsKey', {
      description: 'reset-notifier: SNS SMS delivery-status logs (destination numbers in clear)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': names.map((name) =>
              Arn.format(
                {
                  service: 'logs',
                  resource: 'log-group',
                  resourceName: name,
                  arnFormat: ArnFormat.COLON_RESOURCE_NAME,
                },
                stack,
              ),
            ),
          },
        },
      }),
    );
    const groups = names.map(
      (name, index) =>
        new LogGroup(this, index === 0 ? 'DeliveryLogs' : `DeliveryLogs${index}`, {
          logGroupName: name,
          retention: provider.deliveryLogRetention ?? RetentionDays.ONE_WEEK,
          encryptionKey: key,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
    );
    const role = new iam.Role(this, 'DeliveryStatusRole', {
      description:
        'SNS writes SMS delivery-status logs with this role (account attribute DeliveryStatusIAMRole)',
      assumedBy: new iam.ServicePrincipal('sns.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: logGroupArns(this, names),
      }),
    );
    for (const name of nagNames) {
      acknowledge(
        role,
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:${name}:*]`,
        'SNS writes log streams of the group (`log-group:<name>:*`); the grant names one SNS delivery-status log group.',
      );
    }
    new CfnOutput(this, 'SnsDeliveryStatusRoleArn', { value: role.roleArn });
    return { groups, role };
  }
}
