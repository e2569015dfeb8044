import {
  type BudgetCounter,
  type BudgetPolicy,
  budgetCounters,
  retryAfterSeconds,
} from '../domain/budgets.js';
import type { Clock } from '../domain/clock.js';
import { type Fingerprinter, fingerprintVersion } from '../domain/fingerprint.js';
import { admit, type NotificationRequest } from '../domain/notification.js';
import { type DispatchPolicy, dispatchDeadline, isPastDispatchDeadline } from '../domain/policy.js';
import type { Cipher } from '../ports/cipher.js';
import type { CommandStore } from '../ports/command-store.js';
import { TransientFault } from '../ports/faults.js';
import { sealPayload } from './payload-seal.js';
import { type NotificationView, toView } from './view.js';

export interface AdmissionDeps {
  readonly store: CommandStore;
  readonly cipher: Cipher;
  readonly fingerprinter: Fingerprinter;
  readonly clock: Clock;
  readonly policy: DispatchPolicy;
  readonly providerName: string;
  /** Destination and country budgets; absent = none (docs/design.md#abuse-limits). */
  readonly budgets?: BudgetPolicy;
}

/** Facts about the destination established at the edge (never the number itself). */
export interface AdmissionContext {
  /** The number's region (ISO 3166 alpha-2), for per-country budgets. */
  readonly country?: string | undefined;
}

/** Every expected outcome of an admission; none of them is an error. */
export type AdmissionOutcome =
  | { readonly kind: 'admitted'; readonly view: NotificationView }
  | { readonly kind: 'replayed'; readonly view: NotificationView }
  | { readonly kind: 'conflict'; readonly idempotencyKey: string }
  /**
   * Another idempotency key already admitted this `event_id`, channel and template with a
   * different payload: nothing was stored or counted. `idempotencyKey` names that first command.
   * (With the same payload the outcome is `replayed`, with the first command's view.)
   */
  | { readonly kind: 'event_conflict'; readonly idempotencyKey: string }
  | { readonly kind: 'expired'; readonly idempotencyKey: string }
  /** A budget is spent: nothing was stored; the window frees up in `retryAfterSeconds`. */
  | {
      readonly kind: 'rate_limited';
      readonly scope: BudgetCounter['scope'];
      readonly retryAfterSeconds: number;
    };

/**
 * Admits a command exactly once per idempotency key and once per (`event_id`, channel,
 * template), whatever keys arrive. The hot path is one atomic conditional write and no read: a
 * concurrent duplicate loses the condition and gets the winner's record (or, for another key of
 * the same event, the winner's claim) back in the same call. With budgets, the same write also
 * counts the admission against them, so a replay or a second key is never counted and a refusal
 * stores nothing. A second key with the same payload is answered with the first command's view
 * (a replay: the client that made a fresh key per HTTP retry gets its one SMS); with another
 * payload it is an `event_conflict` naming the first key.
 */
