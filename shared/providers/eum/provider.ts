import {
  MessageFeedbackStatus,
  type PinpointSMSVoiceV2Client,
  PutMessageFeedbackCommand,
  SendTextMessageCommand,
  type SendTextMessageCommandInput,
} from '@aws-sdk/client-pinpoint-sms-voice-v2';
import type { Clock } from '../../domain/clock.js';
import { InvalidConfigurationError } from '../../domain/errors.js';
import {
  AbsenceProof,
  FindBy,
  type LookupOutcome,
  type ProviderCapabilities,
  type SendOutcome,
} from '../../domain/provider.js';
import type { SendCommand, SmsProvider } from '../../ports/sms-provider.js';
import { markDeparture, type RequestDeparture } from '../request-departure.js';
import { firstAttemptError, refuseRetries } from '../single-attempt.js';
import { classifyEumSendError } from './classification.js';

/**
 * The End User Messaging client settings: no SDK retries. {@link createEumProvider} makes any client
 * send each command once whatever its retry configuration (./single-attempt.ts); without retries
 * configured the SDK also waits no backoff before the refused retry.
 */
export const EUM_CLIENT_CONFIG = { maxAttempts: 1 } as const;

/** `TimeToLive` bounds of `SendTextMessage` in the service model (`TimeToLive`: integer, min 5, max 259200). */
export const EUM_MIN_TTL_SECONDS = 5;
export const EUM_MAX_TTL_SECONDS = 259_200;

/** The `Context` key that carries our `<key>#<attempt>`; End User Messaging echoes `Context` in every event. */
export const EUM_CONTEXT_REFERENCE_KEY = 'client_reference';

/**
 * End User Messaging finds a message by its id and by our reference, both only through the events
 * it publishes (there is no status or search API). Nothing can show that a message does not exist.
 */
export const EUM_CAPABILITIES: ProviderCapabilities = {
  findBy: [FindBy.id, FindBy.reference],
  absenceProof: AbsenceProof.never,
  receipts: true,
};

/** Options of {@link createEumProvider}. */
export interface EumProviderOptions {
  /** Best created with {@link EUM_CLIENT_CONFIG}; it gets the single-attempt guard either way. */
  readonly client: PinpointSMSVoiceV2Client;
  /** Phone number, sender id or pool (id or ARN): `EUM_ORIGINATION_IDENTITY`. */
  readonly originationIdentity: string;
  /** The configuration set whose event destination publishes our receipts: `EUM_CONFIGURATION_SET`. */
  readonly configurationSetName: string;
  /** Largest price per message in USD, as the API takes it (a decimal string): `EUM_MAX_PRICE`. */
  readonly maxPrice?: string;
  /** `EUM_PROTECT_CONFIGURATION_ID`. */
  readonly protectConfigurationId?: string;
  /**
   * Sends `MessageFeedbackEnabled: true`, so {@link EumProvider.confirm} can record RECEIVED for a
   * message the user confirmed (`EUM_MESSAGE_FEEDBACK=on`). Off by default.
   */
  readonly messageFeedback?: boolean;
  readonly clock: Clock;
}

/** What a delivery confirmation did at the provider (`PutMessageFeedback`). */
export type FeedbackOutcome =
  | { readonly kind: 'recorded' }
  | { readonly kind: 'failed'; readonly detail: string };

/** The End User Messaging adapter: the port plus the optional delivery-feedback call. */
export interface EumProvider extends SmsProvider {
  /**
   * Tells End User Messaging the user received the message (`PutMessageFeedback` RECEIVED), for a
   * confirmation the auth service reported. Best effort: returns, never throws.
   */
  confirm(messageId: string): Promise<FeedbackOutcome>;
}

/**
 * AWS End User Messaging SMS (`pinpoint-sms-voice-v2` `SendTextMessage`, transactional).
 *
 * - One call per send, bounded by the command's deadline, never retried here nor by the SDK
 *   (the client gets the single-attempt guard, whatever its retry settings).
 * - `TimeToLive` = the token's remaining life: End User Messaging stops trying to hand the message
 *   off when it ends (and says so with `TEXT_TTL_EXPIRED`). Under the API's minimum of 5 s no call
 *   is made: the token would outlive nothing worth sending.
 * - `Context.client_reference` = `<key>#<attempt>`: every event for the message carries it back.
 * - `lookup` never reads anything: the service has no status API. Evidence arrives as events
 *   (see `events.ts`), so a lookup is always inconclusive and an unknown that no event settles
 *   ends `unknown_at_expiry`, without a second send.
 */
