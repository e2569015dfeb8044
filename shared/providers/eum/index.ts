/** AWS End User Messaging SMS adapter: the port implementation, its classification table, its events. */
export {
  classifyEumSendError,
  EUM_SEND_ERROR_CLASSIFICATION,
  type EumErrorCategory,
  type EumErrorClassification,
} from './classification.js';
export {
  EUM_EVENT_STATUS,
  type EumEvent,
  type EumEventParse,
  type EumEventRejection,
  parseEumNotification,
  type SnsNotification,
} from './events.js';
export {
  type FailedInvocationRecord,
  isFailedInvocationRecord,
  isSqsRecordsEvent,
  type KeptReceipt,
  keptReceiptOf,
  keptReceiptsOf,
  keptReceiptsOfDeadLetters,
  type SqsRecordsEvent,
} from './kept-receipts.js';
export {
  createEumProvider,
  EUM_CAPABILITIES,
  EUM_CLIENT_CONFIG,
  EUM_CONTEXT_REFERENCE_KEY,
  EUM_MAX_TTL_SECONDS,
  EUM_MIN_TTL_SECONDS,
  type EumProvider,
  type EumProviderOptions,
  type FeedbackOutcome,
} from './provider.js';
export {
  createEumReceiptsHandler,
  type EumReceiptDeps,
  type EumReceiptReport,
  ingestEumNotification,
  type KeepReceipts,
  redriveKeptReceipts,
  type SnsLambdaEvent,
} from './receipts.js';
