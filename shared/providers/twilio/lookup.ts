/**
 * The Twilio adapter's lookups (they only read): by sid when the send returned one; otherwise by
 * content, listing the messages to the number and matching the key's secret inside each body, and
 * `absent` only when the listing is complete and readable and the absence logic (./absence.ts)
 * lets it count.
 */
import { isNotSentStatus, type LookupOutcome, type ProviderStatus } from '../../domain/provider.js';
import type { LookupRef } from '../../ports/sms-provider.js';
import type { AbsenceWitness } from './absence.js';
import { isAbsenceProbe } from './absence-probe.js';
import { MESSAGE_SID, normaliseStatus, statusDetail } from './classification.js';
import { asRecord, IncompleteListing, type JsonRecord, type TwilioHttp } from './http.js';

/** A shorter secret (a code is 6 digits, a URL far longer) would match too much to mean anything. */
const MIN_SECRET_LENGTH = 4;

export const inconclusive = (detail: string): LookupOutcome => ({ kind: 'inconclusive', detail });

/** A listed or fetched message's final-status detail (`twilio:30500`), as an object to spread. */
const detailOf = (message: JsonRecord): { detail?: string } => {
  const detail = statusDetail(message.status, message.error_code);
  return detail === undefined ? {} : { detail };
};

/**
 * Whether `secret` occurs in `body` as a whole token: not glued to a letter or digit on either
 * side, so code `48392` does not match inside `483920`. Only the secret is matched, never the
 * whole body: a messaging service may re-encode the text around it (smart encoding, shortening).
 */
export function bodyCarriesSecret(body: string, secret: string): boolean {
  if (secret === '') return false;
  const isWordChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9]/.test(c);
  for (let at = body.indexOf(secret); at !== -1; at = body.indexOf(secret, at + 1)) {
    if (!isWordChar(body[at - 1]) && !isWordChar(body[at + secret.length])) return true;
  }
  return false;
}

/** Options of {@link createTwilioLookups}. */
export interface TwilioLookupOptions {
  readonly http: TwilioHttp;
  readonly absence: AbsenceWitness;
  /** Our fixed `From`, when there is one (a listing filter). */
  readonly from: string | undefined;
  /** Messages created up to this long before the attempt's claim are in its window. */
  readonly skewMs: number;
}

/** The two lookups of one adapter. Both throw on transport errors (the façade classifies them). */
export interface TwilioLookups {
  bySid(ref: LookupRef, sid: string, signal: AbortSignal): Promise<LookupOutcome>;
  byContent(ref: LookupRef, signal: AbortSignal): Promise<LookupOutcome>;
}

