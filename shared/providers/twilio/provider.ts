/**
 * Twilio adapter for the {@link SmsProvider} port, over plain HTTP with the global fetch.
 *
 * - One HTTP call per send, bounded by an AbortSignal at `command.deadline`, never retried here
 *   (retrying a create-message POST is how duplicates happen; the state machine decides retries),
 *   redirects never followed (a followed 307 would re-POST).
 * - `ValidityPeriod` is the command's remaining token life, capped at Twilio's maximum (36000 s)
 *   and never under {@link TWILIO_MIN_VALIDITY_SECONDS} (Twilio recommends more than 5 s).
 * - `StatusCallback` = `<statusCallbackBase>?client_reference=<key>#<attempt>`: Twilio has no
 *   client reference field, and the callback URL is the only place our reference comes back next
 *   to the sid (in the callbacks it posts; the Message resource itself never returns it).
 * - Lookups only read (GET). By sid when one came back. Otherwise by content: list the messages
 *   to the number (and from our sender), match this key's secret inside the body, and conclude
 *   `absent` only under the conditions of {@link TwilioProviderOptions.redaction} and
 *   docs/providers/twilio.md.
 */
import type { Clock } from '../../domain/clock.js';
import { InvalidConfigurationError } from '../../domain/errors.js';
import {
  AbsenceProof,
  FindBy,
  type LookupOutcome,
  type ProviderCapabilities,
  type SendOutcome,
} from '../../domain/provider.js';
import type { LookupRef, SendCommand, SmsProvider } from '../../ports/sms-provider.js';
import { SETTINGS } from '../../settings.js';
import { CANARY_SKEW_MS, createAbsenceWitness } from './absence.js';
import { classifySend, observeTransportError } from './classification.js';
import { createTwilioHttp, MAX_TIMER_MS } from './http.js';
import { createTwilioLookups, inconclusive } from './lookup.js';

// The variables' names, for configuration errors: spelled once, in the settings table.
const CALLBACK_BASE = SETTINGS.twilioStatusCallbackBase.env;
const MESSAGING_SERVICE = SETTINGS.twilioMessagingService.env;
const PROBE_TO = SETTINGS.twilioAbsenceProbeTo.env;

export { CANARY_SKEW_MS } from './absence.js';
export { bodyCarriesSecret } from './lookup.js';

/** Something the adapter observed that operators must see; never carries a number or a body. */
export type TwilioAdapterEvent =
  | {
      /**
       * The canary message, or a message of the account created around an attempt, came back with a
       * masked `to` or a blank body: absence is off for the process.
       */
      readonly kind: 'redaction_observed';
      readonly messageSid: string;
      readonly why: 'masked_to' | 'blank_body';
    }
  | {
      /** The canary message was missing from a listing of its number although older than the allowance. */
      readonly kind: 'list_lag_observed';
      readonly messageSid: string;
      readonly ageMs: number;
    };

/** Options of {@link createTwilioProvider}. */
export interface TwilioProviderOptions {
  /** `https://api.twilio.com`, or any Twilio-compatible endpoint. No trailing path is required. */
  readonly baseUrl: string;
  readonly accountSid: string;
  readonly authToken: string;
  /** Sender: a Twilio number or alphanumeric sender id. Optional with a messaging service. */
  readonly from?: string;
  /** `MG...`: sent as `MessagingServiceSid` instead of `From` (Twilio picks the sender from its pool). */
  readonly messagingServiceSid?: string;
  /**
   * Where Twilio posts status callbacks (our receipts route). Required: without it no receipt
   * could ever reach us, and the adapter refuses to start.
   */
  readonly statusCallbackBase: string;
  /**
   * What the deployment declares about Twilio Message Redaction. `on` (the default) disables
   * absence proofs: a redacted message (blank body, number masked as `+1415555XXXX`) cannot be
   * matched, so an empty listing proves nothing. `off` allows them, while a periodic canary (a
   * fetch of a recent sid of ours) confirms that reads are not redacted.
   */
  readonly redaction?: 'on' | 'off';
  /** Clock skew allowed between our clock and Twilio's `date_created`; default {@link DEFAULT_CLOCK_SKEW_MS}. */
  readonly clockSkewMs?: number;
  /**
   * How long after creation a message may still be missing from list reads (Twilio does not
   * document list reads as read-after-write consistent). No listing earlier than the call
   * deadline plus this counts towards absence; default {@link DEFAULT_LIST_LAG_ALLOWANCE_MS}.
   */
  readonly listLagAllowanceMs?: number;
  /** How long one canary confirmation stands; default {@link DEFAULT_CANARY_INTERVAL_MS}. */
  readonly canaryIntervalMs?: number;
  /**
   * A number the operator owns (E.164; best a Twilio number of the account): with a messaging
   * service and redaction `off`, an absence proof that waits for a fresh canary creates a
   * scheduled message to it and cancels it at once (./absence-probe.ts), at most once per canary
   * interval. Unset: no probe, and absence in a quiet account waits for other traffic.
   */
  readonly absenceProbeTo?: string;
  /**
   * How much older than an attempt's claim the canary message may be; default {@link CANARY_SKEW_MS}
   * (clock skew only). Larger values trust older canaries: for tests of other conditions only.
   */
  readonly canarySkewMs?: number;
  /**
   * How far before an attempt's claim the account-wide redaction scan reaches (clock skew between
   * us and Twilio's `date_created`); default {@link CANARY_SKEW_MS}.
   */
  readonly windowScanSkewMs?: number;
  /** The port's `name`; default `twilio`. */
  readonly name?: string;
  /** Budget of one whole lookup (all pages and the canary); default {@link DEFAULT_LOOKUP_TIMEOUT_MS}. */
  readonly lookupTimeoutMs?: number;
  /** Page size of list lookups (Twilio allows 1..1000); default 1000. */
  readonly lookupPageSize?: number;
  /** A listing longer than this many pages is inconclusive; default {@link DEFAULT_LOOKUP_MAX_PAGES}. */
  readonly lookupMaxPages?: number;
  /** The only source of "now" for decisions (deadline budget, Retry-After dates, windows). */
  readonly clock: Clock;
  /** Injected for tests; default the global fetch. */
  readonly fetch?: typeof fetch;
  /** Receives operator-relevant observations (for a log line and a metric). */
  readonly onEvent?: (event: TwilioAdapterEvent) => void;
}

