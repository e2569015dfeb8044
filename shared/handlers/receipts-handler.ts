/**
 * `POST /v1/receipts/twilio`: Twilio status callbacks (docs/design.md#http-api). Public (Twilio cannot
 * sign SigV4), so nothing is believed before `X-Twilio-Signature` checks out over the exact URL
 * Twilio requested, with a token nobody else knows, for the configured account
 * (docs/receipts.md#who-is-believed). Refused: 403, nothing read or written, one metric. Valid:
 * 200 whatever the receipt meant (unknown reference, ignored duplicate), so Twilio never retries an
 * expected case; only a store fault is a 5xx (Twilio may retry; the receipt is idempotent).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Clock } from '../domain/clock.js';
import type { DispatchPolicy } from '../domain/policy.js';
import { parseClientReference } from '../domain/provider.js';
import {
  callbackAccountSid,
  parseStatusCallback,
  verifyTwilioSignature,
} from '../messages/twilio-status-callback.js';
import type { NotificationStore } from '../ports/store.js';
import { type IngestReceiptDeps, ingestReceipt, type ReceiptResult } from '../usecases/ingest-receipt.js';

/** The route, as API Gateway and the local runtime match it. */
export const TWILIO_RECEIPTS_PATH = '/v1/receipts/twilio';
/** The metric a rejected signature counts on (the deploy stack alarms on it). */
export const RECEIPT_SIGNATURE_FAILURES = 'ReceiptSignatureFailures';
/** Twilio's form posts are small; anything bigger is not a status callback. */
export const MAX_RECEIPT_BYTES = 16 * 1024;

export interface TwilioReceiptsDeps {
  readonly store: NotificationStore;
  readonly clock: Clock;
  readonly policy: DispatchPolicy;
  /** With more than one provider: which attempts Twilio's callbacks may settle (`IngestReceiptDeps`). */
  readonly receiptsSettle?: NonNullable<IngestReceiptDeps['receiptsSettle']>;
  /** The auth token the signature is keyed with (read from the secret once per container). */
  readonly authToken: () => Promise<string>;
  /**
   * Tokens anyone can know (the simulator's default): a signature keyed with one proves nothing, so
   * while the token is one of them every callback is refused, unless {@link allowWellKnownToken}.
   * The empty token is always refused.
   */
  readonly wellKnownTokens: readonly string[];
  /** Set by the local stack only, whose built-in simulator signs with the well-known token. */
  readonly allowWellKnownToken?: boolean;
  /** The configured account (`PROVIDER_ACCOUNT_SID`): a callback naming another `AccountSid` is refused. */
  readonly accountSid: string;
  /**
   * The public base we gave Twilio (`PROVIDER_STATUS_CALLBACK_BASE`): its scheme and host are the
   * ones Twilio signed. Behind API Gateway without it, `https://` + the request's domain name.
   */
  readonly publicBase?: string;
  /** Counts one refused callback: signature, token or account (EMF metric {@link RECEIPT_SIGNATURE_FAILURES}). */
  readonly countSignatureFailure: () => void;
  /** One structured line per receipt: ids, codes and outcomes only (never a number or a body). */
  readonly log: (message: string, fields: Readonly<Record<string, unknown>>) => void;
  /** Receives unexpected errors (a store fault, an unreadable secret); never request bodies. */
  readonly logError: (error: unknown) => void;
}

type Result = APIGatewayProxyStructuredResultV2;

const empty = (statusCode: number): Result => ({
  statusCode,
  // An empty TwiML-free answer: Twilio reads only the status.
  headers: { 'content-type': 'text/plain', 'cache-control': 'no-store' },
  body: '',
});

/**
 * The URLs Twilio may have signed for this request, most likely first: the configured public base's
 * origin, then the request's own domain over https. Path and query exactly as requested (raw), never
 * rebuilt from parsed parameters, whose order and encoding are lost.
 */
export function signedUrlCandidates(event: APIGatewayProxyEventV2, publicBase?: string): string[] {
  const pathAndQuery = `${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
  const origins: string[] = [];
  if (publicBase !== undefined && URL.canParse(publicBase)) origins.push(new URL(publicBase).origin);
  const domain = event.requestContext.domainName;
  if (domain) origins.push(`${event.headers['x-forwarded-proto'] ?? 'https'}://${domain}`);
  return [...new Set(origins)].map((origin) => `${origin}${pathAndQuery}`);
}

