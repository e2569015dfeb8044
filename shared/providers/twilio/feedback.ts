/**
 * Twilio Message Feedback: `POST /2010-04-01/Accounts/{AccountSid}/Messages/{MessageSid}/Feedback.json`
 * with `Outcome=confirmed` tells Twilio the recipient acted on the message (the user used the code
 * or link). Twilio uses it for its deliverability figures. Twilio documents that the message must
 * have been created with `ProvideFeedback=true` for feedback to count.
 */
import type { FeedbackOutcome } from '../../ports/sms-provider.js';
import { MESSAGE_SID } from './classification.js';

/** Options of {@link createTwilioFeedback}. */
export interface TwilioFeedbackOptions {
  readonly baseUrl: string;
  readonly accountSid: string;
  readonly authToken: string;
  /** Upper bound of one feedback call; default 3 s. */
  readonly timeoutMs?: number;
  /** Injected for tests; default the global fetch. */
  readonly fetch?: typeof fetch;
}

export const DEFAULT_FEEDBACK_TIMEOUT_MS = 3_000;

/** The port's optional `confirm`, for Twilio. Outcomes are returned, never thrown. */
export function createTwilioFeedback(options: TwilioFeedbackOptions): {
  confirm(messageId: string): Promise<FeedbackOutcome>;
} {
  const base = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
  const account = encodeURIComponent(options.accountSid);
  return {
    async confirm(messageId) {
      // Only a SID Twilio gave us goes into the path.
      if (!MESSAGE_SID.test(messageId)) return { kind: 'failed', detail: 'not_a_message_sid' };
      try {
        const response = await fetchImpl(
          `${base}/2010-04-01/Accounts/${account}/Messages/${encodeURIComponent(messageId)}/Feedback.json`,
          {
            method: 'POST',
            headers: {
              authorization,
              accept: 'application/json',
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: new URLSearchParams({ Outcome: 'confirmed' }).toString(),
            signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_FEEDBACK_TIMEOUT_MS),
            redirect: 'manual',
          },
        );
        await response.arrayBuffer().catch(() => undefined);
        return response.status === 200 || response.status === 201
          ? { kind: 'recorded' }
          : { kind: 'failed', detail: `http_${response.status}` };
      } catch (error) {
        return { kind: 'failed', detail: `transport_${(error as Error).name}` };
      }
    },
  };
}
