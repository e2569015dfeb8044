/** Amazon SNS SMS adapter: the port implementation, its classification table, its delivery-log reads. */
export { classifySnsPublishError, SNS_PUBLISH_ERROR_CLASSIFICATION } from './classification.js';
export { chunkForPatterns, MAX_FILTER_PATTERN_CHARS, messageIdPattern } from './delivery-logs.js';
export {
  createSnsProvider,
  DEFAULT_SNS_BATCH_MAX,
  DEFAULT_SNS_BATCH_WINDOW_MS,
  DEFAULT_SNS_LOGS_CALL_TIMEOUT_MS,
  DEFAULT_SNS_LOGS_RATE_PER_SECOND,
  SNS_CARRIER_ACCEPTED_DETAIL,
  SNS_CLIENT_CONFIG,
  type SnsProvider,
  type SnsProviderOptions,
} from './provider.js';
export { TokenBucket } from './rate-limit.js';
