import { describe, expect, it } from 'vitest';
import { applyReceipt, type Receipt } from '../../../shared/domain/dispatch.js';
import { applyTransition, type NotificationRecord } from '../../../shared/domain/notification.js';
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

const policy = aPolicy({ dispatchMarginMs: 5 * SECOND, statusPollMs: 5 * SECOND });

function aReceipt(overrides: Partial<Receipt> = {}): Receipt {
  return { attempt: 1, messageId: 'SM-9', status: 'delivered', ...overrides };
}

/** Applies a receipt and, when it is a transition, checks it against the table. */
function receive(record: NotificationRecord, receipt: Receipt, now = T0 + SECOND) {
  const result = applyReceipt(record, receipt, now, policy);
  return 'kind' in result ? result : applyTransition(record, result);
}

describe('applyReceipt: a receipt is positive evidence', () => {
  it.each([
    ['sent', S.sent],
    ['delivered', S.delivered],
    ['undelivered', S.undelivered],
  ] as const)('settles dispatch_unknown as found with status %s -> %s and takes the id', (status, to) => {
    // Act
    const result = receive(anUnknownRecord(), aReceipt({ status }));

    // Assess
    expect('next' in result && result.next.state).toBe(to);
    expect('next' in result && result.next.provider.messageId).toBe('SM-9');
    expect('evidence' in result && result.evidence).toMatchObject({
      reason: R.deliveryReceipt,
      actor: 'receipt',
      providerMessageId: 'SM-9',
    });
  });

  it('on a dispatching record (the receipt outran the outcome write): sent, lease given up', () => {
    // Act
    const result = receive(aDispatchingRecord(), aReceipt({ status: 'sent' }));

    // Assess
    expect('next' in result && result.next.state).toBe(S.sent);
    expect('next' in result && 'leaseUntil' in result.next).toBe(false);
  });

  it('on an accepted record whose attempt was wrongly taken for absent: sent, never re-sent', () => {
    // Prepare
    const record = aRecord({ state: S.accepted, attempts: 1, nextAttemptAt: T0 });

    // Act
    const result = receive(record, aReceipt({ status: 'sent' }));

    // Assess
    expect('next' in result && result.next.state).toBe(S.sent);
    expect('next' in result && 'nextAttemptAt' in result.next).toBe(false);
  });

  it('an earlier attempt’s receipt counts too (its message exists)', () => {
    // Act
    const result = receive(anUnknownRecord({ attempts: 3 }), aReceipt({ attempt: 1, status: 'sent' }));

    // Assess
    expect('next' in result && result.next.state).toBe(S.sent);
  });

  it('moves sent forward to delivered, for the same message only', () => {
    // Prepare
    const record = aSentRecord({ provider: { name: 'simulator', messageId: 'SM-9' } });

    // Act
    const same = receive(record, aReceipt());
    const other = receive(record, aReceipt({ messageId: 'SM-other' }));

    // Assess
    expect('next' in same && same.next.state).toBe(S.delivered);
    expect(other).toEqual({ kind: 'ignore', why: 'other_message' });
  });
});

describe('applyReceipt: duplicates and out-of-order receipts change nothing', () => {
  it('a second identical receipt is ignored once the first moved the record', () => {
    // Prepare
    const first = receive(anUnknownRecord(), aReceipt({ status: 'sent' }));
    if (!('next' in first)) throw new Error('expected a transition');

    // Act
    const second = receive(first.next, aReceipt({ status: 'sent' }));

    // Assess
    expect(second).toEqual({ kind: 'ignore', why: 'not_newer' });
  });

  it('a late "sent" after "delivered" never moves the record backwards', () => {
    // Act
    const result = receive(aRecord({ state: S.delivered }), aReceipt({ status: 'sent' }));

    // Assess
    expect(result).toEqual({ kind: 'ignore', why: 'final' });
  });

  it('a receipt naming an attempt the record never made is ignored', () => {
    // Act
    const result = receive(anUnknownRecord({ attempts: 1 }), aReceipt({ attempt: 2 }));

    // Assess
    expect(result).toEqual({ kind: 'ignore', why: 'unknown_attempt' });
  });
});

describe('applyReceipt: the provider says it never handed the message to a carrier', () => {
  it('for the current attempt of an unknown: accepted (provider_not_sent), a new attempt is allowed', () => {
    // Act
    const result = receive(
      anUnknownRecord({ expiresAt: T0 + 10 * MINUTE }),
      aReceipt({ status: 'not_sent' }),
    );

    // Assess
    expect('next' in result && result.next.state).toBe(S.accepted);
    expect('evidence' in result && result.evidence).toMatchObject({
      reason: R.providerNotSent,
      actor: 'receipt',
    });
  });

  it('for an older attempt: ignored (the current attempt may exist)', () => {
    // Act
    const result = receive(anUnknownRecord({ attempts: 2 }), aReceipt({ attempt: 1, status: 'not_sent' }));

    // Assess
    expect(result).toEqual({ kind: 'ignore', why: 'not_sent_for_old_attempt' });
  });

  it('past the dispatch deadline: final instead of a new attempt', () => {
    // Act
    const result = receive(anUnknownRecord({ expiresAt: T0 + 4 * SECOND }), aReceipt({ status: 'not_sent' }));

    // Assess
    expect('next' in result && result.next.state).toBe(S.expired);
  });
});
