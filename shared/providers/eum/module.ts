import { PinpointSMSVoiceV2Client } from '@aws-sdk/client-pinpoint-sms-voice-v2';
import { clientConfig } from '../../composition/clients.js';
import type { ServiceConfig } from '../../config.js';
import type { Clock } from '../../domain/clock.js';
import { InvalidConfigurationError } from '../../domain/errors.js';
import { SETTINGS } from '../../settings.js';
import type { ProviderModule } from '../module.js';
import { createEumProvider, EUM_CAPABILITIES, EUM_CLIENT_CONFIG, type EumProvider } from './provider.js';

/** The End User Messaging adapter for this configuration; throws when a required setting is missing. */
function buildEumProvider(config: ServiceConfig, clock: Clock): EumProvider {
  if (!config.eumOriginationIdentity || !config.eumConfigurationSet) {
    throw new InvalidConfigurationError(
      `${SETTINGS.provider.env}=eum needs ${SETTINGS.eumOriginationIdentity.env} and ${SETTINGS.eumConfigurationSet.env}`,
    );
  }
  return createEumProvider({
    // No SDK retries: a retry after a lost response could send a second SMS.
    client: new PinpointSMSVoiceV2Client({
      ...clientConfig(config, config.eumEndpoint),
      ...EUM_CLIENT_CONFIG,
    }),
    originationIdentity: config.eumOriginationIdentity,
    configurationSetName: config.eumConfigurationSet,
    ...(config.eumMaxPrice ? { maxPrice: config.eumMaxPrice } : {}),
    ...(config.eumProtectConfigurationId ? { protectConfigurationId: config.eumProtectConfigurationId } : {}),
    messageFeedback: config.eumMessageFeedback,
    clock,
  });
}

/** AWS End User Messaging SMS (docs/providers/aws.md): events carry our reference, PutMessageFeedback. */
export const eumModule: ProviderModule<'eum'> = {
  kind: 'eum',
  capabilities: EUM_CAPABILITIES,
  settings: [
    'eumOriginationIdentity',
    'eumConfigurationSet',
    'eumMaxPrice',
    'eumProtectConfigurationId',
    'eumMessageFeedback',
    'eumEventsTopicArn',
    'eumEndpoint',
  ],
  feedback: true,
  boundsOwnLookups: false,
  // The opted-out refusals of SendTextMessage and the TEXT_INVALID delivery event.
  destinationFaults: {
    sources: ['eum'],
    parts: {
      DESTINATION_PHONE_NUMBER_OPTED_OUT: 'opted_out',
      CANNOT_ADD_OPTED_OUT_NUMBER: 'opted_out',
      TEXT_INVALID: 'invalid_number',
    },
  },
  build: async (config, { clock }) => buildEumProvider(config, clock),
};
