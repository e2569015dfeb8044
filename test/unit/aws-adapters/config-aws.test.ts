import { describe, expect, it } from 'vitest';
import { capabilitiesOf, providerFor } from '../../../shared/composition/provider.js';
import { loadConfig } from '../../../shared/config.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import { EUM_CAPABILITIES } from '../../../shared/providers/eum/index.js';
import { ManualClock } from '../../support/manual-clock.js';

const fingerprinter = createFingerprinter(new Uint8Array(32).fill(3));

describe('AWS provider settings', () => {
  it('reads the End User Messaging settings and the local endpoints', () => {
    const config = loadConfig({
      PROVIDER: 'eum',
      EUM_ORIGINATION_IDENTITY: 'arn:aws:sms-voice:eu-west-1:111111111111:pool/pool-1',
      EUM_CONFIGURATION_SET: 'reset-notifier',
      EUM_MAX_PRICE: '0.05',
      EUM_PROTECT_CONFIGURATION_ID: 'protect-1',
      EUM_MESSAGE_FEEDBACK: 'on',
      EUM_EVENTS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111111111111:events',
      EUM_ENDPOINT: 'http://127.0.0.1:4010',
      SNS_ENDPOINT: 'http://127.0.0.1:4010',
      LOGS_ENDPOINT: 'http://127.0.0.1:4010',
    });
    expect(config).toMatchObject({
      provider: 'eum',
      eumOriginationIdentity: 'arn:aws:sms-voice:eu-west-1:111111111111:pool/pool-1',
      eumConfigurationSet: 'reset-notifier',
      eumMaxPrice: '0.05',
      eumProtectConfigurationId: 'protect-1',
      eumMessageFeedback: true,
      eumEventsTopicArn: 'arn:aws:sns:eu-west-1:111111111111:events',
      eumEndpoint: 'http://127.0.0.1:4010',
      snsEndpoint: 'http://127.0.0.1:4010',
      logsEndpoint: 'http://127.0.0.1:4010',
    });
    expect(() => loadConfig({ EUM_MESSAGE_FEEDBACK: 'yes' })).toThrow(/EUM_MESSAGE_FEEDBACK/);
  });

  it('declares the capabilities before the adapter is built, and exposes confirm for eum only', async () => {
    expect(capabilitiesOf('eum')).toBe(EUM_CAPABILITIES);
    expect(capabilitiesOf('sns').absenceProof).toBe('never');
    const eum = providerFor(loadConfig({ PROVIDER: 'eum' }), new ManualClock(), fingerprinter);
    const sns = providerFor(loadConfig({ PROVIDER: 'sns' }), new ManualClock(), fingerprinter);
    expect(sns.confirm).toBeUndefined();
    // Without an origination identity the adapter cannot be built: nothing is sent, nothing thrown.
    expect(await eum.confirm?.('eum-1')).toEqual({ kind: 'failed', detail: 'provider_unavailable' });
    expect(
      await eum.send({
        idempotencyKey: 'k',
        attempt: 1,
        clientReference: 'k#1',
        to: '+14155550123',
        body: 'x',
        validityPeriodSeconds: 60,
        deadline: Date.now() + 1000,
      }),
    ).toEqual({ kind: 'not_sent_retryable', detail: 'provider_unavailable' });
  });
});
