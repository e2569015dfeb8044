/**
 * Every source of a `reason_detail`: send outcomes, lookups, receipts, expiry and retry exhaustion.
 * Each transition that ends or holds a command without an SMS must say why, in the grammar.
 */
import { describe, expect, it } from 'vitest';
import {
  applyLookup,
  applyReceipt,
  decideDispatch,
  decideReconcile,
  recordSendOutcome,
} from '../../../shared/domain/dispatch.js';
import { applyTransition, type TransitionIntent } from '../../../shared/domain/notification.js';
import { AbsenceProof, type LookupOutcome, type SendOutcome } from '../../../shared/domain/provider.js';
import { reasonDetailFrom } from '../../../shared/domain/reason-detail.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import {
  aDispatchingRecord,
  anUnknownRecord,
  aPolicy,
  aRecord,
  aSentRecord,
  MINUTE,
  SECOND,
  T0,
} from './fixtures.js';

const PROVABLE = { absenceProof: AbsenceProof.conditional } as const;
const policy = aPolicy({
  dispatchMarginMs: 5 * SECOND,
  reconcileSettleMs: 10 * SECOND,
  backoffBaseMs: SECOND,
  backoffMaxMs: MINUTE,
  queueSafetyNetMs: MINUTE,
});

const asIntent = (value: unknown): TransitionIntent => {
  expect(value).toHaveProperty('to');
  return value as TransitionIntent;
};

describe('send outcomes carry the adapter’s classification detail', () => {
  const twilio = aDispatchingRecord({ provider: { name: 'twilio' } });

  it.each<[string, SendOutcome, string, string]>([
    [
      'permanent',
      { kind: 'not_sent_permanent', detail: 'twilio_21211' },
      R.providerRejectedPermanent,
      'twilio:21211',
    ],
    [
      'retryable',
      { kind: 'not_sent_retryable', detail: 'http_429' },
      R.providerRejectedRetryable,
      'twilio:http_429',
    ],
    [
      'configuration',
      { kind: 'not_sent_retryable', detail: 'twilio:config:21408' },
      R.providerRejectedRetryable,
      'twilio:config:21408',
    ],
    ['unknown', { kind: 'unknown', detail: 'timeout', timedOut: true }, R.providerTimeout, 'twilio:timeout'],
  ])('%s: evidence and record say %s', (_what, outcome, reason, detail) => {
    // Act
    const applied = applyTransition(twilio, recordSendOutcome(twilio, outcome, T0 + SECOND, policy));

    // Assess
    expect(applied.evidence.reason).toBe(reason);
    expect(applied.evidence.reasonDetail).toBe(detail);
    expect(applied.next.reasonDetail).toBe(detail);
  });

  it('an accepted send has no detail, and clears the one before it', () => {
    // Prepare
    const record = aDispatchingRecord({ reasonDetail: reasonDetailFrom('twilio', 'http_429') });

    // Act
    const applied = applyTransition(
      record,
      recordSendOutcome(record, { kind: 'accepted', messageId: 'SM1' }, T0 + SECOND, policy),
    );

    // Assess
    expect(applied.evidence.reasonDetail).toBeUndefined();
    expect(applied.next.reasonDetail).toBeUndefined();
  });
});

