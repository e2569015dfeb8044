import {
  DescribeAccountAttributesCommand,
  DescribePhoneNumbersCommand,
  DescribePoolsCommand,
  DescribeSenderIdsCommand,
  DescribeSpendLimitsCommand,
  PinpointSMSVoiceV2Client,
} from '@aws-sdk/client-pinpoint-sms-voice-v2';
import {
  GetSMSAttributesCommand,
  GetSMSSandboxAccountStatusCommand,
  ListSMSSandboxPhoneNumbersCommand,
  SNSClient,
} from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { type Finding, formatFindings, runChecks } from '../../../scripts/deploy-check/checks.js';

const sns = mockClient(SNSClient);
const smsVoice = mockClient(PinpointSMSVoiceV2Client);
const clients = () => ({
  sns: new SNSClient({ region: 'eu-west-1' }),
  smsVoice: new PinpointSMSVoiceV2Client({ region: 'eu-west-1' }),
});
const byId = (findings: readonly Finding[], id: string) => findings.find((f) => f.id === id);
const NUMBER = {
  PhoneNumberArn:
    'arn:aws:sms-voice:eu-west-1:111111111111:phone-number/phone-0123456789abcdef0123456789abcdef',
  PhoneNumberId: 'phone-0123456789abcdef0123456789abcdef',
  PhoneNumber: '+18445550100',
  Status: 'ACTIVE' as const,
  IsoCountryCode: 'US',
  MessageType: 'TRANSACTIONAL' as const,
  NumberCapabilities: ['SMS' as const],
  NumberType: 'TOLL_FREE' as const,
  MonthlyLeasingPrice: '2.00',
  TwoWayEnabled: false,
  SelfManagedOptOutsEnabled: false,
  OptOutListName: 'Default',
  DeletionProtectionEnabled: false,
  CreatedTimestamp: new Date(0),
};

/** A fresh account: sandbox, $1 limit, no delivery logging, no origination identity. */
function aFreshAccount() {
  sns.on(GetSMSSandboxAccountStatusCommand).resolves({ IsInSandbox: true });
  sns.on(ListSMSSandboxPhoneNumbersCommand).resolves({ PhoneNumbers: [] });
  sns.on(GetSMSAttributesCommand).resolves({ attributes: { MonthlySpendLimit: '1' } });
  smsVoice.on(DescribePhoneNumbersCommand).resolves({ PhoneNumbers: [] });
  smsVoice.on(DescribeSenderIdsCommand).resolves({ SenderIds: [] });
  smsVoice.on(DescribePoolsCommand).resolves({ Pools: [] });
  smsVoice
    .on(DescribeAccountAttributesCommand)
    .resolves({ AccountAttributes: [{ Name: 'ACCOUNT_TIER', Value: 'SANDBOX' }] });
  smsVoice.on(DescribeSpendLimitsCommand).resolves({
    SpendLimits: [
      { Name: 'TEXT_MESSAGE_MONTHLY_SPEND_LIMIT', EnforcedLimit: 1, MaxLimit: 10, Overridden: false },
    ],
  });
}