/** The receipts handler (API Gateway HTTP API payload 2.0). */
export function createTwilioReceiptsHandler(deps: TwilioReceiptsDeps) {
  const handle = async (event: APIGatewayProxyEventV2): Promise<Result> => {
    if (event.requestContext.http.method.toUpperCase() !== 'POST') return empty(405);
    const raw = event.body ?? '';
    const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
    if (bytes.byteLength > MAX_RECEIPT_BYTES) return empty(413);
    const body = bytes.toString('utf8');
    const params = new URLSearchParams(body);
    const signature = header(event, 'x-twilio-signature');
    const token = await deps.authToken();
    const refused = refusal(deps, token) ?? signatureRefusal(deps, event, params, token, signature);
    if (refused !== undefined) {
      deps.countSignatureFailure();
      deps.log('receipt rejected', { provider: 'twilio', why: refused });
      return empty(403);
    }
    const parsed = parseStatusCallback({ body, query: event.rawQueryString });
    if (!parsed.ok) {
      deps.log('receipt ignored', { provider: 'twilio', why: parsed.reason });
      return empty(200);
    }
    const callback = parsed.value;
    const dedupeToken = header(event, 'i-twilio-idempotency-token');
    let result: ReceiptResult;
    if (callback.clientReference === null || !namesACommand(callback.clientReference)) {
      result = { kind: 'unknown_reference' };
    } else {
      result = await ingestReceipt(deps, {
        provider: 'twilio',
        clientReference: callback.clientReference,
        messageId: callback.messageSid,
        status: callback.status,
        providerStatus: callback.providerStatus,
        ...(callback.detail === undefined ? {} : { detail: callback.detail }),
        ...(dedupeToken === undefined ? {} : { dedupeToken }),
      });
    }
    deps.log('receipt', {
      provider: 'twilio',
      message_id: callback.messageSid,
      client_reference: callback.clientReference,
      provider_status: callback.providerStatus,
      error_code: callback.errorCode,
      result: result.kind,
      ...('to' in result ? { to: result.to } : {}),
      ...('why' in result ? { why: result.why } : {}),
      ...(dedupeToken === undefined ? {} : { dedupe_token: dedupeToken }),
    });
    return empty(200);
  };
  return async (event: APIGatewayProxyEventV2): Promise<Result> => {
    try {
      return await handle(event);
    } catch (error) {
      // A store fault or an unreadable secret: nothing internal leaks; Twilio may retry, harmlessly.
      deps.logError(error);
      return empty(500);
    }
  };
}

type Refusal = 'well_known_token' | 'no_signature' | 'bad_signature' | 'no_account' | 'other_account';

/** Why no callback can be believed with this token, if so: one anyone can know (outside the local stack). */
function refusal(deps: TwilioReceiptsDeps, token: string): Refusal | undefined {
  const wellKnown =
    token === '' || (deps.wellKnownTokens.includes(token) && deps.allowWellKnownToken !== true);
  return wellKnown ? 'well_known_token' : undefined;
}

/**
 * Why this callback is not believed, if so: its signature does not verify, or it was signed for
 * another account than the configured one (Twilio signs every account's callbacks the same way).
 */
function signatureRefusal(
  deps: TwilioReceiptsDeps,
  event: APIGatewayProxyEventV2,
  params: URLSearchParams,
  token: string,
  signature: string | undefined,
): Refusal | undefined {
  const valid = signedUrlCandidates(event, deps.publicBase).some((url) =>
    verifyTwilioSignature(token, url, params, signature),
  );
  if (!valid) return signature ? 'bad_signature' : 'no_signature';
  const account = callbackAccountSid(params);
  if (account === null || account === '') return 'no_account';
  return deps.accountSid !== '' && account === deps.accountSid ? undefined : 'other_account';
}

/**
 * Whether a reference's key is one a command can have. Any other (over 2,048 bytes, which the
 * store refuses, or with a `#`, naming the table's own items) is unknown without a read.
 */
function namesACommand(reference: string): boolean {
  return parseClientReference(reference) !== undefined;
}

function header(event: APIGatewayProxyEventV2, name: string): string | undefined {
  // API Gateway lower-cases header names in payload 2.0; a direct invoke may not.
  const direct = event.headers[name];
  if (direct !== undefined) return direct;
  const found = Object.entries(event.headers).find(([key]) => key.toLowerCase() === name);
  return found?.[1];
}
