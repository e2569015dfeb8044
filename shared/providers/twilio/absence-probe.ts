/**
 * The absence probe: a message of our own that Twilio records now and never sends, so that an
 * absence proof needs no other traffic. The canary (absence.ts) needs a message of the account
 * created no earlier than the attempt's claim, read clean and seen in a listing; in a quiet
 * account there is none, and a `timeout_before_accept` would stay unproven until expiry.
 *
 * The probe is a scheduled message (Twilio Message Scheduling: `ScheduleType=fixed`, `SendAt` 15
 * minutes to 7 days ahead, with a messaging service), canceled at once (`POST Status=canceled`;
 * scheduling and canceled messages are free, Twilio bills only messages sent). How it stays off
 * every handset when something fails half-way (docs/providers/twilio.md, "Absence probe"):
 *
 * - It is addressed only to `to`, a number the operator owns (PROVIDER_ABSENCE_PROBE_TO, best a
 *   Twilio number of the account, which has no handset), never to a user's number.
 * - It is created only with `MessagingServiceSid`: without it Twilio drops the schedule and sends
 *   at once, so the adapter refuses a probe number without a messaging service.
 * - `SendAt` is {@link PROBE_SEND_AFTER_MS} ahead: a probe whose cancel failed, whose create timed
 *   out (sid unknown) or whose process crashed before the cancel is found by the next run's sweep
 *   (a listing of `to`, the probe body, status `scheduled`) and canceled, days before it could go out.
 * - Its body is {@link ABSENCE_PROBE_BODY}: no secret, no digits, never a user's code or link; the
 *   content lookup skips it.
 * - At most one run per `intervalMs` per process, and only when an absence proof waits on freshness.
 */
import type { Clock } from '../../domain/clock.js';
import { MESSAGE_SID } from './classification.js';

/** The probe's body: recognisable in any listing, free of digits so that no code can match inside it. */
export const ABSENCE_PROBE_BODY =
  'reset-notifier absence probe: scheduled and canceled at once, never sent to anyone';

/**
 * How far ahead the probe is scheduled: inside every window Twilio documents (at least 15 minutes,
 * at most 7 days in its FAQ, 35 days on the scheduling page), and long enough for any later run to
 * find and cancel a probe left scheduled.
 */
export const PROBE_SEND_AFTER_MS = 6 * 24 * 3_600_000;

/** Canceled probes older than this are deleted by the sweep (they would only lengthen listings). */
export const PROBE_DELETE_AFTER_MS = 3_600_000;

type JsonRecord = Record<string, unknown>;

/** What the probe needs from the adapter: HTTP under the lookup's signal, and a complete listing walk. */
export interface AbsenceProbeOptions {
  readonly clock: Clock;
  /** The number the probe is addressed to: one the operator owns. */
  readonly to: string;
  readonly messagingServiceSid: string;
  /** At most one run per this many ms (the canary interval). */
  readonly intervalMs: number;
  /** `POST` (create: no sid; update: a sid) or `DELETE`; never throws for an HTTP status. */
  readonly request: (
    method: 'POST' | 'DELETE',
    sid: string | undefined,
    form: URLSearchParams | undefined,
    signal: AbortSignal,
  ) => Promise<{ status: number; json: JsonRecord | null }>;
  /** Walks every message to `to`; resolves null when the listing was read to its end, else why not. */
  readonly walk: (signal: AbortSignal, visit: (message: JsonRecord | null) => void) => Promise<string | null>;
  /** Sids the sweep must not delete (the canary's current subjects). */
  readonly keep: (sid: string) => boolean;
}

/** A probe run: a fresh probe's sid, or why there is none now (an `absence_pending:` detail). */
export type ProbeRun =
  | { readonly kind: 'created'; readonly sid: string }
  | { readonly kind: 'none'; readonly detail: string };

/** The probe of one adapter instance (its rate limit and the probes it still has to cancel). */
export interface AbsenceProbe {
  run(signal: AbortSignal): Promise<ProbeRun>;
  /**
   * Retries the cancel of probes whose cancel failed, at most once per interval, whether or not an
   * absence waits: a busy account may never need another probe run. Never throws.
   */
  tidy(signal: AbortSignal): Promise<void>;
}

/** Whether a listed message is a probe (of this or any other process): never a user's message. */
export function isAbsenceProbe(message: JsonRecord): boolean {
  return message.body === ABSENCE_PROBE_BODY;
}

/** Twilio's error code in an error body, for a detail such as `twilio_35114`. */
const codeOf = (status: number, json: JsonRecord | null): string =>
  typeof json?.code === 'number' ? `twilio_${json.code}` : `http_${status}`;

