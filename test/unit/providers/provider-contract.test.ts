/** The provider contract suite (test/support/provider-contract.ts), once per adapter and simulator. */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { PinpointSMSVoiceV2Client } from '@aws-sdk/client-pinpoint-sms-voice-v2';
import { SNSClient } from '@aws-sdk/client-sns';
import { startAwsSimulator } from '../../../local/simulator/aws/server.js';
import { startSimulator } from '../../../local/simulator/server.js';
import { systemClock } from '../../../shared/domain/clock.js';
import { createEumProvider, EUM_CLIENT_CONFIG } from '../../../shared/providers/eum/index.js';
import { createSnsProvider, SNS_CLIENT_CONFIG } from '../../../shared/providers/sns/index.js';
import { createTwilioProvider } from '../../../shared/providers/twilio/index.js';
import { localClient } from '../../support/aws-wire.js';
import { describeProviderContract } from '../../support/provider-contract.js';
import { ACCOUNT_SID, AUTH_TOKEN, FROM } from './support.js';

describeProviderContract('Twilio adapter, Twilio simulator', async () => {
  const sim = await startSimulator({ authToken: AUTH_TOKEN, statusDelaysMs: { sent: 0, delivered: 0 } });
  return {
    provider: createTwilioProvider({
      baseUrl: sim.url,
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      from: FROM,
      statusCallbackBase: `${sim.url}/_callbacks/status`,
      // The most permissive declaration: absence may be proven where the adapter's conditions hold.
      redaction: 'off',
      listLagAllowanceMs: 0,
      clock: systemClock,
    }),
    simUrl: sim.url,
    stop: () => sim.stop(),
  };
});

describeProviderContract('SNS adapter, AWS simulator (real SDK clients)', async () => {
  const sim = await startAwsSimulator({ statusDelaysMs: { sent: 0, delivered: 0 }, logLagMs: 0 });
  return {
    provider: createSnsProvider({
      sns: new SNSClient({ ...localClient(sim.url), ...SNS_CLIENT_CONFIG }),
      logs: new CloudWatchLogsClient(localClient(sim.url)),
      deliveryLogGroups: [sim.logGroups.success, sim.logGroups.failure],
      clock: systemClock,
      batchWindowMs: 0,
    }),
    simUrl: sim.url,
    stop: () => sim.stop(),
  };
});

describeProviderContract('End User Messaging adapter, AWS simulator (real SDK client)', async () => {
  const sim = await startAwsSimulator({ statusDelaysMs: { sent: 0, delivered: 0 }, logLagMs: 0 });
  return {
    provider: createEumProvider({
      client: new PinpointSMSVoiceV2Client({ ...localClient(sim.url), ...EUM_CLIENT_CONFIG }),
      originationIdentity: 'pool-local',
      configurationSetName: 'reset-notifier',
      clock: systemClock,
    }),
    simUrl: sim.url,
    stop: () => sim.stop(),
  };
});
