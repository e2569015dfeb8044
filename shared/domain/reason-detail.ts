/**
 * `reason_detail`: the machine-readable "why" next to a transition's reason code, such as the
 * provider's error code (`twilio:21211`), a classification id (`eum:validation:PRICE_OVER_THRESHOLD`)
 * or why a lookup could not prove absence (`absence_pending:canary_older_than_attempt`). It is
 * stored on every evidence record and on the command, shown by the API, the CLI, the console and
 * the export, so it must never carry personal data: {@link parseReasonDetail} admits only the
 * grammar below and refuses anything that looks like a phone number, a code, a URL or a host.
 */

/** `<source>(:<part>)*`: a lower-case source, then parts of letters, digits, `_`, `.` and `-`. */
export const REASON_DETAIL_PATTERN = /^[a-z0-9_]+(:[A-Za-z0-9_.-]+)*$/;
export const REASON_DETAIL_MAX_LENGTH = 120;

/** A string that passed {@link parseReasonDetail}. */
export type ReasonDetail = string & { readonly __brand: 'ReasonDetail' };

/**
 * Provider error codes are at most 5 digits (Twilio `30500`, HTTP `429`). A longer run of digits
 * is what a phone number or a one-time code (4 to 10 digits) looks like, so it is refused.
 */
const MAX_DIGIT_RUN = 5;
/** A host name (`example.com`, `evil.example.org`): a URL that lost its scheme. */
const HOST_LIKE = /[A-Za-z0-9-]\.[A-Za-z]{2,}/;

/**
 * The detail when it is one the grammar admits, otherwise undefined. Besides the grammar and the
 * length: no run of more than {@link MAX_DIGIT_RUN} digits anywhere (phone numbers, codes), no
 * source that is only digits (a bare 4- or 5-digit code), nothing shaped like a host name.
 */
export function parseReasonDetail(value: unknown): ReasonDetail | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.length === 0 || value.length > REASON_DETAIL_MAX_LENGTH) return undefined;
  if (!REASON_DETAIL_PATTERN.test(value)) return undefined;
  const source = value.split(':', 1)[0] ?? '';
  if (/^\d+$/.test(source)) return undefined;
  if (new RegExp(`\\d{${MAX_DIGIT_RUN + 1},}`).test(value)) return undefined;
  if (HOST_LIKE.test(value)) return undefined;
  return value as ReasonDetail;
}

/** What a detail that failed the grammar is recorded as: the fact that there was one, never its text. */
export const REFUSED_DETAIL = 'detail_refused' as ReasonDetail;

/**
 * Sources that are already a detail's first part: the service's own (the absence proof, the
 * reconciler's reads that never reached the provider) and the provider families.
 */
const DETAIL_SOURCES = [
  'absence_pending',
  'absence_disabled',
  'absence_unprovable',
  'payload_unavailable',
  'payload_unreadable',
  'adapter_threw',
  'provider_unavailable',
  'twilio',
  'eum',
  'sns',
] as const;

/** `twilio_21211`, `auth_rejected_twilio_20003`: a Twilio API error code inside a bare detail. */
const TWILIO_CODE = /^(?:(.+)_)?twilio_(\d{1,5})$/;

/**
 * The one place where a provider adapter's classification `detail` becomes a `reason_detail`.
 * Details that already start with a known source (End User Messaging `eum:...`, SNS `sns:...`,
 * `twilio:config:21408`, the domain's `absence_pending:...`) or with the provider's own name pass
 * unchanged. A Twilio API error code becomes `twilio:<code>` whatever the provider is called (the
 * local simulator speaks Twilio's API): `twilio_21211` -> `twilio:21211`,
 * `auth_rejected_twilio_20003` -> `twilio:auth_rejected:20003`. Any other bare detail gains the
 * provider's name as its source: `http_429` -> `twilio:http_429`, `content:masked_number` ->
 * `twilio:content:masked_number`. Whatever still fails the grammar is {@link REFUSED_DETAIL}.
 */
export function reasonDetailFrom(provider: string, detail: string): ReasonDetail {
  const source = detail.split(':', 1)[0] ?? '';
  const known = (DETAIL_SOURCES as readonly string[]).includes(source);
  if (known || (source === provider && detail.includes(':'))) {
    return parseReasonDetail(detail) ?? REFUSED_DETAIL;
  }
  const code = TWILIO_CODE.exec(detail);
  const normalised =
    code !== null ? ['twilio', ...(code[1] ? [code[1]] : []), code[2]].join(':') : `${provider}:${detail}`;
  return parseReasonDetail(normalised) ?? REFUSED_DETAIL;
}

/**
 * The domain's own details: why a command expired without a send, why a proof of absence waits.
 * Provider details come from {@link reasonDetailFrom}; these never name a provider.
 */
export const DomainDetail = {
  /** Expired in `accepted` without ever being claimed (the queue never brought it in time). */
  neverClaimed: 'never_claimed',
  /** Expired while a retry's backoff ran past the dispatch deadline. */
  backoffPastDeadline: 'backoff_past_deadline',
  /** Due for a new attempt, but no sender claimed it before the dispatch deadline. */
  notClaimedInTime: 'not_claimed_in_time',
  /** Two absent reads proved no message exists, but too late for another attempt. */
  absenceProvenPastDeadline: 'absence_proven_past_deadline',
  /** The provider said "not sent", but the token allows no further attempt. */
  notSentPastDeadline: 'not_sent_past_deadline',
  /** The attempt limit was reached (followed by the last attempt's detail when there is one). */
  maxAttempts: 'max_attempts',
  /** The first complete absent read: a second one, a settle time later, must agree. */
  secondAbsenceRead: 'absence_pending:second_read',
  /** An absent read inside the settle time: the proof completes at the first read's time plus the settle time. */
  settleTime: 'absence_pending:settle_time',
  /** An absent read before the attempt's call deadline: absence only counts after it. */
  callNotEnded: 'absence_pending:call_not_ended',
  /** The token died before any read of the unknown outcome came back with a reason. */
  noConclusiveRead: 'no_conclusive_read',
  /**
   * The sender's clock is off the store's by more than the bound (`clock_skew:behind:15`: at least
   * 15 s slow): the claim was given back, nothing sent (docs/design.md#clock-skew).
   */
  clockSkew: 'clock_skew',
} as const;

/**
 * `<why>:<cause>` when the result is still a valid detail (`backoff_past_deadline:twilio:http_429`),
 * otherwise `<why>` alone: the cause is the earlier transition's detail that led here.
 */
export function detailWithCause(why: string, cause: string | undefined): ReasonDetail {
  const chained =
    cause === undefined || cause === REFUSED_DETAIL ? undefined : parseReasonDetail(`${why}:${cause}`);
  return chained ?? parseReasonDetail(why) ?? REFUSED_DETAIL;
}