export function createAbsenceProbe(options: AbsenceProbeOptions): AbsenceProbe {
  const { clock, request } = options;
  let lastRunAt: number | undefined;
  let lastTidyAt: number | undefined;
  // Probes this process created whose cancel is not confirmed: canceled by sid on the next run,
  // even when a lagging listing does not show them yet.
  const uncanceled = new Set<string>();

  /** Cancels one scheduled probe; true when it is canceled (or no longer cancelable). */
  const cancel = async (sid: string, signal: AbortSignal): Promise<boolean> => {
    try {
      const { status, json } = await request(
        'POST',
        sid,
        new URLSearchParams({ Status: 'canceled' }),
        signal,
      );
      // 30409: no longer `scheduled` (canceled by another run, or past it): nothing left to cancel.
      if ((status === 200 && json?.status === 'canceled') || json?.code === 30409 || status === 404) {
        uncanceled.delete(sid);
        return true;
      }
    } catch {
      // Timed out or reset: maybe canceled, maybe not; asked again on the next run.
    }
    uncanceled.add(sid);
    return false;
  };

  /**
   * Cancels every probe still scheduled (ours from before, or a crashed process's) and deletes old
   * canceled ones. Null when the listing was read to its end; else why the sweep is incomplete.
   */
  const sweep = async (signal: AbortSignal): Promise<string | null> => {
    for (const sid of [...uncanceled]) await cancel(sid, signal);
    const scheduled: string[] = [];
    const stale: string[] = [];
    const now = clock.now();
    const incomplete = await options.walk(signal, (message) => {
      if (message === null || !isAbsenceProbe(message)) return;
      const sid = message.sid;
      if (typeof sid !== 'string' || !MESSAGE_SID.test(sid)) return;
      if (message.status === 'scheduled') scheduled.push(sid);
      const created =
        typeof message.date_created === 'string' ? Date.parse(message.date_created) : Number.NaN;
      if (message.status === 'canceled' && now - created > PROBE_DELETE_AFTER_MS && !options.keep(sid))
        stale.push(sid);
    });
    if (incomplete !== null) return incomplete;
    for (const sid of scheduled) await cancel(sid, signal);
    for (const sid of stale) {
      // Best effort (Twilio may answer 20009 for a while): a canceled probe left listed is harmless.
      await request('DELETE', sid, undefined, signal).catch(() => undefined);
    }
    return null;
  };

  return {
    async run(signal) {
      const now = clock.now();
      if (lastRunAt !== undefined && now - lastRunAt < options.intervalMs) {
        return { kind: 'none', detail: 'absence_pending:probe_interval' };
      }
      // Counted before the first call: a failing run is not retried until the next interval.
      lastRunAt = now;
      // No new probe before the old ones are canceled: leftovers stay bounded by one per interval.
      const incomplete = await sweep(signal);
      if (incomplete !== null) return { kind: 'none', detail: `absence_pending:probe_sweep:${incomplete}` };
      const form = new URLSearchParams({
        To: options.to,
        MessagingServiceSid: options.messagingServiceSid,
        Body: ABSENCE_PROBE_BODY,
        ScheduleType: 'fixed',
        SendAt: new Date(now + PROBE_SEND_AFTER_MS).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      });
      let created: { status: number; json: JsonRecord | null };
      try {
        created = await request('POST', undefined, form, signal);
      } catch {
        // The probe may exist (a timeout after Twilio recorded it): the next run's sweep cancels it.
        return { kind: 'none', detail: 'absence_pending:probe_create_unanswered' };
      }
      const sid = created.json?.sid;
      if (created.status !== 201 || typeof sid !== 'string' || !MESSAGE_SID.test(sid)) {
        return {
          kind: 'none',
          detail: `absence_pending:probe_rejected:${codeOf(created.status, created.json)}`,
        };
      }
      if (created.json?.status !== 'scheduled') {
        // Not scheduled means on its way to our own number: nothing to cancel, and not a probe we trust.
        return { kind: 'none', detail: 'absence_pending:probe_not_scheduled' };
      }
      // Canceled before it is read: the shortest time scheduled. A failed cancel is retried on the
      // next run; the probe still speaks for freshness (it was created now).
      await cancel(sid, signal);
      return { kind: 'created', sid };
    },

    async tidy(signal) {
      const now = clock.now();
      if (uncanceled.size === 0) return;
      if (lastTidyAt !== undefined && now - lastTidyAt < options.intervalMs) return;
      if (lastRunAt !== undefined && now - lastRunAt < options.intervalMs) return;
      lastTidyAt = now;
      for (const sid of [...uncanceled]) await cancel(sid, signal);
    },
  };
}
