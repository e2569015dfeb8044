/**
 * The typed client of reset-notifier's HTTP API: `import { createResetNotifierClient } from
 * 'reset-notifier/client'` (built to dist/client by `npm run build:client`; docs/client.md).
 * SigV4 with the caller's credentials (default chain), typed views and outcomes, retries that keep
 * the `Idempotency-Key` and end within the call's time budget and before the token's expiry.
 */
export {
  type AdmitOutcome,
  type CallOptions,
  type ConfirmOutcome,
  createResetNotifierClient,
  type FetchLike,
  type ResetNotifierClient,
  type ResetNotifierClientOptions,
  type Unavailable,
} from './client.js';
export {
  CredentialsError,
  InvalidArgumentError,
  ResetNotifierClientError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from './errors.js';
export {
  createSigner,
  type OutgoingRequest,
  type RequestSigner,
  type SigningCredentials,
  type SigningOptions,
  signedHeaders,
  signerInit,
} from './signing.js';
export type { AdmitRequest, ApiErrorBody, EvidenceView, NotificationView } from './wire.js';
