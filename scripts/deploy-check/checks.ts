import {
  DescribeAccountAttributesCommand,
  DescribePhoneNumbersCommand,
  DescribePoolsCommand,
  DescribeSenderIdsCommand,
  DescribeSpendLimitsCommand,
  type PinpointSMSVoiceV2Client,
} from '@aws-sdk/client-pinpoint-sms-voice-v2';
import {
  GetSMSAttributesCommand,
  GetSMSSandboxAccountStatusCommand,
  ListSMSSandboxPhoneNumbersCommand,
  type SNSClient,
} from '@aws-sdk/client-sns';
import { SETTINGS } from '../../shared/settings.js';

/**
 * The account prerequisites `npm run deploy:check` can read with the SDK, each with what to do.
 * Nothing here writes: it reads SNS SMS settings and End User Messaging SMS resources, and reports.
 */

/** `ok`: ready; `warn`: deploys and runs, but limited; `fail`: SMS will not go out; `unknown`: could not read. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'unknown';

/** One line of the report: what was read, how it stands, and what to do about it. */
export interface Finding {
  readonly id: string;
  readonly status: CheckStatus;
  readonly summary: string;
  /** What to do, when the status is not `ok`. */
  readonly action?: string;
}

/** What the stack will be deployed with, as far as the checks need it. */
export interface CheckOptions {
  /** The provider the stack will use (context `reset-notifier:provider`). */
  readonly provider: 'sns' | 'eum' | 'twilio' | 'simulator';
  /** The stack's SMS spend alarm threshold (`smsSpendAlarmUsd`), compared with the account's limit. */
  readonly smsSpendAlarmUsd: number;
  /** An origination identity the stack is told to use (phone number, id, ARN, sender id or pool). */
  readonly originationIdentity?: string;
  /** The region the stack goes to (the `eum` variant cannot deploy everywhere). */
  readonly region?: string;
}

/**
 * Regions where CloudFormation has no `AWS::SMSVOICE::*` resource types (End User Messaging SMS's
 * configuration set and its event destination), so the `eum` variant's stack cannot be created:
 * Asia Pacific (Hong Kong), (Malaysia), (Thailand) and the China regions (the issue 22 review, from
 * CloudFormation's resource-type availability by region; not re-read here: check it again if a
 * region is added).
 */
const REGIONS_WITHOUT_SMSVOICE_RESOURCES: readonly string[] = [
  'ap-east-1',
  'ap-southeast-5',
  'ap-southeast-7',
  'cn-north-1',
  'cn-northwest-1',
];

/** Whether the stack's `AWS::SMSVOICE::*` resources can be created in `region` (every `cn-` region cannot). */
function hasSmsVoiceResources(region: string): boolean {
  return !region.startsWith('cn-') && !REGIONS_WITHOUT_SMSVOICE_RESOURCES.includes(region);
}

/** The SDK clients the checks read with (mocked in tests). */
export interface CheckClients {
  readonly sns: SNSClient;
  readonly smsVoice: PinpointSMSVoiceV2Client;
}

/** Runs every check that applies to the provider; never throws (a failed read is an `unknown` finding). */
export async function runChecks(clients: CheckClients, options: CheckOptions): Promise<Finding[]> {
  if (options.provider === 'twilio' || options.provider === 'simulator') {
    return [
      {
        id: 'provider',
        status: 'ok',
        summary: `provider ${options.provider}: no AWS SMS prerequisite (the Twilio auth token secret must exist; the stack validates its ARN)`,
      },
    ];
  }
  if (options.provider === 'eum' && options.region !== undefined && !hasSmsVoiceResources(options.region)) {
    // Nothing else matters: the stack itself cannot be created here.
    return [
      {
        id: 'eum-region',
        status: 'fail',
        summary: `provider eum cannot deploy to ${options.region}: CloudFormation has no AWS::SMSVOICE::* resources there (the stack's End User Messaging configuration set and event destination)`,
        action: `Deploy the eum variant to a region that has them, or use provider sns or twilio in ${options.region} (-c reset-notifier:provider=sns).`,
      },
    ];
  }
  const checks =
    options.provider === 'sns'
      ? [snsSandbox, snsSpendLimit, snsDeliveryLogging, originationIdentities]
      : [eumAccountTier, eumSpendLimit, originationIdentities];
  const findings: Finding[] = [];
  for (const check of checks) {
    try {
      findings.push(...(await check(clients, options)));
    } catch (error) {
      findings.push(unreadable(check.name, error));
    }
  }
  return findings;
}

type Check = (clients: CheckClients, options: CheckOptions) => Promise<Finding[]>;

