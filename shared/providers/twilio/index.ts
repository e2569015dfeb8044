/** Twilio provider adapter: the port implementation, its classification table and callback helpers. */
export {
  classifySend,
  MESSAGE_SID,
  matchSendRule,
  normaliseStatus,
  observeTransportError,
  PERMANENT_TWILIO_CODES,
  parseRetryAfter,
  parseSendBody,
  SEND_CLASSIFICATION,
  type SendObservation,
  type SendRule,
  TWILIO_STATUS_MAP,
  type TwilioBody,
} from './classification.js';
export {
  createTwilioProvider,
  DEFAULT_LOOKUP_MAX_PAGES,
  DEFAULT_LOOKUP_PAGE_SIZE,
  DEFAULT_LOOKUP_TIMEOUT_MS,
  NOT_BEFORE_SKEW_MS,
  TWILIO_CAPABILITIES,
  TWILIO_MAX_VALIDITY_SECONDS,
  type TwilioProviderOptions,
} from './provider.js';
export {
  parseStatusCallback,
  type StatusCallback,
  type StatusCallbackParse,
  twilioSignature,
  verifyTwilioSignature,
} from './status-callback.js';