describe('lookups: why an unknown stays unknown', () => {
  const unknown = anUnknownRecord({ provider: { name: 'twilio' }, callDeadline: T0 });

  it('an inconclusive read records the adapter’s why (the quiet-account canary)', () => {
    // Prepare
    const lookup: LookupOutcome = {
      kind: 'inconclusive',
      detail: 'absence_pending:canary_older_than_attempt',
    };

    // Act
    const intent = asIntent(applyLookup(unknown, lookup, T0 + 2 * SECOND, policy, PROVABLE));

    // Assess
    expect(intent.reason).toBe(R.reconcileInconclusive);
    expect(intent.reasonDetail).toBe('absence_pending:canary_older_than_attempt');
  });

  it('a read the adapter cannot make complete is named with its provider', () => {
    // Act
    const intent = asIntent(
      applyLookup(
        unknown,
        { kind: 'inconclusive', detail: 'content:masked_number' },
        T0 + SECOND,
        policy,
        PROVABLE,
      ),
    );

    // Assess
    expect(intent.reasonDetail).toBe('twilio:content:masked_number');
  });

  it('the first absent read waits for the second one; inside the settle time it says so', () => {
    // Act
    const first = asIntent(applyLookup(unknown, { kind: 'absent' }, T0 + SECOND, policy, PROVABLE));
    const afterFirst = applyTransition(unknown, first).next;
    const early = asIntent(applyLookup(afterFirst, { kind: 'absent' }, T0 + 3 * SECOND, policy, PROVABLE));

    // Assess
    expect(first).toMatchObject({ reason: R.absenceObserved, reasonDetail: 'absence_pending:second_read' });
    expect(early).toMatchObject({
      reason: R.reconcileInconclusive,
      reasonDetail: 'absence_pending:settle_time',
    });
  });

  it('an absent read before the call deadline says the call had not ended', () => {
    // Prepare
    const inFlight = anUnknownRecord({ callDeadline: T0 + 5 * SECOND });

    // Act
    const intent = asIntent(applyLookup(inFlight, { kind: 'absent' }, T0 + SECOND, policy, PROVABLE));

    // Assess
    expect(intent.reasonDetail).toBe('absence_pending:call_not_ended');
  });

  it('a provider that cannot prove absence says so', () => {
    // Act
    const intent = asIntent(
      applyLookup(unknown, { kind: 'absent' }, T0 + SECOND, policy, { absenceProof: AbsenceProof.never }),
    );

    // Assess
    expect(intent.reasonDetail).toBe('absence_unprovable');
  });

  it('unknown_at_expiry carries the last read’s why, or the one before it when that read had none', () => {
    // Prepare
    const late = anUnknownRecord({
      provider: { name: 'twilio' },
      attempts: 2,
      expiresAt: T0 + 20 * SECOND,
      reasonDetail: reasonDetailFrom('twilio', 'absence_pending:canary_older_than_attempt'),
    });
    const olderAttemptNotSent = { kind: 'found', messageId: 'SM1', status: 'not_sent', attempt: 1 } as const;

    // Act
    const withWhy = asIntent(
      applyLookup(
        late,
        { kind: 'inconclusive', detail: 'absence_disabled:redaction_on' },
        T0 + MINUTE,
        policy,
        PROVABLE,
      ),
    );
    const fromBefore = asIntent(applyLookup(late, olderAttemptNotSent, T0 + MINUTE, policy, PROVABLE));

    // Assess
    expect(withWhy).toMatchObject({
      reason: R.unknownAtExpiry,
      reasonDetail: 'absence_disabled:redaction_on',
    });
    expect(fromBefore).toMatchObject({
      reason: R.unknownAtExpiry,
      reasonDetail: 'absence_pending:canary_older_than_attempt',
    });
  });

  it('unknown_at_expiry after an absent read the proof could not use yet says where the proof stood', () => {
    // Prepare
    const late = anUnknownRecord({ expiresAt: T0 + 20 * SECOND, callDeadline: T0 + MINUTE });

    // Act
    const intent = asIntent(applyLookup(late, { kind: 'absent' }, T0 + 30 * SECOND, policy, PROVABLE));

    // Assess
    expect(intent).toMatchObject({
      reason: R.unknownAtExpiry,
      reasonDetail: 'absence_pending:call_not_ended',
    });
  });

  it('a status poll and a reconciled find carry the provider’s code when the adapter gives one', () => {
    // Prepare
    const found = {
      kind: 'found',
      messageId: 'SM-1',
      status: 'undelivered',
      detail: 'twilio:30003',
    } as const;

    // Act
    const polled = asIntent(applyLookup(aSentRecord(), found, T0 + MINUTE, policy, PROVABLE));
    const reconciled = asIntent(applyLookup(unknown, found, T0 + SECOND, policy, PROVABLE));

    // Assess
    expect(polled).toMatchObject({ reason: R.statusPolled, reasonDetail: 'twilio:30003' });
    expect(reconciled).toMatchObject({ reason: R.reconciledFound, reasonDetail: 'twilio:30003' });
  });
});

describe('receipts carry the provider’s status and code', () => {
  it('an undelivered receipt says which code', () => {
    // Prepare
    const sent = aSentRecord();

    // Act
    const intent = asIntent(
      applyReceipt(
        sent,
        { attempt: 1, messageId: 'SM-1', status: 'undelivered', detail: 'twilio:undelivered:30003' },
        T0 + SECOND,
        policy,
      ),
    );

    // Assess
    expect(intent).toMatchObject({ reason: R.deliveryReceipt, reasonDetail: 'twilio:undelivered:30003' });
  });
});

describe('expiry and retry exhaustion say why no attempt followed', () => {
  it('never claimed', () => {
    // Prepare
    const record = aRecord({ expiresAt: T0 + 10 * SECOND, dueAt: T0 });

    // Act
    const step = decideReconcile(record, T0 + 9 * SECOND, policy);

    // Assess
    expect(step).toMatchObject({ kind: 'transition', intent: { reasonDetail: 'never_claimed' } });
  });

  it('a retry backoff that ran past the deadline, with the refusal that started it', () => {
    // Prepare
    const dispatching = aDispatchingRecord({ provider: { name: 'twilio' }, expiresAt: T0 + 20 * SECOND });
    const refused = applyTransition(
      dispatching,
      recordSendOutcome(
        dispatching,
        { kind: 'not_sent_retryable', detail: 'twilio:config:21408' },
        T0 + SECOND,
        policy,
      ),
    ).next;

    // Act
    const decision = decideDispatch(refused, T0 + 15 * SECOND, policy, 'sender-b');

    // Assess
    expect(decision).toMatchObject({
      kind: 'transition',
      intent: { reason: R.expiredBeforeDispatch, reasonDetail: 'backoff_past_deadline:twilio:config:21408' },
    });
  });

  it('due again but not claimed in time', () => {
    // Prepare
    const record = aRecord({ attempts: 1, lastReason: R.reconciledAbsent, expiresAt: T0 + 10 * SECOND });

    // Act
    const decision = decideDispatch(record, T0 + 9 * SECOND, policy, 'sender-a');

    // Assess
    expect(decision).toMatchObject({ intent: { reasonDetail: 'not_claimed_in_time' } });
  });

  it('retry exhaustion names the last refusal', () => {
    // Prepare
    const record = aRecord({
      attempts: policy.maxAttempts,
      lastReason: R.providerRejectedRetryable,
      reasonDetail: reasonDetailFrom('twilio', 'http_429'),
    });

    // Act
    const decision = decideDispatch(record, T0, policy, 'sender-a');

    // Assess
    expect(decision).toMatchObject({
      intent: { to: S.expired, reason: R.retryExhausted, reasonDetail: 'max_attempts:twilio:http_429' },
    });
  });
});
