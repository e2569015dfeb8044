/**
 * The receipts function as a deployment composes it (`functions/receipts.ts`: `composeReceipts`
 * over `loadConfig` of the function's environment): who it believes (issue 25 item 6).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { composeReceipts } from '../../../shared/composition/handlers.js';
import { loadConfig } from '../../../shared/config.js';
import { NotificationState as S } from '../../../shared/domain/states.js';
import { TWILIO_RECEIPTS_PATH } from '../../../shared/handlers/receipts-handler.js';
import { twilioSignature } from '../../../shared/providers/twilio/status-callback.js';
import { SETTINGS } from '../../../shared/settings.js';
import { aSentRecord } from '../domain/fixtures.js';
import { seededStore } from '../usecases/seeded-store.js';

const SID = `SM${'d'.repeat(32)}`;
const KEY = 'sms:password_reset:evt-forged';
const DOMAIN = 'abc123.execute-api.eu-west-1.amazonaws.com';
const RECEIPTS_URL = `https://${DOMAIN}${TWILIO_RECEIPTS_PATH}`;
const QUERY = `client_reference=${encodeURIComponent(`${KEY}#1`)}`;

/**
 * The receipts function's environment as the stack wrote it for `provider: simulator` before the
 * simulator needed a secret: no auth token variable, so the settings table's well-known local value.
 */
const SIMULATOR_DEPLOYMENT_ENV = {
  PROVIDER: 'simulator',
  PROVIDER_BASE_URL: 'https://sim.example.test',
  PROVIDER_STATUS_CALLBACK_BASE: RECEIPTS_URL,
  TABLE_NAME: 'reset-notifier',
  AWS_REGION: 'eu-west-1',
};

/** A `failed` callback with a not-sent code (30500): believed, it would make the command send again. */
function aForgedFailure(token: string, accountSid: string): APIGatewayProxyEventV2 {
  const form = new URLSearchParams({
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    ErrorCode: '30500',
    MessageSid: SID,
    MessageStatus: 'failed',
    SmsSid: SID,
    SmsStatus: 'failed',
  });
  return {
    version: '2.0',
    routeKey: `POST ${TWILIO_RECEIPTS_PATH}`,
    rawPath: TWILIO_RECEIPTS_PATH,
    rawQueryString: QUERY,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilioSignature(token, `${RECEIPTS_URL}?${QUERY}`, form),
    },
    requestContext: {
      domainName: DOMAIN,
      http: { method: 'POST', path: TWILIO_RECEIPTS_PATH },
    } as APIGatewayProxyEventV2['requestContext'],
    body: form.toString(),
    isBase64Encoded: false,
  };
}

async function aDeployedReceiptsFunction(env: Record<string, string>) {
  const setup = await seededStore(
    aSentRecord({ idempotencyKey: KEY, provider: { name: 'simulator', messageId: SID } }),
  );
  const rejected: string[] = [];
  const config = loadConfig(env);
  const handler = composeReceipts(config, {
    store: setup.store,
    clock: setup.clock,
    logger: new Logger({ serviceName: 'reset-notifier-test', logLevel: 'SILENT' }),
    countSignatureFailure: () => rejected.push('ReceiptSignatureFailures'),
  });
  return { ...setup, config, handler, rejected };
}

describe('receipts function, deployed shape', () => {
  it('refuses a callback signed with the simulator’s well-known token: 403, counted, the command untouched', async () => {
    // Prepare
    const { handler, store, config, rejected } = await aDeployedReceiptsFunction(SIMULATOR_DEPLOYMENT_ENV);
    const wellKnown = String(SETTINGS.twilioAuthToken.local);

    // Act
    const response = await handler(aForgedFailure(wellKnown, config.providerAccountSid));

    // Assess
    expect(response.statusCode).toBe(403);
    expect(rejected).toEqual(['ReceiptSignatureFailures']);
    expect(store.records()[0]?.state).toBe(S.sent);
  });

  it('believes the same callback signed with a token nobody else knows (control)', async () => {
    // Prepare: the same deployment with a token of its own, given inline
    const { handler, store, config, rejected } = await aDeployedReceiptsFunction({
      ...SIMULATOR_DEPLOYMENT_ENV,
      PROVIDER_AUTH_TOKEN: 'a-token-nobody-else-knows',
    });

    // Act
    const response = await handler(aForgedFailure('a-token-nobody-else-knows', config.providerAccountSid));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(rejected).toEqual([]);
    expect(store.records()[0]?.state).toBe(S.accepted);
  });

  it('does not believe a signed callback for another account: 403, counted, the command untouched', async () => {
    // Prepare
    const { handler, store, rejected } = await aDeployedReceiptsFunction({
      ...SIMULATOR_DEPLOYMENT_ENV,
      PROVIDER_AUTH_TOKEN: 'shared-token',
      PROVIDER_ACCOUNT_SID: `AC${'1'.repeat(32)}`,
    });

    // Act
    const response = await handler(aForgedFailure('shared-token', `AC${'2'.repeat(32)}`));

    // Assess
    expect(response.statusCode).toBe(403);
    expect(rejected).toEqual(['ReceiptSignatureFailures']);
    expect(store.records()[0]?.state).toBe(S.sent);
  });
});
