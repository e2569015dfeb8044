import { Arn, ArnFormat, CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { logGroupArns } from '../../../infra/constructs/grants.js';
import { acknowledge } from '../../../infra/constructs/nag.js';
import { retentionDaysOf } from '../../../infra/log-retention.js';
import { SETTINGS, settingsEnv } from '../../settings.js';
import { NO_GRANT, type ProviderInfra } from '../infra.js';

/** Amazon SNS SMS (the default in AWS): `sns:Publish` to phone numbers, lookups in the delivery-status logs. */
export interface SnsProviderSettings {
  readonly kind: 'sns';
  /** `AWS.SNS.SMS.SenderID`, where the destination country supports one. @default - none */
  readonly senderId?: string;
  /**
   * The SNS SMS delivery-status log groups the reconciler reads.
   * @default - `sns/<region>/<account>/DirectPublishToPhoneNumber` and the same with `/Failure`
   */
  readonly deliveryLogGroupNames?: readonly string[];
  /**
   * Create those log groups (retention, KMS key) and the IAM role SNS writes them with. Turn off
   * when they already exist in the account (CloudFormation cannot adopt them). @default true
   */
  readonly manageDeliveryLogGroups?: boolean;
  /** Retention of the delivery-status logs (they hold destination numbers in clear). @default ONE_WEEK */
  readonly deliveryLogRetention?: RetentionDays;
}

/**
 * The SNS SMS delivery-status log groups: `names` for the template, and `nagNames`, the same names
 * as cdk-nag prints them (pseudo parameters as `<AWS::Region>`), to acknowledge its findings.
 * Custom names must be literal strings.
 */
export function snsDeliveryLogGroups(
  scope: Construct,
  custom: readonly string[] | undefined,
): { readonly names: readonly string[]; readonly nagNames: readonly string[] } {
  if (custom !== undefined) return { names: custom, nagNames: custom };
  const { region, account } = Stack.of(scope);
  const base = (r: string, a: string) => `sns/${r}/${a}/DirectPublishToPhoneNumber`;
  const both = (r: string, a: string) => [base(r, a), `${base(r, a)}/Failure`];
  return { names: both(region, account), nagNames: both('<AWS::Region>', '<AWS::AccountId>') };
}

/**
 * The delivery-status log groups SNS writes (`sns/<region>/<account>/DirectPublishToPhoneNumber`
 * and `/Failure`), with a retention and a KMS key, because every line holds a destination number
 * in clear; and the role SNS writes them with (set it as the account's `DeliveryStatusIAMRole`,
 * see docs/providers/aws.md).
 */
function buildSnsLogs(scope: Construct, provider: SnsProviderSettings) {
  const stack = Stack.of(scope);
  const { names, nagNames } = snsDeliveryLogGroups(scope, provider.deliveryLogGroupNames);
  const key = new kms.Key(scope, 'DeliveryLogsKey', {
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
      new LogGroup(scope, index === 0 ? 'DeliveryLogs' : `DeliveryLogs${index}`, {
        logGroupName: name,
        retention:
          provider.deliveryLogRetention ?? (SETTINGS.snsDeliveryLogRetentionDays.aws as RetentionDays),
        encryptionKey: key,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
  );
  const role = new iam.Role(scope, 'DeliveryStatusRole', {
    description:
      'SNS writes SMS delivery-status logs with this role (account attribute DeliveryStatusIAMRole)',
    assumedBy: new iam.ServicePrincipal('sns.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
    }),
  });
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: logGroupArns(scope, names),
    }),
  );
  for (const name of nagNames) {
    acknowledge(
      role,
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:${name}:*]`,
      'SNS writes log streams of the group (`log-group:<name>:*`); the grant names one SNS delivery-status log group.',
    );
  }
  new CfnOutput(scope, 'SnsDeliveryStatusRoleArn', { value: role.roleArn });
  return { deliveryLogGroups: groups, deliveryStatusRole: role };
}

/** Amazon SNS SMS, deploy side. */
export const snsInfra: ProviderInfra<SnsProviderSettings> = {
  kind: 'sns',
  // Lookups are FilterLogEvents calls: 5 per second per account.
  lookupsPerSecond: 4,
  wildcardSendReason: 'sns:Publish to a phone number has no resource ARN; it only works on "*".',
  statusCallbacks: false,
  spendAlarm: {
    namespace: 'AWS/SNS',
    metricName: 'SMSMonthToDateSpentUSD',
    description: (usd) =>
      `SNS SMS spend this month passed ${usd} USD (SNS stops sending at the account's spend limit)`,
  },
  fromContext(context) {
    const senderId = context.get('snsSenderId');
    const names = context.value('snsDeliveryLogGroups');
    const manage = context.value('snsManageDeliveryLogGroups');
    const retentionDays = context.value('snsDeliveryLogRetentionDays');
    return {
      kind: 'sns',
      ...(senderId === undefined ? {} : { senderId }),
      ...(names === undefined || names.length === 0 ? {} : { deliveryLogGroupNames: names }),
      ...(manage === undefined ? {} : { manageDeliveryLogGroups: manage === 'on' }),
      ...(retentionDays === undefined
        ? {}
        : {
            deliveryLogRetention: retentionDaysOf(
              retentionDays,
              `context ${context.name('snsDeliveryLogRetentionDays')}`,
            ),
          }),
    };
  },
  validate: NO_GRANT,
  environment: (scope, provider) =>
    settingsEnv({
      snsDeliveryLogGroups: snsDeliveryLogGroups(scope, provider.deliveryLogGroupNames).names,
      snsSenderId: provider.senderId,
    }),
  grantSend(_scope, sender) {
    sender.addToRolePolicy(new iam.PolicyStatement({ actions: ['sns:Publish'], resources: ['*'] }));
  },
  grantLookup(scope, fn, provider) {
    const groups = snsDeliveryLogGroups(scope, provider.deliveryLogGroupNames);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['logs:FilterLogEvents'],
        resources: logGroupArns(scope, groups.names),
      }),
    );
    for (const name of groups.nagNames) {
      acknowledge(
        fn.serviceRole,
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:${name}:*]`,
        'FilterLogEvents is authorized on the log streams of the group (`log-group:<name>:*`); the grant names one SNS delivery-status log group.',
      );
    }
  },
  grantFeedback: NO_GRANT,
  grantReceipts: NO_GRANT,
  resources(scope, provider) {
    return provider.manageDeliveryLogGroups === false ? {} : buildSnsLogs(scope, provider);
  },
};
