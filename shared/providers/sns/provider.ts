/**
 * Amazon SNS SMS adapter for the `SmsProvider` port: `Publish` to a phone number, lookups in the
 * delivery-status logs (./delivery-logs.ts), read in batches under the account's call rate.
 */
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { type MessageAttributeValue, PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { Clock } from '../../domain/clock.js';
import { type LookupOutcome, NO_ABSENCE_PROOF, type SendOutcome } from '../../domain/provider.js';
import type { LookupRef, SmsProvider } from '../../ports/sms-provider.js';
import { markDeparture, type RequestDeparture } from '../request-departure.js';
import { firstAttemptError, refuseRetries } from '../single-attempt.js';
import { classifySnsPublishError } from './classification.js';
import { type DeliveryLogOptions, readDeliveryStatuses } from './delivery-logs.js';
import { TokenBucket } from './rate-limit.js';

/**
 * The reason a delivery-status `SUCCESS` line gives a `sent` status: SNS's "Message has been
 * accepted by phone carrier", the carrier's acceptance (End User Messaging's `TEXT_SUCCESSFUL`,
 * recorded `sent` with `eum:event:TEXT_SUCCESSFUL`), never proof the handset got it. A `sent`
 * without it only means SNS returned the id (docs/providers/aws.md#carrier-acceptance-is-sent).
 */
export const SNS_CARRIER_ACCEPTED_DETAIL = 'sns:status:SUCCESS';

/** Without the id `Publish` returned, nothing in SNS can find the message (and nothing proves absence). */
const NO_ID: LookupOutcome = { kind: 'inconclusive', detail: 'sns:no_message_id' };

/**
 * The SNS client settings: no SDK retries (`new SNSClient({ ...SNS_CLIENT_CONFIG })`).
 * {@link createSnsProvider} makes any client publish each command once whatever its retry
 * configuration (../single-attempt.ts); without retries configured the SDK also waits no backoff
 * before the refused retry.
 */
export const SNS_CLIENT_CONFIG = { maxAttempts: 1 } as const;

const MAX_LOG_PAGES = 20;
/** How long a lookup waits for other lookups of the same pass to share one read. */
export const DEFAULT_SNS_BATCH_WINDOW_MS = 20;
/** Ids per batch; a batch larger than one filter pattern is read in several calls. */
export const DEFAULT_SNS_BATCH_MAX = 64;
/** Longest wait for one `FilterLogEvents` answer. */
export const DEFAULT_SNS_LOGS_CALL_TIMEOUT_MS = 5_000;
/** `FilterLogEvents` calls per second this process allows itself (the account quota is 5). */
export const DEFAULT_SNS_LOGS_RATE_PER_SECOND = 4;

/** Options of {@link createSnsProvider}. */
export interface SnsProviderOptions {
  /** Best created with {@link SNS_CLIENT_CONFIG}; it gets the single-attempt guard either way. */
  readonly sns: SNSClient;
  readonly logs: CloudWatchLogsClient;
  /**
   * The SNS SMS delivery-status log groups, usually `sns/<region>/<account>/DirectPublishToPhoneNumber`
   * and the same name with `/Failure`.
   */
  readonly deliveryLogGroups: readonly string[];
  readonly clock: Clock;
  /** `AWS.SNS.SMS.SenderID`, where the destination country supports sender ids. */
  readonly senderId?: string;
  /** Lookups arriving within this window share one read; default {@link DEFAULT_SNS_BATCH_WINDOW_MS}. */
  readonly batchWindowMs?: number;
  readonly batchMax?: number;
  /**
   * Default {@link DEFAULT_SNS_LOGS_RATE_PER_SECOND}. One bucket per container, counting the calls the
   * quota counts (`FilterLogEvents`, each serving a whole batch of lookups); the stack divides the
   * account's rate by the reconcile workers' maximum concurrency (other users of the account are not counted).
   */
  readonly logsRatePerSecond?: number;
  /**
   * Longest wait for a rate-limit token; past it the read stops and each id is answered from what
   * was read (`found`, at least `sent`: SNS returned the id). Default 2 s.
   */
  readonly logsMaxWaitMs?: number;
  /** Longest wait for one `FilterLogEvents` answer; default {@link DEFAULT_SNS_LOGS_CALL_TIMEOUT_MS}. */
  readonly logsCallTimeoutMs?: number;
  /** Injected for tests: waits (default setTimeout) and the batch window timer. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly defer?: (run: () => void, ms: number) => void;
}

/** An SNS provider that can also look many messages up in one read. */
export interface SnsProvider extends SmsProvider {
  /** One delivery-log read for every ref (what `lookup` does for the refs of one batch window). */
  lookupMany(refs: readonly LookupRef[]): Promise<LookupOutcome[]>;
}

/**
 * Amazon SNS SMS (`Publish` with `PhoneNumber`, transactional). Outcomes are classified by
 * {@link SNS_PUBLISH_ERROR_CLASSIFICATION}; lookups read the delivery-status logs.
 *
 * SNS has no validity-period attribute: `validityPeriodSeconds` cannot be passed on, so with SNS
 * the token's expiry is enforced only before dispatch (the sender's deadline check), not by the
 * provider during delivery. SNS has no client reference either, and its delivery logs are
 * sampled, late and account-wide: a message is known only by the MessageId `Publish` returned.
 * An attempt whose id never came back can never be found, and never be proven absent: it ends
 * `unknown_at_expiry` without a second send.
 */
export function createSnsProvider(options: SnsProviderOptions): SnsProvider {
  const { sns, clock } = options;
  // By construction, not by reading maxAttempts: a retryStrategy bypasses that setting.
  refuseRetries(sns);

  const limiter = new TokenBucket(options.logsRatePerSecond ?? DEFAULT_SNS_LOGS_RATE_PER_SECOND, 1, () =>
    clock.now(),
  );
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const defer = options.defer ?? ((run: () => void, ms: number) => void setTimeout(run, ms));
  const batchWindowMs = options.batchWindowMs ?? DEFAULT_SNS_BATCH_WINDOW_MS;
  const batchMax = options.batchMax ?? DEFAULT_SNS_BATCH_MAX;
  const logOptions: DeliveryLogOptions = {
    logs: options.logs,
    logGroups: options.deliveryLogGroups,
    now: () => clock.now(),
    sleep,
    limiter,
    maxWaitMs: options.logsMaxWaitMs ?? 2_000,
    maxPages: MAX_LOG_PAGES,
    callTimeoutMs: options.logsCallTimeoutMs ?? DEFAULT_SNS_LOGS_CALL_TIMEOUT_MS,
  };

  /** SNS returned the id, so it accepted the message: found whatever the logs say; they only tell how far it got. */
  async function lookupMany(refs: readonly LookupRef[]): Promise<LookupOutcome[]> {
    const withId = refs.filter((ref) => ref.messageId !== undefined);
    if (withId.length === 0) return refs.map(() => NO_ID);
    const since = Math.min(...withId.map((ref) => ref.attemptStartedAt));
    const read = await readDeliveryStatuses(
      logOptions,
      withId.map((ref) => ref.messageId as string),
      since,
    );
    return refs.map((ref): LookupOutcome => {
      if (ref.messageId === undefined) return NO_ID;
      const status = read.statuses.get(ref.messageId);
      if (status === 'sent') {
        return { kind: 'found', messageId: ref.messageId, status, detail: SNS_CARRIER_ACCEPTED_DETAIL };
      }
      return { kind: 'found', messageId: ref.messageId, status: status ?? 'sent' };
    });
  }

  // One delivery-log read at a time: the lookups that arrive while it waits for its tokens and its
  // answer form the next read. Reads then carry as many ids as the call rate leaves room for; with
  // a read per short window instead, each waited for its own token and carried one or two ids (about
  // 5 lookups a second under the 4 calls a second, in a 3,000-event SNS soak).
  const pending: { ref: LookupRef; resolve: (outcome: LookupOutcome) => void }[] = [];
  let reading = false;
  const readOne = async (batch: typeof pending) => {
    try {
      const outcomes = await lookupMany(batch.map((item) => item.ref));
      for (const [index, item] of batch.entries()) item.resolve(outcomes[index] ?? NO_ID);
    } catch {
      for (const item of batch) item.resolve({ kind: 'inconclusive', detail: 'sns:logs_read_failed' });
    }
  };
  const drain = () => {
    reading = true;
    // The window lets lookups that arrive together (one batch of queue messages) share the first read.
    defer(async () => {
      while (pending.length > 0) await readOne(pending.splice(0, batchMax));
      reading = false;
    }, batchWindowMs);
  };

  return {
    name: 'sns',
    // Delivery-status logs are sampled, late and carry no reference: they confirm an id, never absence.
    capabilities: NO_ABSENCE_PROOF,

    async send(command): Promise<SendOutcome> {
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
      const departure = markDeparture(publish, abort.signal);
      try {
        const result = await Promise.race([sns.send(publish, { abortSignal: abort.signal }), deadline]);
        if (result === 'deadline') return deadlineOutcome(departure);
        if (result.MessageId === undefined || result.MessageId === '') {
          return { kind: 'unknown', detail: 'sns:no_message_id', timedOut: false };
        }
        return { kind: 'accepted', messageId: result.MessageId };
      } catch (error) {
        if (abort.signal.aborted) return deadlineOutcome(departure);
        const classified = classifySnsPublishError(firstAttemptError(error));
        return classified.kind === 'unknown'
          ? { kind: 'unknown', detail: classified.detail, timedOut: classified.timedOut }
          : { kind: classified.kind, detail: classified.detail };
      } finally {
        clearTimeout(timer);
      }
    },

    lookup(ref) {
      if (ref.messageId === undefined) return Promise.resolve(NO_ID);
      return new Promise<LookupOutcome>((resolve) => {
        pending.push({ ref, resolve });
        if (!reading) drain();
      });
    },

    lookupMany,
  };
}

/** The deadline fired: unknown if the request may have left, provably not sent if it never did. */
function deadlineOutcome(departure: RequestDeparture): SendOutcome {
  return departure.left()
    ? { kind: 'unknown', detail: 'sns:deadline_reached', timedOut: true }
    : { kind: 'not_sent_retryable', detail: 'sns:deadline_before_departure' };
}