/**
 * Twilio finds a message by sid, by our reference through status callbacks, and by content
 * (listing To/From and matching the key's secret). Absence only under conditions this adapter checks.
 */
export const TWILIO_CAPABILITIES: ProviderCapabilities = {
  findBy: [FindBy.id, FindBy.reference, FindBy.content],
  absenceProof: AbsenceProof.conditional,
  receipts: true,
};

/** Twilio's largest accepted ValidityPeriod, in seconds. */
export const TWILIO_MAX_VALIDITY_SECONDS = 36_000;
/** Twilio recommends a ValidityPeriod greater than 5 s; the domain never asks for less. */
export const TWILIO_MIN_VALIDITY_SECONDS = 5;
export const DEFAULT_LOOKUP_TIMEOUT_MS = 3_000;
export const DEFAULT_LOOKUP_PAGE_SIZE = 1_000;
export const DEFAULT_LOOKUP_MAX_PAGES = 20;
/** Messages created up to this long before the attempt's claim (by our clock) are in its window. */
export const DEFAULT_CLOCK_SKEW_MS = 5 * 60_000;
export const DEFAULT_LIST_LAG_ALLOWANCE_MS = 60_000;
export const DEFAULT_CANARY_INTERVAL_MS = 60_000;
const MESSAGING_SERVICE_SID = /^MG[0-9a-fA-F]{32}$/;
/**
 * The settings without which a Twilio provider must not start: a status callback base (an
 * http(s) URL) and a sender (`from` or a well-formed messaging service sid). Throws
 * {@link InvalidConfigurationError} naming the environment variable; returns them normalised.
 */
export function checkTwilioSettings(settings: {
  readonly statusCallbackBase?: string | undefined;
  readonly from?: string | undefined;
  readonly messagingServiceSid?: string | undefined;
  readonly absenceProbeTo?: string | undefined;
}): {
  callbackBase: string;
  from: string | undefined;
  messagingServiceSid: string | undefined;
  absenceProbeTo: string | undefined;
} {
  const callbackBase = settings.statusCallbackBase?.trim() ?? '';
  if (callbackBase === '') {
    throw new InvalidConfigurationError(
      `a Twilio provider needs ${CALLBACK_BASE} (the public URL of POST /v1/receipts/twilio): without it no status callback can reach us`,
    );
  }
  if (!URL.canParse(callbackBase) || !/^https?:$/.test(new URL(callbackBase).protocol)) {
    throw new InvalidConfigurationError(`${CALLBACK_BASE} must be an http(s) URL`);
  }
  const from = settings.from === undefined || settings.from === '' ? undefined : settings.from;
  const messagingServiceSid =
    settings.messagingServiceSid === undefined || settings.messagingServiceSid === ''
      ? undefined
      : settings.messagingServiceSid;
  if (messagingServiceSid !== undefined && !MESSAGING_SERVICE_SID.test(messagingServiceSid)) {
    throw new InvalidConfigurationError(`${MESSAGING_SERVICE} must match ^MG[0-9a-fA-F]{32}$`);
  }
  if (from === undefined && messagingServiceSid === undefined) {
    throw new InvalidConfigurationError(
      `a Twilio provider needs a sender: ${SETTINGS.twilioFrom.env} or ${MESSAGING_SERVICE}`,
    );
  }
  const absenceProbeTo =
    settings.absenceProbeTo === undefined || settings.absenceProbeTo === ''
      ? undefined
      : settings.absenceProbeTo;
  if (absenceProbeTo !== undefined && !/^\+[1-9]\d{6,14}$/.test(absenceProbeTo)) {
    throw new InvalidConfigurationError(`${PROBE_TO} must be an E.164 number`);
  }
  if (absenceProbeTo !== undefined && messagingServiceSid === undefined) {
    // Twilio schedules only with a messaging service; without one it would send the probe at once.
    throw new InvalidConfigurationError(
      `${PROBE_TO} needs ${MESSAGING_SERVICE}: Twilio schedules messages only through a messaging service`,
    );
  }
  return { callbackBase, from, messagingServiceSid, absenceProbeTo };
}

