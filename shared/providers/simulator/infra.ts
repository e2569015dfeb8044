import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { allowSecretRead } from '../../../infra/constructs/grants.js';
import type { ServiceFunction } from '../../../infra/constructs/service-function.js';
import { isSecretArn, SECRET_ARN_SHAPE } from '../../../infra/external-resources.js';
import { settingsEnv } from '../../settings.js';
import { NO_RESOURCES, type ProviderInfra } from '../infra.js';

/** The provider simulator reachable at `baseUrl` (test environments only). */
export interface SimulatorProviderSettings {
  readonly kind: 'simulator';
  readonly baseUrl: string;
  /**
   * A secret whose `SecretString` is the token the simulator is started with: the public receipts
   * route verifies callbacks with it. Required: the simulator's default token is in this
   * repository, so a route keyed with it would believe anyone (docs/receipts.md#who-is-believed).
   */
  readonly authTokenSecret: ISecret;
}

/** Every function that calls the simulator or checks its callbacks reads the token from its secret. */
const readAuthToken = (scope: Construct, fn: ServiceFunction, provider: SimulatorProviderSettings) =>
  allowSecretRead(scope, fn, provider.authTokenSecret);

/** The simulator, deploy side: Twilio's API shape (status-callback route), its token in a secret. */
export const simulatorInfra: ProviderInfra<SimulatorProviderSettings> = {
  kind: 'simulator',
  lookupsPerSecond: 20,
  statusCallbacks: true,
  fromContext(context) {
    const baseUrl = context.required('simulatorBaseUrl');
    if (context.get('twilioAuthTokenSecretArn') === undefined) {
      throw new Error(
        `context ${context.name('twilioAuthTokenSecretArn')} is required for provider simulator: the public receipts route must not verify callbacks with the simulator's well-known default token (give the secret holding the token the simulator runs with)`,
      );
    }
    return {
      kind: 'simulator',
      baseUrl,
      authTokenSecret: Secret.fromSecretCompleteArn(
        context.stack,
        'SimulatorAuthToken',
        context.required('twilioAuthTokenSecretArn'),
      ),
    };
  },
  validate(provider, fail) {
    if (!/^https?:\/\//.test(provider.baseUrl)) fail('provider (simulator) needs an http(s) baseUrl');
    if ((provider as Partial<SimulatorProviderSettings>).authTokenSecret === undefined) {
      fail(
        "provider (simulator) needs authTokenSecret: the public receipts route must not verify callbacks with the simulator's well-known default token",
      );
    }
  },
  checkExternal(provider, check) {
    check('provider.authTokenSecret', provider.authTokenSecret.secretArn, isSecretArn, SECRET_ARN_SHAPE);
  },
  environment: (_scope, provider) =>
    settingsEnv({
      twilioBaseUrl: provider.baseUrl,
      twilioAuthTokenSecret: provider.authTokenSecret.secretArn,
    }),
  grantSend: readAuthToken,
  grantLookup: readAuthToken,
  grantFeedback: readAuthToken,
  grantReceipts: readAuthToken,
  resources: NO_RESOURCES,
};