export async function admitNotification(
  deps: AdmissionDeps,
  request: NotificationRequest,
  context: AdmissionContext = {},
): Promise<AdmissionOutcome> {
  const now = deps.clock.now();
  const payloadFingerprint = deps.fingerprinter.payload(request);
  const samePayload = (stored: { readonly payloadFingerprint: string }) =>
    matches(deps.fingerprinter, stored.payloadFingerprint, request);
  if (isPastDispatchDeadline(request, now, deps.policy)) {
    // Nothing new may be stored; but a caller retrying an earlier, admitted request still gets its result.
    const existing = await deps.store.get(request.idempotencyKey);
    if (existing) return compare(existing.record, samePayload);
    // Or its event under another key (a fresh key per retry): the rare path may afford the query.
    const first = (await deps.store.byEvent(request.eventId)).find(
      (r) => r.channel === request.channel && r.template === request.template,
    );
    if (!first) return { kind: 'expired', idempotencyKey: request.idempotencyKey };
    return compareEvent(first, samePayload);
  }
  const destinationFingerprint = deps.fingerprinter.destination(request.sensitive.phone);
  const { next, evidence } = admit({
    request,
    destinationFingerprint,
    payloadFingerprint,
    providerName: deps.providerName,
    now,
    // The reconciler looks if the queue never delivered, and at the latest when no send can start any more.
    safetyNetAt: Math.min(now + deps.policy.queueSafetyNetMs, dispatchDeadline(request, deps.policy)),
  });
  const sealed = await sealPayload(deps.cipher, request.idempotencyKey, request.sensitive);
  const budgets = deps.budgets;
  // Under every key held (the current one first, with the country's): a number's budget carries
  // across a change of the current key (docs/security.md#fingerprint-key-rotation).
  const counters = budgets
    ? deps.fingerprinter
        .destinations(request.sensitive.phone)
        .flatMap((fingerprint, i) =>
          budgetCounters(budgets, fingerprint, i === 0 ? context.country : undefined, now),
        )
    : [];
  const result = await deps.store.admit(next, evidence, sealed, counters);
  switch (result.kind) {
    case 'admitted':
      return { kind: 'admitted', view: toView(result.stored.record) };
    case 'exists':
      return compare(result.stored.record, samePayload);
    case 'event_taken': {
      if (!samePayload(result.first)) {
        return { kind: 'event_conflict', idempotencyKey: result.first.idempotencyKey };
      }
      const first = await deps.store.get(result.first.idempotencyKey);
      // The guard outlived its command (TTL deletes each item on its own): still never a second one.
      if (!first) return { kind: 'event_conflict', idempotencyKey: result.first.idempotencyKey };
      return compareEvent(first.record, samePayload);
    }
    case 'over_budget':
      return {
        kind: 'rate_limited',
        scope: result.scope,
        retryAfterSeconds: retryAfterSeconds(result.freesAt, now),
      };
  }
}

/**
 * A stored payload fingerprint names a newer key than this instance holds: a rotation is rolling
 * out (docs/security.md#fingerprint-key-rotation). Nothing is wrong with the request, and an
 * instance that holds the key can answer it: retry-safe (503).
 */
class FingerprintKeyNotHeldError extends TransientFault {
  readonly code = 'fingerprint_key_not_held';
}

/**
 * Whether a stored payload fingerprint is this request's, under the key it names. A newer key not
 * held here is a transient fault; a retired one (older than the current key and dropped from the
 * ring) can no longer vouch for the payload: a conflict, as the rotation procedure documents.
 */
function matches(fingerprinter: Fingerprinter, stored: string, request: NotificationRequest): boolean {
  const same = fingerprinter.payloadMatches(stored, request);
  if (same !== undefined) return same;
  if ((fingerprintVersion(stored) ?? 0) > fingerprinter.version) {
    throw new FingerprintKeyNotHeldError(
      `a stored payload fingerprint names a key newer than this instance's current version ${fingerprinter.version}`,
    );
  }
  return false;
}

function compare(
  existing: { readonly payloadFingerprint: string } & Parameters<typeof toView>[0],
  samePayload: (stored: { readonly payloadFingerprint: string }) => boolean,
): AdmissionOutcome {
  if (!samePayload(existing)) {
    return { kind: 'conflict', idempotencyKey: existing.idempotencyKey };
  }
  return { kind: 'replayed', view: toView(existing) };
}

/** A request for an event another key admitted: the same payload is a replay of that command. */
function compareEvent(
  first: { readonly payloadFingerprint: string } & Parameters<typeof toView>[0],
  samePayload: (stored: { readonly payloadFingerprint: string }) => boolean,
): AdmissionOutcome {
  if (!samePayload(first)) {
    return { kind: 'event_conflict', idempotencyKey: first.idempotencyKey };
  }
  return { kind: 'replayed', view: toView(first) };
}