const snsSandbox: Check = async ({ sns }) => {
  const status = await sns.send(new GetSMSSandboxAccountStatusCommand({}));
  if (status.IsInSandbox !== true) {
    return [{ id: 'sns-sandbox', status: 'ok', summary: 'SNS SMS is out of the sandbox' }];
  }
  const numbers = await sns.send(new ListSMSSandboxPhoneNumbersCommand({}));
  const verified = (numbers.PhoneNumbers ?? []).filter((n) => n.Status === 'Verified').length;
  return [
    {
      id: 'sns-sandbox',
      status: 'warn',
      summary: `SNS SMS is in the sandbox: only verified destination numbers receive messages (${verified} verified)`,
      action:
        'For a test, verify your number: aws sns create-sms-sandbox-phone-number --phone-number +1... then verify-sms-sandbox-phone-number. For production, request to leave the sandbox (SNS console > Text messaging (SMS) > Sandbox > Exit sandbox).',
    },
  ];
};

const snsSpendLimit: Check = async ({ sns }, options) => {
  const { attributes = {} } = await sns.send(
    new GetSMSAttributesCommand({ attributes: ['MonthlySpendLimit'] }),
  );
  const limit = Number(attributes.MonthlySpendLimit ?? '1');
  const findings: Finding[] = [];
  if (limit <= 1) {
    findings.push({
      id: 'sns-spend-limit',
      status: 'warn',
      summary: `SNS SMS monthly spend limit is ${limit} USD (the default): SNS stops sending when it is reached`,
      action:
        'Request a higher limit (Service Quotas / support case "SNS Text Messaging"), then: aws sns set-sms-attributes --attributes MonthlySpendLimit=<USD>.',
    });
  } else {
    findings.push({
      id: 'sns-spend-limit',
      status: 'ok',
      summary: `SNS SMS monthly spend limit is ${limit} USD`,
    });
  }
  if (options.smsSpendAlarmUsd >= limit) {
    findings.push({
      id: 'sns-spend-alarm',
      status: 'warn',
      summary: `the spend alarm (${options.smsSpendAlarmUsd} USD) is not below the limit (${limit} USD): it would fire only after sending stopped`,
      action: `Deploy with smsSpendAlarmUsd at about 80 % of the limit (${Math.round(limit * 80) / 100}).`,
    });
  }
  return findings;
};

const snsDeliveryLogging: Check = async ({ sns }) => {
  const { attributes = {} } = await sns.send(
    new GetSMSAttributesCommand({
      attributes: ['DeliveryStatusIAMRole', 'DeliveryStatusSuccessSamplingRate', 'DefaultSMSType'],
    }),
  );
  const findings: Finding[] = [];
  const rate = Number(attributes.DeliveryStatusSuccessSamplingRate ?? '0');
  if (!attributes.DeliveryStatusIAMRole || rate < 100) {
    findings.push({
      id: 'sns-delivery-logging',
      status: 'fail',
      summary: `SNS SMS delivery-status logging is ${attributes.DeliveryStatusIAMRole ? `on at ${rate} % success sampling` : 'off'}: the reconciler cannot settle unknown outcomes without it`,
      action:
        'Create a role SNS can assume with logs:CreateLogGroup/CreateLogStream/PutLogEvents, then: aws sns set-sms-attributes --attributes DeliveryStatusIAMRole=<role ARN>,DeliveryStatusSuccessSamplingRate=100. The log lines contain destination numbers: give the log groups a retention.',
    });
  } else {
    findings.push({
      id: 'sns-delivery-logging',
      status: 'ok',
      summary: 'SNS SMS delivery-status logging is on at 100 %',
    });
  }
  if (attributes.DefaultSMSType !== 'Transactional') {
    findings.push({
      id: 'sns-default-type',
      status: 'ok',
      summary: `account default SMS type is ${attributes.DefaultSMSType ?? 'Promotional (unset)'}; the sender sets Transactional on every message`,
    });
  }
  return findings;
};

const eumAccountTier: Check = async ({ smsVoice }) => {
  const out = await smsVoice.send(new DescribeAccountAttributesCommand({}));
  const tier = out.AccountAttributes?.find((a) => a.Name === 'ACCOUNT_TIER')?.Value ?? 'unknown';
  if (tier === 'PRODUCTION')
    return [
      { id: 'eum-account-tier', status: 'ok', summary: 'End User Messaging SMS account is in production' },
    ];
  return [
    {
      id: 'eum-account-tier',
      status: 'warn',
      summary: `End User Messaging SMS account tier is ${tier}: only verified destination numbers receive messages`,
      action:
        'Verify test numbers (aws pinpoint-sms-voice-v2 create-verified-destination-number), or request production access in the End User Messaging SMS console.',
    },
  ];
};