export function createEumProvider(options: EumProviderOptions): EumProvider {
  const { client, clock } = options;
  for (const [name, value] of [
    ['originationIdentity', options.originationIdentity],
    ['configurationSetName', options.configurationSetName],
  ] as const) {
    if (value.trim() === '') throw new InvalidConfigurationError(`eum ${name} is required`);
  }
  if (options.maxPrice !== undefined && !/^\d{1,4}(\.\d{1,5})?$/.test(options.maxPrice)) {
    throw new InvalidConfigurationError('eum maxPrice must be a decimal amount in USD, e.g. 0.05');
  }
  // By construction, not by reading maxAttempts: a retryStrategy bypasses that setting.
  refuseRetries(client);

  return {
    name: 'eum',
    capabilities: EUM_CAPABILITIES,

    async send(command: SendCommand): Promise<SendOutcome> {
      if (!Number.isFinite(command.validityPeriodSeconds)) {
        return { kind: 'not_sent_permanent', detail: 'eum:invalid_validity_period' };
      }
      const ttl = Math.min(Math.floor(command.validityPeriodSeconds), EUM_MAX_TTL_SECONDS);
      if (ttl < EUM_MIN_TTL_SECONDS)
        return { kind: 'not_sent_permanent', detail: 'eum:validity_below_minimum' };
      const remainingMs = command.deadline - clock.now();
      if (!(remainingMs > 0)) return { kind: 'not_sent_retryable', detail: 'eum:deadline_passed' };

      const input: SendTextMessageCommandInput = {
        DestinationPhoneNumber: command.to,
        OriginationIdentity: options.originationIdentity,
        ConfigurationSetName: options.configurationSetName,
        MessageBody: command.body,
        MessageType: 'TRANSACTIONAL',
        TimeToLive: ttl,
        Context: { [EUM_CONTEXT_REFERENCE_KEY]: command.clientReference },
        ...(options.maxPrice === undefined ? {} : { MaxPrice: options.maxPrice }),
        ...(options.protectConfigurationId === undefined
          ? {}
          : { ProtectConfigurationId: options.protectConfigurationId }),
        ...(options.messageFeedback === true ? { MessageFeedbackEnabled: true } : {}),
      };

      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      // The race returns at the deadline even if the transport ignores the abort signal.
      const deadline = new Promise<'deadline'>((resolve) => {
        timer = setTimeout(() => {
          abort.abort();
          resolve('deadline');
        }, remainingMs);
      });
      const send = new SendTextMessageCommand(input);
      const departure = markDeparture(send, abort.signal);
      try {
        const result = await Promise.race([client.send(send, { abortSignal: abort.signal }), deadline]);
        if (result === 'deadline') return deadlineOutcome(departure);
        if (result.MessageId === undefined || result.MessageId === '') {
          return { kind: 'unknown', detail: 'eum:no_message_id', timedOut: false };
        }
        return { kind: 'accepted', messageId: result.MessageId };
      } catch (error) {
        if (abort.signal.aborted) return deadlineOutcome(departure);
        const classified = classifyEumSendError(firstAttemptError(error));
        return classified.kind === 'unknown'
          ? { kind: 'unknown', detail: classified.detail, timedOut: classified.timedOut }
          : { kind: classified.kind, detail: classified.detail };
      } finally {
        clearTimeout(timer);
      }
    },

    async lookup(ref): Promise<LookupOutcome> {
      // No status or search API exists: events are the only evidence, and they arrive by themselves.
      // An id SendTextMessage returned proves the message was accepted (how far it got, only events tell).
      if (ref.messageId !== undefined) return { kind: 'found', messageId: ref.messageId, status: 'sent' };
      return { kind: 'inconclusive', detail: 'eum:events_only' };
    },

    async confirm(messageId: string): Promise<FeedbackOutcome> {
      try {
        await client.send(
          new PutMessageFeedbackCommand({
            MessageId: messageId,
            MessageFeedbackStatus: MessageFeedbackStatus.RECEIVED,
          }),
        );
        return { kind: 'recorded' };
      } catch (error) {
        return { kind: 'failed', detail: classifyEumSendError(firstAttemptError(error)).detail };
      }
    },
  };
}

/** The deadline fired: unknown if the request may have left, provably not sent if it never did. */
function deadlineOutcome(departure: RequestDeparture): SendOutcome {
  return departure.left()
    ? { kind: 'unknown', detail: 'eum:deadline_reached', timedOut: true }
    : { kind: 'not_sent_retryable', detail: 'eum:deadline_before_departure' };
}
