import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { SNSClient } from '@aws-sdk/client-sns';
import { clientConfig } from '../../composition/clients.js';
import { NO_ABSENCE_PROOF } from '../../domain/provider.js';
import type { ProviderModule } from '../module.js';
import { createSnsProvider, SNS_CLIENT_CONFIG } from './provider.js';

/** Amazon SNS SMS (docs/providers/aws.md): found by id only, absence never provable, no feedback API. */
export const snsModule: ProviderModule<'sns'> = {
  kind: 'sns',
  // Delivery-status logs are sampled, late and carry no reference: they confirm an id, never absence.
  capabilities: NO_ABSENCE_PROOF,
  settings: ['snsSenderId', 'snsDeliveryLogGroups', 'snsEndpoint', 'logsEndpoint'],
  feedback: false,
  // One FilterLogEvents call serves a batch of lookups: the adapter bounds those calls itself.
  boundsOwnLookups: true,
  // A Publish refused because the number opted out of SMS from this account.
  destinationFaults: { sources: ['sns'], parts: { OptedOutException: 'opted_out' } },
  async build(config, { clock }) {
    return createSnsProvider({
      // No SDK retries: a retry after a lost response could send a second SMS.
      sns: new SNSClient({ ...clientConfig(config, config.snsEndpoint), ...SNS_CLIENT_CONFIG }),
      logs: new CloudWatchLogsClient(clientConfig(config, config.logsEndpoint)),
      // The calls the account quota counts are bounded here, where one call serves a whole batch.
      ...(config.providerLookupRatePerSecond === undefined
        ? {}
        : { logsRatePerSecond: config.providerLookupRatePerSecond }),
      logsCallTimeoutMs: config.providerLookupTimeoutMs,
      deliveryLogGroups: [...config.snsDeliveryLogGroups],
      clock,
      ...(config.snsSenderId ? { senderId: config.snsSenderId } : {}),
    });
  },
};