describe('npm run deploy:check', () => {
  beforeEach(() => {
    sns.reset();
    smsVoice.reset();
  });

  it('on a fresh account (SNS): sandbox, default spend limit, no delivery logging, no originator, each with an action', async () => {
    // Prepare
    aFreshAccount();

    // Act
    const findings = await runChecks(clients(), { provider: 'sns', smsSpendAlarmUsd: 0.8 });

    // Assess
    expect(byId(findings, 'sns-sandbox')).toMatchObject({
      status: 'warn',
      action: expect.stringContaining('create-sms-sandbox-phone-number'),
    });
    expect(byId(findings, 'sns-spend-limit')).toMatchObject({
      status: 'warn',
      action: expect.stringContaining('MonthlySpendLimit'),
    });
    expect(byId(findings, 'sns-delivery-logging')).toMatchObject({
      status: 'fail',
      action: expect.stringContaining('DeliveryStatusIAMRole'),
    });
    expect(byId(findings, 'origination-identities')).toMatchObject({
      status: 'warn',
      action: expect.stringContaining('toll-free'),
    });
    expect(byId(findings, 'sns-spend-alarm')).toBeUndefined();
    for (const finding of findings.filter((f) => f.status !== 'ok'))
      expect(finding.action, finding.id).toBeDefined();
    expect(formatFindings(findings)).toContain('FAIL sns-delivery-logging');
  });

  it('on a ready account (SNS): every check ok; warns when the spend alarm is not below the limit', async () => {
    // Prepare
    aFreshAccount();
    sns.on(GetSMSSandboxAccountStatusCommand).resolves({ IsInSandbox: false });
    sns.on(GetSMSAttributesCommand).resolves({
      attributes: {
        MonthlySpendLimit: '50',
        DeliveryStatusIAMRole: 'arn:aws:iam::111111111111:role/sns-sms-logs',
        DeliveryStatusSuccessSamplingRate: '100',
        DefaultSMSType: 'Transactional',
      },
    });
    smsVoice.on(DescribePhoneNumbersCommand).resolves({ PhoneNumbers: [NUMBER] });

    // Act
    const ready = await runChecks(clients(), { provider: 'sns', smsSpendAlarmUsd: 40 });
    const alarmTooHigh = await runChecks(clients(), { provider: 'sns', smsSpendAlarmUsd: 50 });

    // Assess
    expect(ready.map((f) => [f.id, f.status])).toEqual([
      ['sns-sandbox', 'ok'],
      ['sns-spend-limit', 'ok'],
      ['sns-delivery-logging', 'ok'],
      ['origination-identities', 'ok'],
    ]);
    expect(byId(alarmTooHigh, 'sns-spend-alarm')).toMatchObject({
      status: 'warn',
      action: expect.stringContaining('40'),
    });
  });

  it('End User Messaging: account tier, spend limit, and whether the configured originator exists', async () => {
    // Prepare
    aFreshAccount();
    smsVoice.on(DescribePhoneNumbersCommand).resolves({ PhoneNumbers: [NUMBER] });

    // Act
    const known = await runChecks(clients(), {
      provider: 'eum',
      smsSpendAlarmUsd: 0.8,
      originationIdentity: NUMBER.PhoneNumberId,
    });
    const unknown = await runChecks(clients(), {
      provider: 'eum',
      smsSpendAlarmUsd: 0.8,
      originationIdentity: '+15550000000',
    });

    // Assess
    expect(byId(known, 'eum-account-tier')).toMatchObject({ status: 'warn' });
    expect(byId(known, 'eum-spend-limit')).toMatchObject({
      status: 'warn',
      action: expect.stringContaining('10 USD'),
    });
    expect(byId(known, 'origination-identity')).toBeUndefined();
    expect(byId(unknown, 'origination-identity')).toMatchObject({ status: 'fail' });
    expect(sns.calls()).toHaveLength(0);
  });

  it('reports a check it may not read as unknown, with the permissions to add, and goes on', async () => {
    // Prepare
    aFreshAccount();
    sns
      .on(GetSMSSandboxAccountStatusCommand)
      .rejects(Object.assign(new Error('denied'), { name: 'AuthorizationErrorException' }));

    // Act
    const findings = await runChecks(clients(), { provider: 'sns', smsSpendAlarmUsd: 0.8 });

    // Assess
    expect(findings[0]).toMatchObject({
      id: 'sns-sandbox',
      status: 'unknown',
      action: expect.stringContaining('sns:GetSMSSandboxAccountStatus'),
    });
    expect(byId(findings, 'sns-spend-limit')).toBeDefined();
  });

  it.each(['ap-east-1', 'ap-southeast-5', 'ap-southeast-7', 'cn-north-1', 'cn-northwest-1'])(
    'refuses provider eum in %s, where CloudFormation has no AWS::SMSVOICE::* resources, and reads nothing',
    async (region) => {
      // Prepare
      aFreshAccount();

      // Act
      const findings = await runChecks(clients(), { provider: 'eum', smsSpendAlarmUsd: 0.8, region });

      // Assess: one failure (exit code 1) that says why and what to do instead.
      expect(findings).toEqual([
        {
          id: 'eum-region',
          status: 'fail',
          summary: expect.stringContaining(
            `provider eum cannot deploy to ${region}: CloudFormation has no AWS::SMSVOICE::*`,
          ),
          action: expect.stringContaining('-c reset-notifier:provider=sns'),
        },
      ]);
      expect(formatFindings(findings)).toMatch(/^FAIL eum-region: provider eum cannot deploy/);
      expect(smsVoice.calls()).toHaveLength(0);
    },
  );

  it('checks End User Messaging as usual in a region that has its resources, and SNS anywhere', async () => {
    // Prepare
    aFreshAccount();

    // Act
    const eum = await runChecks(clients(), { provider: 'eum', smsSpendAlarmUsd: 0.8, region: 'eu-west-1' });
    const sns = await runChecks(clients(), { provider: 'sns', smsSpendAlarmUsd: 0.8, region: 'ap-east-1' });

    // Assess
    expect(byId(eum, 'eum-region')).toBeUndefined();
    expect(byId(eum, 'eum-account-tier')).toBeDefined();
    expect(byId(sns, 'eum-region')).toBeUndefined();
  });

  it('needs nothing from AWS SMS for twilio', async () => {
    // Act
    const findings = await runChecks(clients(), { provider: 'twilio', smsSpendAlarmUsd: 0.8 });

    // Assess
    expect(findings.map((f) => f.status)).toEqual(['ok']);
    expect(sns.calls()).toHaveLength(0);
    expect(smsVoice.calls()).toHaveLength(0);
  });
});
