/**
 * The typed client of reset-notifier's HTTP API: `import { createResetNotifierClient } from
 * 'reset-notifier/client'`. SigV4 with the caller's credentials (default chain), typed views and
 * outcomes, retries that keep the `Idempotency-Key` and stop at the token's expiry.
 */
export {
  type AdmitOutcome,
  type AdmitRequest,
  createResetNotifierClient,
  type EvidenceView,
  type FetchLike,
  type NotificationView,
  type ResetNotifierClient,
  type ResetNotifierClientOptions,
} from './client.js';
export {
  type ApiErrorBody,
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
