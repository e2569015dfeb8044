import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { type MessageAttributeValue, PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { Clock } from '../../domain/clock.js';
import { InvalidConfigurationError } from '../../domain/errors.js';
import { NO_ABSENCE_PROOF, type SendOutcome, type SmsProvider } from '../../domain/provider.js';
import { classifySnsPublishError } from './classification.js';
import { lookupDelivery } from './delivery-logs.js';

export { classifySnsPublishError, SNS_PUBLISH_ERROR_CLASSIFICATION } from './classification.js';

/**
 * The SNS client must not retry `Publish` by itself: a retry after a lost response can deliver a
 * second SMS. Create it with these settings (`new SNSClient({ ...SNS_CLIENT_CONFIG })`);
 * {@link createSnsProvider} refuses a client that retries.
 */
export const SNS_CLIENT_CONFIG = { maxAttempts: 1 } as const;

/** Default time a missing delivery-status log line is not yet taken as "no message". */
export const DEFAULT_SNS_LOG_SETTLE_MS = 10 * 60_000;
const MAX_LOG_PAGES = 20;

/** Options of {@link createSnsProvider}. */
export interface SnsProviderOptions {
  /** Created with {@link SNS_CLIENT_CONFIG} (no SDK retries). */
  readonly sns: SNSClient;
  readonly logs: CloudWatchLogsClient;
  /**
   * The SNS SMS delivery-status log groups, usually `sns/<region>/<account>/DirectPublishToPhoneNumber`
   * and the same name with `/Failure`.
   */
  readonly deliveryLogGroups: readonly string[];
  /** The destination fingerprint (`fp1:...`): delivery logs are matched on it, never on the number. */
  readonly fingerprint: (e164: string) => string;
  readonly clock: Clock;
  /** `AWS.SNS.SMS.SenderID`, where the destination country supports sender ids. */
  readonly senderId?: string;
  /** How long after an attempt an absence from the logs stays inconclusive. Default 10 minutes. */
  readonly logSettleMs?: number;
}

/**
 * Amazon SNS SMS (`Publish` with `PhoneNumber`, transactional). Outcomes are classified by
 * {@link SNS_PUBLISH_ERROR_CLASSIFICATION}; lookups read the delivery-status logs.
 *
 * SNS has no validity-period attribute: `validityPeriodSeconds` cannot be passed on, so with SNS
 * the token's expiry is enforced only before dispatch (the sender's deadline check), not by the
 * provider during delivery. SNS has no client reference either: an attempt that timed out before
 * an id came back is found by destination fingerprint and time window.
 */
export function createSnsProvider(options: SnsProviderOptions): SmsProvider {
  const { sns, clock } = options;
  let retryCheck: Promise<void> | undefined;

  const ensureNoSdkRetries = async () => {
    const maxAttempts = await sns.config.maxAttempts();
    if (maxAttempts !== 1) {
      throw new InvalidConfigurationError(
        `the SNS client must be created with maxAttempts: 1 (got ${maxAttempts}); SDK retries can send an SMS twice`,
      );
    }
  };

  return {
    name: 'sns',
    // Delivery-status logs are sampled, late and carry no reference: they confirm an id, never absence.
    capabilities: NO_ABSENCE_PROOF,

    async send(command): Promise<SendOutcome> {
      retryCheck ??= ensureNoSdkRetries();
      await retryCheck;
      const remainingMs = command.deadline - clock.now();
      if (remainingMs <= 0) return { kind: 'not_sent_retryable', detail: 'sns:deadline_passed' };

      const attributes: Record<string, MessageAttributeValue> = {
        'AWS.SNS.SMS.SMSType': { DataType: 'String', StringValue: 'Transactional' },
      };
      if (options.senderId !== undefined) {
        attributes['AWS.SNS.SMS.SenderID'] = { DataType: 'String', StringValue: options.senderId };
      }
      const publish = new PublishCommand({
        PhoneNumber: command.to,
        Message: command.body,
        MessageAttributes: attributes,
      });

      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      // The race returns at the deadline even if the transport ignores the abort signal.
      const deadline = new Promise<'deadline'>((resolve) => {
        timer = setTimeout(() => {
          abort.abort();
          resolve('deadline');
        }, remainingMs);
      });
      try {
        const result = await Promise.race([sns.send(publish, { abortSignal: abort.signal }), deadline]);
        if (result === 'deadline') return { kind: 'unknown', detail: 'sns:deadline_reached', timedOut: true };
        if (result.MessageId === undefined || result.MessageId === '') {
          return { kind: 'unknown', detail: 'sns:no_message_id', timedOut: false };
        }
        return { kind: 'accepted', messageId: result.MessageId };
      } catch (error) {
        const classified = classifySnsPublishError(error);
        return classified.kind === 'unknown'
          ? { kind: 'unknown', detail: classified.detail, timedOut: classified.timedOut }
          : { kind: classified.kind, detail: classified.detail };
      } finally {
        clearTimeout(timer);
      }
    },

    lookup(ref) {
      return lookupDelivery(
        {
          logs: options.logs,
          logGroups: options.deliveryLogGroups,
          fingerprint: options.fingerprint,
          now: () => clock.now(),
          settleMs: options.logSettleMs ?? DEFAULT_SNS_LOG_SETTLE_MS,
          maxPages: MAX_LOG_PAGES,
        },
        ref,
      );
    },
  };
}