const eumSpendLimit: Check = async ({ smsVoice }, options) => {
  const out = await smsVoice.send(new DescribeSpendLimitsCommand({}));
  const text = out.SpendLimits?.find((l) => l.Name === 'TEXT_MESSAGE_MONTHLY_SPEND_LIMIT');
  const limit = text?.EnforcedLimit ?? 1;
  const findings: Finding[] = [
    limit <= 1
      ? {
          id: 'eum-spend-limit',
          status: 'warn',
          summary: `End User Messaging text spend limit is ${limit} USD: sending stops when it is reached`,
          action: `Raise it up to the approved maximum (${text?.MaxLimit ?? '?'} USD): aws pinpoint-sms-voice-v2 set-text-message-spend-limit-override --monthly-limit <USD>; above that, open a quota case.`,
        }
      : {
          id: 'eum-spend-limit',
          status: 'ok',
          summary: `End User Messaging text spend limit is ${limit} USD`,
        },
  ];
  if (options.smsSpendAlarmUsd >= limit) {
    findings.push({
      id: 'eum-spend-alarm',
      status: 'warn',
      summary: `the spend alarm (${options.smsSpendAlarmUsd} USD) is not below the limit (${limit} USD)`,
      action: `Deploy with smsSpendAlarmUsd at about 80 % of the limit (${Math.round(limit * 80) / 100}).`,
    });
  }
  return findings;
};

/** Phone numbers, sender ids and pools of End User Messaging (SNS sends from them too). */
const originationIdentities: Check = async ({ smsVoice }, options) => {
  const [numbers, senderIds, pools] = await Promise.all([
    smsVoice.send(new DescribePhoneNumbersCommand({})),
    smsVoice.send(new DescribeSenderIdsCommand({})),
    smsVoice.send(new DescribePoolsCommand({})),
  ]);
  const active = (numbers.PhoneNumbers ?? []).filter((n) => n.Status === 'ACTIVE');
  const ids = [
    ...active.flatMap((n) => [n.PhoneNumber, n.PhoneNumberId, n.PhoneNumberArn]),
    ...(senderIds.SenderIds ?? []).flatMap((s) => [s.SenderId, s.SenderIdArn]),
    ...(pools.Pools ?? []).flatMap((p) => [p.PoolId, p.PoolArn]),
  ].filter((v): v is string => typeof v === 'string');
  const findings: Finding[] = [];
  const count = `${active.length} active phone number(s), ${senderIds.SenderIds?.length ?? 0} sender id(s), ${pools.Pools?.length ?? 0} pool(s)`;
  if (active.length === 0 && (senderIds.SenderIds ?? []).length === 0) {
    findings.push({
      id: 'origination-identities',
      status: options.provider === 'eum' ? 'fail' : 'warn',
      summary: `no origination identity (${count})`,
      action:
        'Destinations in the US, Canada and many other countries need one: request a toll-free or 10DLC number (End User Messaging SMS console > Phone numbers > Request originator) and complete its registration; registration takes days.',
    });
  } else {
    findings.push({ id: 'origination-identities', status: 'ok', summary: count });
  }
  if (options.originationIdentity !== undefined && !ids.includes(options.originationIdentity)) {
    findings.push({
      id: 'origination-identity',
      status: 'fail',
      summary: `origination identity "${options.originationIdentity}" is not an active number, sender id or pool of this account and region`,
      action: 'Check the region and the value (aws pinpoint-sms-voice-v2 describe-phone-numbers).',
    });
  }
  return findings;
};

function unreadable(check: string, error: unknown): Finding {
  const name = error instanceof Error ? error.name : 'Error';
  const denied = /AccessDenied|UnauthorizedOperation|AuthorizationError/.test(name);
  const noCredentials = name === 'CredentialsProviderError';
  return {
    id: check.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`),
    status: 'unknown',
    summary: `could not read (${name})`,
    action: denied
      ? 'Run with credentials that may read SNS SMS attributes (sns:GetSMSAttributes, sns:GetSMSSandboxAccountStatus, sns:ListSMSSandboxPhoneNumbers) and End User Messaging (sms-voice:Describe*).'
      : noCredentials
        ? `No AWS credentials found: aws configure / aws sso login, or set ${SETTINGS.awsProfile.env}, then run again.`
        : 'Check the region and your network, then run again.',
  };
}

/** The report as text, one line per finding plus its action. */
export function formatFindings(findings: readonly Finding[]): string {
  const mark: Record<CheckStatus, string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', unknown: '??  ' };
  return findings
    .map(
      (f) =>
        `${mark[f.status]} ${f.id}: ${f.summary}${f.action === undefined ? '' : `\n     -> ${f.action}`}`,
    )
    .join('\n');
}
