import {
  type BudgetCounter,
  type BudgetPolicy,
  budgetCounters,
  retryAfterSeconds,
} from '../domain/budgets.js';
import type { Clock } from '../domain/clock.js';
import type { Fingerprinter } from '../domain/fingerprint.js';
import { admit, type NotificationRequest } from '../domain/notification.js';
import { type DispatchPolicy, dispatchDeadline, isPastDispatchDeadline } from '../domain/policy.js';
import type { Cipher } from '../ports/cipher.js';
import type { NotificationStore } from '../ports/store.js';
import { sealPayload } from './payload-seal.js';
import { type NotificationView, toView } from './view.js';

export interface AdmissionDeps {
  readonly store: NotificationStore;
  readonly cipher: Cipher;
  readonly fingerprinter: Fingerprinter;
  readonly clock: Clock;
  readonly policy: DispatchPolicy;
  readonly providerName: string;
  /** Destination and country budgets; absent = none (DESIGN.md section 9). */
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
  | { readonly kind: 'expired'; readonly idempotencyKey: string }
  /** A budget is spent: nothing was stored; the window frees up in `retryAfterSeconds`. */
  | {
      readonly kind: 'rate_limited';
      readonly scope: BudgetCounter['scope'];
      readonly retryAfterSeconds: number;
    };

/**
 * Admits a command exactly once. The hot path is one conditional PutItem and no read: a
 * concurrent duplicate loses the condition and gets the winner's record back in the same call.
 * With budgets, the same write also counts the admission against them (one transaction), so a
 * replay is never counted and a refusal stores nothing.
 */
export async function admitNotification(
  deps: AdmissionDeps,
  request: NotificationRequest,
  context: AdmissionContext = {},
): Promise<AdmissionOutcome> {
  const now = deps.clock.now();
  const payloadFingerprint = deps.fingerprinter.payload(request);
  if (isPastDispatchDeadline(request, now, deps.policy)) {
    // Nothing new may be stored; but a caller retrying an earlier, admitted request still gets its result.
    const existing = await deps.store.get(request.idempotencyKey);
    if (!existing) return { kind: 'expired', idempotencyKey: request.idempotencyKey };
    return compare(existing.record, payloadFingerprint);
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
  const counters = deps.budgets
    ? budgetCounters(deps.budgets, destinationFingerprint, context.country, now)
    : [];
  const result = await deps.store.admit(next, evidence, sealed, counters);
  switch (result.kind) {
    case 'admitted':
      return { kind: 'admitted', view: toView(result.stored.record) };
    case 'exists':
      return compare(result.stored.record, payloadFingerprint);
    case 'over_budget':
      return {
        kind: 'rate_limited',
        scope: result.scope,
        retryAfterSeconds: retryAfterSeconds(result.freesAt, now),
      };
  }
}

function compare(
  existing: { readonly payloadFingerprint: string } & Parameters<typeof toView>[0],
  payloadFingerprint: string,
): AdmissionOutcome {
  if (existing.payloadFingerprint !== payloadFingerprint) {
    return { kind: 'conflict', idempotencyKey: existing.idempotencyKey };
  }
  return { kind: 'replayed', view: toView(existing) };
}
