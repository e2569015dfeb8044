import { parseArgs } from 'node:util';
import { PinpointSMSVoiceV2Client } from '@aws-sdk/client-pinpoint-sms-voice-v2';
import { SNSClient } from '@aws-sdk/client-sns';
import { SETTINGS } from '../shared/settings.js';
import { type CheckOptions, formatFindings, runChecks } from './deploy-check/checks.js';

/**
 * `npm run deploy:check -- --region eu-west-1 [--provider sns|eum|twilio] [--sms-spend-alarm-usd 0.8]
 * [--origination-identity <id>]`: reads the account prerequisites of a deploy (SNS sandbox, spend
 * limit, delivery logging; End User Messaging tier, spend limit, origination identities) with
 * your credentials and says what to do. Read-only. Exit code 1 when a check fails, 2 when none could be read.
 */
const { values } = parseArgs({
  options: {
    region: { type: 'string' },
    provider: { type: 'string', default: 'sns' },
    'sms-spend-alarm-usd': { type: 'string', default: '0.8' },
    'origination-identity': { type: 'string' },
  },
});
// The SDK's own variables, as set (no local default applies to an AWS account check).
const region =
  values.region ?? process.env[SETTINGS.awsRegion.env] ?? process.env[SETTINGS.awsDefaultRegion.env];
if (region === undefined) {
  console.error(`deploy:check needs a region: --region eu-west-1 (or ${SETTINGS.awsRegion.env})`);
  process.exit(2);
}
const provider = values.provider as CheckOptions['provider'];
if (!['sns', 'eum', 'twilio', 'simulator'].includes(provider)) {
  console.error('--provider must be sns, eum, twilio or simulator');
  process.exit(2);
}
const findings = await runChecks(
  { sns: new SNSClient({ region }), smsVoice: new PinpointSMSVoiceV2Client({ region }) },
  {
    provider,
    region,
    smsSpendAlarmUsd: Number(values['sms-spend-alarm-usd']),
    ...(values['origination-identity'] === undefined
      ? {}
      : { originationIdentity: values['origination-identity'] }),
  },
);
console.log(`reset-notifier deploy check (${region}, provider ${provider})\n${formatFindings(findings)}`);
// 1: something will not work; 2: nothing could be read (no credentials, wrong region); 0 otherwise.
process.exitCode = findings.some((f) => f.status === 'fail')
  ? 1
  : findings.every((f) => f.status === 'unknown')
    ? 2
    : 0;
