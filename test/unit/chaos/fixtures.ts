/**
 * A small, consistent chaos dataset (one delivered key, one expired key, one rejected event) that
 * every invariant accepts; tests break one thing at a time and watch the matching invariant fail.
 */

import type { ChaosDataset } from '../../../scripts/chaos/invariants.js';
import { decideDispatch, recordSendOutcome } from '../../../shared/domain/dispatch.js';
import {
  admit,
  applyTransition,
  type EvidenceRecord,
  type NotificationRecord,
} from '../../../shared/domain/notification.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';

export const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
export const PHONE = '+14155550123';
export const CODE = '9123456789';
export const URL_SECRET = 'https://reset.chaos.example/r?token=tok_0123456789abcdef01234567';
const iso = (ms: number) => new Date(ms).toISOString();

function admitted(key: string, expiresAt: number): { record: NotificationRecord; evidence: EvidenceRecord } {
  const { next, evidence } = admit({
    request: {
      idempotencyKey: key,
      eventId: `evt-${key}`,
      channel: 'sms',
      template: 'password_reset',
      locale: 'en',
      expiresAt,
      sensitive: { phone: PHONE, params: { code: CODE } },
    },
    destinationFingerprint: 'fp1:0123456789abcdef0123456789abcdef',
    payloadFingerprint: 'pf1:feedface',
    providerName: 'simulator',
    now: T0,
    safetyNetAt: T0 + DEFAULT_POLICY.queueSafetyNetMs,
  });
  return { record: next, evidence };
}

/** Key `k-ok`: admitted, claimed, accepted (SM1), delivered. */
function deliveredKey() {
  const first = admitted('k-ok', T0 + 10 * 60_000);
  const decision = decideDispatch(first.record, T0 + 100, DEFAULT_POLICY, 'sender-1');
  if (decision.kind !== 'claim') throw new Error('fixture: expected a claim');
  const claimed = applyTransition(first.record, decision.intent);
  const sent = applyTransition(
    claimed.next,
    recordSendOutcome(claimed.next, { kind: 'accepted', messageId: 'SM1' }, T0 + 300, DEFAULT_POLICY),
  );
  const delivered = applyTransition(sent.next, {
    to: 'delivered',
    reason: 'status_polled',
    actor: 'reconciler',
    at: T0 + 2_000,
  });
  return {
    record: delivered.next,
    evidence: [first.evidence, claimed.evidence, sent.evidence, delivered.evidence],
  };
}

/** Key `k-exp`: admitted with a short life, expired before dispatch, never sent. */
function expiredKey() {
  const first = admitted('k-exp', T0 + 7_000);
  const expired = applyTransition(first.record, {
    to: 'expired',
    reason: 'expired_before_dispatch',
    actor: 'sender',
    at: T0 + 2_500,
  });
  return { record: expired.next, evidence: [first.evidence, expired.evidence] };
}

/** The consistent dataset. Every call returns fresh objects. */
export function aGoodDataset(): ChaosDataset {
  const ok = deliveredKey();
  const exp = expiredKey();
  return {
    ledger: [
      {
        id: 'SM1',
        client_reference: 'k-ok#1',
        accepted_at: iso(T0 + 200),
        status: 'delivered',
        validity_period_seconds: 599,
      },
    ],
    requests: [{ received_at: iso(T0 + 150), client_reference: 'k-ok#1', fault: null, outcome: 'recorded' }],
    commands: [ok.record, exp.record],
    evidence: [...ok.evidence, ...exp.evidence],
    items: [
      {
        pk: 'k-ok',
        sk: 'CMD',
        state: 'delivered',
        destination_fingerprint: 'fp1:0123456789abcdef0123456789abcdef',
      },
      { pk: 'k-ok', sk: 'EV#000000002', reason: 'claimed', at: T0 + 100 },
    ],
    logLines: [
      JSON.stringify({
        level: 'WARN',
        message: 'dispatch failed',
        idempotency_key: 'k-ok',
        error: 'injected crash',
      }),
      JSON.stringify({ level: 'INFO', message: 'reconciled', timestamp: iso(T0), ttl: 1_799_999_999 }),
    ],
    observedAt: T0 + 60_000,
    stuckBoundMs: 30_000,
    secrets: { phones: [PHONE], codes: [CODE], urls: [URL_SECRET] },
    admissions: [
      {
        idempotencyKey: 'k-ok',
        kind: 'normal',
        responses: [
          { variant: 'original', status: 202 },
          { variant: 'original', status: 200 },
          { variant: 'conflict', status: 409, code: 'idempotency_key_reused' },
        ],
      },
      {
        idempotencyKey: 'k-late',
        kind: 'too_late',
        responses: [{ variant: 'original', status: 422, code: 'already_expired' }],
      },
    ],
    dispatchMarginMs: 5_000,
    events: [
      { eventId: 'evt-k-ok', channel: 'sms', template: 'password_reset', keys: ['k-ok'], spellings: [PHONE] },
      {
        eventId: 'evt-k-exp',
        channel: 'sms',
        template: 'password_reset',
        keys: ['k-exp'],
        spellings: [PHONE],
      },
      {
        eventId: 'evt-k-late',
        channel: 'sms',
        template: 'password_reset',
        keys: ['k-late'],
        spellings: [PHONE],
      },
    ],
  };
}
