import { settingsEnv } from '../../settings.js';
import { NO_GRANT, NO_RESOURCES, type ProviderInfra } from '../infra.js';

/** The provider simulator reachable at `baseUrl` (test environments only; no secret needed). */
export interface SimulatorProviderSettings {
  readonly kind: 'simulator';
  readonly baseUrl: string;
}

/** The simulator, deploy side: Twilio's API shape (status-callback route), nothing to grant. */
export const simulatorInfra: ProviderInfra<SimulatorProviderSettings> = {
  kind: 'simulator',
  lookupsPerSecond: 20,
  statusCallbacks: true,
  fromContext: (context) => ({ kind: 'simulator', baseUrl: context.required('simulatorBaseUrl') }),
  validate(provider, fail) {
    if (!/^https?:\/\//.test(provider.baseUrl)) fail('provider (simulator) needs an http(s) baseUrl');
  },
  environment: (_scope, provider) => settingsEnv({ twilioBaseUrl: provider.baseUrl }),
  grantSend: NO_GRANT,
  grantLookup: NO_GRANT,
  grantFeedback: NO_GRANT,
  grantReceipts: NO_GRANT,
  resources: NO_RESOURCES,
};