/**
 * Builds the Twilio provider. Throws {@link InvalidConfigurationError} on a missing or malformed
 * option (a deployment error, found at start-up); every call outcome is returned, never thrown.
 */
export function createTwilioProvider(options: TwilioProviderOptions): SmsProvider {
  const base = options.baseUrl.replace(/\/+$/, '');
  if (!URL.canParse(base)) throw new InvalidConfigurationError('twilio baseUrl is not a URL');
  const { callbackBase, from, messagingServiceSid, absenceProbeTo } = checkTwilioSettings(options);
  const clock = options.clock;
  const lookupTimeoutMs = options.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS;
  const http = createTwilioHttp({
    base,
    accountSid: options.accountSid,
    authToken: options.authToken,
    fetch: options.fetch ?? globalThis.fetch,
    clock,
    pageSize: Math.min(1000, Math.max(1, Math.floor(options.lookupPageSize ?? DEFAULT_LOOKUP_PAGE_SIZE))),
    maxPages: options.lookupMaxPages ?? DEFAULT_LOOKUP_MAX_PAGES,
  });
  const absence = createAbsenceWitness({
    http,
    clock,
    redaction: options.redaction ?? 'on',
    listLagAllowanceMs: options.listLagAllowanceMs ?? DEFAULT_LIST_LAG_ALLOWANCE_MS,
    canaryIntervalMs: options.canaryIntervalMs ?? DEFAULT_CANARY_INTERVAL_MS,
    canarySkewMs: options.canarySkewMs ?? CANARY_SKEW_MS,
    windowScanSkewMs: options.windowScanSkewMs ?? CANARY_SKEW_MS,
    messagingServiceSid,
    absenceProbeTo,
    onEvent: options.onEvent,
  });
  const lookups = createTwilioLookups({
    http,
    absence,
    from,
    skewMs: options.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS,
  });
  const statusCallbackFor = (clientReference: string): string => {
    const url = new URL(callbackBase);
    url.searchParams.set('client_reference', clientReference);
    return url.toString();
  };

  return {
    name: options.name ?? 'twilio',
    capabilities: TWILIO_CAPABILITIES,

    async send(command: SendCommand): Promise<SendOutcome> {
      // The sender never calls with under 5 s of token life left: these are caller bugs,
      // answered without a call. Permanent, because the same command can only get worse.
      if (!Number.isFinite(command.validityPeriodSeconds)) {
        return { kind: 'not_sent_permanent', detail: 'invalid_validity_period' };
      }
      const validity = Math.min(Math.floor(command.validityPeriodSeconds), TWILIO_MAX_VALIDITY_SECONDS);
      if (validity < TWILIO_MIN_VALIDITY_SECONDS)
        return { kind: 'not_sent_permanent', detail: 'no_validity_left' };
      // A call that may not start is definitely not sent; whether another may follow is the sender's call.
      const budgetMs = command.deadline - clock.now();
      if (!(budgetMs > 0)) return { kind: 'not_sent_retryable', detail: 'deadline_passed' };
      const form = new URLSearchParams({ To: command.to });
      if (messagingServiceSid !== undefined) form.set('MessagingServiceSid', messagingServiceSid);
      if (from !== undefined) form.set('From', from);
      form.set('Body', command.body);
      form.set('ValidityPeriod', String(validity));
      form.set('StatusCallback', statusCallbackFor(command.clientReference));
      const outcome = classifySend(await http.observeSend(form, budgetMs));
      if (outcome.kind === 'accepted') absence.remember(outcome.messageId, command.to);
      else if (outcome.kind === 'unknown' && outcome.messageId !== undefined)
        absence.remember(outcome.messageId, command.to);
      return outcome;
    },

    async lookup(ref: LookupRef): Promise<LookupOutcome> {
      const signal = AbortSignal.timeout(Math.min(Math.max(1, lookupTimeoutMs), MAX_TIMER_MS));
      try {
        return ref.messageId === undefined
          ? await lookups.byContent(ref, signal)
          : await lookups.bySid(ref, ref.messageId, signal);
      } catch (error) {
        const observed = observeTransportError(error, signal.aborted);
        return inconclusive(observed.timedOut ? 'timeout' : `transport_${observed.code ?? 'error'}`);
      } finally {
        // A probe whose cancel failed is retried even when no absence waits any more.
        await absence.tidy(signal);
      }
    },
  };
}
