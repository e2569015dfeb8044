import type { ProviderModule } from '../module.js';
import { buildTwilioProvider, checkTwilioConfig, TWILIO_DESTINATION_FAULTS } from '../twilio/module.js';
import { TWILIO_CAPABILITIES } from '../twilio/provider.js';

/**
 * The provider simulator (`local/simulator/`): Twilio's API at another base URL. It is a provider
 * kind of its own so that a test deployment names it; the adapter is Twilio's. Deployed, its token
 * comes from a secret like Twilio's (docs/receipts.md#who-is-believed).
 */
export const simulatorModule: ProviderModule<'simulator'> = {
  kind: 'simulator',
  capabilities: TWILIO_CAPABILITIES,
  settings: [
    'twilioBaseUrl',
    'twilioAccountSid',
    'twilioAuthToken',
    'twilioAuthTokenSecret',
    'twilioFrom',
    'twilioMessagingService',
    'twilioStatusCallbackBase',
    'twilioRedaction',
    'twilioListLagAllowance',
    'twilioAbsenceProbeTo',
  ],
  feedback: true,
  boundsOwnLookups: false,
  // Its adapter is Twilio's: its details are `twilio:<code>`.
  destinationFaults: TWILIO_DESTINATION_FAULTS,
  check: checkTwilioConfig,
  build: buildTwilioProvider,
};