/** The lookups of one adapter. */
export function createTwilioLookups(options: TwilioLookupOptions): TwilioLookups {
  const { http, absence, from, skewMs } = options;

  const lookupBySid = async (ref: LookupRef, sid: string, signal: AbortSignal): Promise<LookupOutcome> => {
    const { status, json } = await http.getMessage(sid, signal);
    // A 404 for a sid Twilio itself returned is odd (deleted, wrong account): never proof of absence.
    if (status === 404) return inconclusive('sid_not_found');
    if (status !== 200) return inconclusive(`http_${status}`);
    const message = asRecord(json);
    if (message === null || message.sid !== sid) return inconclusive('unreadable_message');
    absence.remember(sid, ref.to);
    return {
      kind: 'found',
      messageId: sid,
      status: normaliseStatus(message.status, message.error_code),
      // The sid in the ref is the one this attempt's send returned.
      attempt: ref.attempt,
      ...detailOf(message),
    };
  };

  /**
   * Lists the messages to `ref.to` (from our sender when we have a fixed `From`; Twilio's list
   * filters are To, From and DateSent only, so with a messaging service the listing is by To),
   * all pages, and matches this key's secret inside each readable body. No `DateSent` filter:
   * `date_sent` is null while a message is queued, so a date-filtered listing would miss exactly
   * the accepted-but-not-yet-sent message we look for.
   */
  const lookupByContent = async (ref: LookupRef, signal: AbortSignal): Promise<LookupOutcome> => {
    // Without a secret nothing can be matched, so an empty listing would prove nothing either.
    if (ref.secret.length < MIN_SECRET_LENGTH) return inconclusive('content:no_secret');
    const windowStart = ref.attemptStartedAt - skewMs;
    // Mutated by the visitor (an object, so the compiler does not narrow it away across the await).
    const seen = {
      best: undefined as { sid: string; status: ProviderStatus; detail?: string } | undefined,
      unreadableMatch: false,
      maskedNumbers: 0,
      blankBodies: 0,
      unreadable: 0,
    };
    const filters: Record<string, string> = { To: ref.to, ...(from === undefined ? {} : { From: from }) };
    try {
      await http.walkListing(filters, signal, (message) => {
        if (message === null) {
          seen.unreadable += 1;
          return false;
        }
        const direction = message.direction;
        // Inbound messages (replies to us) are not ours to find; a missing direction could be anything.
        if (typeof direction === 'string' && !direction.startsWith('outbound')) return false;
        // Our absence probes (addressed to our own number) are never a user's message.
        if (isAbsenceProbe(message)) return false;
        const body = message.body;
        if (typeof body === 'string' && bodyCarriesSecret(body, ref.secret)) {
          const sid = message.sid;
          if (typeof sid !== 'string' || !MESSAGE_SID.test(sid)) {
            seen.unreadableMatch = true;
            return false;
          }
          const status = normaliseStatus(message.status, message.error_code);
          // Newest first: the first match that may have reached the user decides. A not-sent one
          // is kept only until something better turns up.
          if (!isNotSentStatus(status)) {
            seen.best = { sid, status, ...detailOf(message) };
            return true;
          }
          seen.best ??= { sid, status, ...detailOf(message) };
          return false;
        }
        // Any age counts for a match (an earlier attempt found late is found); only messages in
        // the attempt's window must be readable for a listing to prove absence.
        const created =
          typeof message.date_created === 'string' ? Date.parse(message.date_created) : Number.NaN;
        if (!Number.isNaN(created) && created < windowStart) return false;
        if (typeof body !== 'string' || body === '') seen.blankBodies += 1;
        if (message.to !== ref.to) seen.maskedNumbers += 1;
        return false;
      });
    } catch (error) {
      if (error instanceof IncompleteListing) return inconclusive(error.detail);
      throw error;
    }
    /** Why this listing cannot show that no other message exists; null when it can. */
    const proofBlock = async (): Promise<string | null> => {
      if (seen.unreadableMatch) return 'unreadable_match';
      if (seen.unreadable > 0) return 'content:unreadable_message';
      if (seen.maskedNumbers > 0) return 'content:masked_number';
      if (seen.blankBodies > 0) return 'content:blank_body';
      return absence.blocks(ref, signal);
    };
    const found = seen.best;
    if (found !== undefined) {
      // "Every message with this secret was never handed to a carrier" is a negative claim, like
      // absence: an invisible newer attempt could have been delivered. It needs the same proof.
      if (isNotSentStatus(found.status)) {
        const blocked = await proofBlock();
        if (blocked !== null) return inconclusive(`content:not_sent_only:${blocked}`);
      }
      absence.remember(found.sid, ref.to);
      // Content cannot tell this key's attempts apart (they carry the same secret): no `attempt`.
      return {
        kind: 'found',
        messageId: found.sid,
        status: found.status,
        ...(found.detail === undefined ? {} : { detail: found.detail }),
      };
    }
    const blocked = await proofBlock();
    if (blocked !== null) return inconclusive(blocked);
    // Complete, readable, unredacted, list-consistent: this read shows no message. The domain
    // still needs two such reads a settle time apart, both after the call deadline.
    return { kind: 'absent' };
  };

  return { bySid: lookupBySid, byContent: lookupByContent };
}
