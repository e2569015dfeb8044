import { Duration } from 'aws-cdk-lib';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { allowSecretRead } from '../../../infra/constructs/grants.js';
import type { ServiceFunction } from '../../../infra/constructs/service-function.js';
import { isSecretArn, SECRET_ARN_SHAPE } from '../../../infra/external-resources.js';
import { settingsEnv } from '../../settings.js';
import { NO_RESOURCES, type ProviderInfra } from '../infra.js';

/** Twilio (or any Twilio-compatible endpoint). The auth token stays in Secrets Manager. */
export interface TwilioProviderSettings {
  readonly kind: 'twilio';
  readonly accountSid: string;
  /** The sending number or messaging service, as Twilio expects it in `From`. */
  readonly from: string;
  /** A secret whose `SecretString` is the auth token; sender and reconciler may read it. */
  readonly authTokenSecret: ISecret;
  /** @default 'https://api.twilio.com' */
  readonly baseUrl?: string;
  /** A messaging service (`MG...`) sent with every message; the absence probe needs one. @default - none */
  readonly messagingServiceSid?: string;
  /**
   * What the account declares about Message Redaction (`PROVIDER_REDACTION`); `off` lets the
   * reconciler prove absence and resend a send that never reached Twilio. @default 'on'
   */
  readonly redaction?: 'on' | 'off';
  /**
   * A number the account owns (`PROVIDER_ABSENCE_PROBE_TO`): with `messagingServiceSid` and
   * `redaction: 'off'`, absence is provable in a quiet account (docs/providers/twilio.md). @default - none
   */
  readonly absenceProbeTo?: string;
  /**
   * How long a new message may be missing from Twilio's list reads (`PROVIDER_LIST_LAG_ALLOWANCE_SECONDS`):
   * an absence proof waits this long after the attempt (docs/providers/twilio.md). @default 60 seconds
   */
  readonly listLagAllowance?: Duration;
}

/** Every function that calls Twilio reads the auth token from its secret. */
const readAuthToken = (scope: Construct, fn: ServiceFunction, provider: TwilioProviderSettings) =>
  allowSecretRead(scope, fn, provider.authTokenSecret);

/** Twilio, deploy side: the auth token secret, the public status-callback route. */
export const twilioInfra: ProviderInfra<TwilioProviderSettings> = {
  kind: 'twilio',
  lookupsPerSecond: 20,
  statusCallbacks: true,
  fromContext(context) {
    const baseUrl = context.get('twilioBaseUrl');
    const messagingServiceSid = context.get('twilioMessagingServiceSid');
    const redaction = context.get('twilioRedaction');
    const absenceProbeTo = context.get('twilioAbsenceProbeTo');
    const listLagSeconds = context.value('twilioListLagAllowanceSeconds');
    return {
      kind: 'twilio',
      accountSid: context.required('twilioAccountSid'),
      from: context.required('twilioFrom'),
      authTokenSecret: Secret.fromSecretCompleteArn(
        context.stack,
        'TwilioAuthToken',
        context.required('twilioAuthTokenSecretArn'),
      ),
      ...(baseUrl === undefined ? {} : { baseUrl }),
      ...(messagingServiceSid === undefined ? {} : { messagingServiceSid }),
      ...(redaction === undefined ? {} : { redaction: redaction as 'on' | 'off' }),
      ...(listLagSeconds === undefined ? {} : { listLagAllowance: Duration.millis(listLagSeconds * 1000) }),
      ...(absenceProbeTo === undefined ? {} : { absenceProbeTo }),
    };
  },
  validate(provider, fail) {
    if (provider.accountSid === '' || provider.from === '') {
      fail('provider (twilio) needs accountSid and from');
    }
    if (
      provider.absenceProbeTo !== undefined &&
      (provider.messagingServiceSid === undefined || provider.redaction !== 'off')
    ) {
      // Without a messaging service Twilio drops the schedule and sends the probe at once; with
      // redaction on no absence is ever proven, so the probe would only cost requests.
      fail('provider (twilio) absenceProbeTo needs messagingServiceSid and redaction off');
    }
  },
  checkExternal(provider, check) {
    check('provider.authTokenSecret', provider.authTokenSecret.secretArn, isSecretArn, SECRET_ARN_SHAPE);
  },
  environment: (_scope, provider) =>
    settingsEnv({
      twilioBaseUrl: provider.baseUrl ?? 'https://api.twilio.com',
      twilioAccountSid: provider.accountSid,
      twilioFrom: provider.from,
      twilioAuthTokenSecret: provider.authTokenSecret.secretArn,
      twilioRedaction: provider.redaction ?? 'on',
      twilioMessagingService: provider.messagingServiceSid,
      twilioAbsenceProbeTo: provider.absenceProbeTo,
      twilioListLagAllowance:
        provider.listLagAllowance === undefined
          ? undefined
          : provider.listLagAllowance.toMilliseconds() / 1000,
    }),
  grantSend: readAuthToken,
  grantLookup: readAuthToken,
  // Confirmations go to Twilio Message Feedback with the account's credentials.
  grantFeedback: readAuthToken,
  // The receipts function checks X-Twilio-Signature with the auth token.
  grantReceipts: readAuthToken,
  resources: NO_RESOURCES,
};
