/**
 * Fixture factories for the domain unit tests. Every builder returns a valid, fully populated
 * value and takes overrides, so each test states only what matters to it.
 */
import type {
  AdmissionInput,
  NotificationRecord,
  NotificationRequest,
} from '../../../shared/domain/notification.js';
import { DEFAULT_POLICY, type DispatchPolicy } from '../../../shared/domain/policy.js';
import { Actor, NotificationState, ReasonCode } from '../../../shared/domain/states.js';

/** A fixed instant: 2026-11-29T12:00:00Z. */
export const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;

export const ALL_ACTORS: readonly Actor[] = Object.values(Actor);

/** Sensitive values used by the fixtures: tests check that they never leak. */
export const PHONE = '+14155550123';
export const CODE = '483920';
export const RESET_URL = 'https://example.test/reset?token=s3cr3t-t0ken';

/** A 32-byte fingerprint key (the minimum accepted). */
export function aKey(fill = 7, length = 32): Uint8Array {
  return new Uint8Array(length).fill(fill);
}

export function aPolicy(overrides: Partial<DispatchPolicy> = {}): DispatchPolicy {
  return { ...DEFAULT_POLICY, ...overrides };
}

export function aRequest(overrides: Partial<NotificationRequest> = {}): NotificationRequest {
  return {
    idempotencyKey: 'sms:password_reset:evt-1',
    eventId: 'evt-1',
    channel: 'sms',
    template: 'password_reset',
    locale: 'en',
    expiresAt: T0 + 10 * MINUTE,
    sensitive: { phone: PHONE, params: { code: CODE } },
    ...overrides,
  };
}

export function anAdmissionInput(overrides: Partial<AdmissionInput> = {}): AdmissionInput {
  return {
    request: aRequest(),
    destinationFingerprint: 'fp1:0123456789abcdef0123456789abcdef',
    payloadFingerprint: 'pf1:feedface',
    providerName: 'simulator',
    now: T0,
    safetyNetAt: T0 + DEFAULT_POLICY.queueSafetyNetMs,
    ...overrides,
  };
}

/** A freshly admitted record (state `accepted`, version 1), with overrides applied on top. */
export function aRecord(overrides: Partial<NotificationRecord> = {}): NotificationRecord {
  const base: NotificationRecord = {
    idempotencyKey: 'sms:password_reset:evt-1',
    eventId: 'evt-1',
    channel: 'sms',
    template: 'password_reset',
    locale: 'en',
    state: NotificationState.accepted,
    version: 1,
    attempts: 0,
    createdAt: T0,
    updatedAt: T0,
    expiresAt: T0 + 10 * MINUTE,
    destinationFingerprint: 'fp1:0123456789abcdef0123456789abcdef',
    payloadFingerprint: 'pf1:feedface',
    provider: { name: 'simulator' },
    lastReason: ReasonCode.admitted,
    nextAttemptAt: T0,
    dueAt: T0 + DEFAULT_POLICY.queueSafetyNetMs,
    checks: 0,
    closed: false,
  };
  return { ...base, ...overrides };
}

/** A record currently claimed by a sender (attempt 1, lease held). */
export function aDispatchingRecord(overrides: Partial<NotificationRecord> = {}): NotificationRecord {
  const claimed = omit(aRecord(), 'nextAttemptAt');
  return {
    ...claimed,
    state: NotificationState.dispatching,
    version: 2,
    attempts: 1,
    lastReason: ReasonCode.claimed,
    leaseUntil: T0 + 8 * SECOND,
    leaseOwner: 'sender-a',
    dueAt: T0 + 8 * SECOND,
    ...overrides,
  };
}

/** A record whose last send had an unknown outcome that began at `unknownSince` (T0). */
export function anUnknownRecord(overrides: Partial<NotificationRecord> = {}): NotificationRecord {
  return {
    ...omit(aRecord(), 'nextAttemptAt'),
    state: NotificationState.dispatchUnknown,
    version: 3,
    attempts: 1,
    lastReason: ReasonCode.providerTimeout,
    unknownSince: T0,
    dueAt: T0 + SECOND,
    checks: 0,
    ...overrides,
  };
}

/** A record the provider accepted at `sentAt` (T0), still polled for status. */
export function aSentRecord(overrides: Partial<NotificationRecord> = {}): NotificationRecord {
  return {
    ...omit(aRecord(), 'nextAttemptAt'),
    state: NotificationState.sent,
    version: 3,
    attempts: 1,
    lastReason: ReasonCode.providerAccepted,
    provider: { name: 'simulator', messageId: 'SM-1' },
    sentAt: T0,
    dueAt: T0 + DEFAULT_POLICY.statusPollMs,
    ...overrides,
  };
}

/** A record in `state` carrying every optional scheduling field, to see what transitions drop. */
export function aRecordWithEverySchedulingField(
  state: NotificationState,
  overrides: Partial<NotificationRecord> = {},
): NotificationRecord {
  return aRecord({
    state,
    version: 4,
    attempts: 1,
    leaseUntil: T0 + 8 * SECOND,
    leaseOwner: 'sender-a',
    nextAttemptAt: T0 + SECOND,
    unknownSince: T0,
    sentAt: T0,
    dueAt: T0 + 2 * SECOND,
    ...overrides,
  });
}

/** A copy of `value` without `keys` (records never hold "present but undefined" fields). */
export function omit<T extends object, K extends keyof T>(value: T, ...keys: K[]): Omit<T, K> {
  const copy: Partial<T> = { ...value };
  for (const key of keys) delete copy[key];
  return copy as Omit<T, K>;
}
