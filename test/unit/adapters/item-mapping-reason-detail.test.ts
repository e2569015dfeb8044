import { describe, expect, it } from 'vitest';
import {
  evidenceFromItem,
  evidenceItem,
  recordAttributes,
  recordFromItem,
} from '../../../shared/adapters/dynamodb/item-mapping.js';
import { applyTransition } from '../../../shared/domain/notification.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import { aDispatchingRecord, PHONE, SECOND, T0 } from '../domain/fixtures.js';

const failed = () =>
  applyTransition(aDispatchingRecord(), {
    to: S.failed,
    reason: R.providerRejectedPermanent,
    reasonDetail: 'twilio:21211',
    actor: 'sender',
    at: T0 + SECOND,
  });

describe('reason_detail on the table', () => {
  it('round-trips on the command item and on the evidence item', () => {
    // Prepare
    const { next, evidence } = failed();
    const key = { pk: next.idempotencyKey, sk: 'CMD' };

    // Act
    const record = recordFromItem({ ...key, ...recordAttributes(next) });
    const read = evidenceFromItem(evidenceItem(evidence, next.expiresAt, 30));

    // Assess
    expect(recordAttributes(next).reason_detail).toBe('twilio:21211');
    expect(record.reasonDetail).toBe('twilio:21211');
    expect(read.reasonDetail).toBe('twilio:21211');
  });

  it('reads a stored detail outside the grammar as detail_refused, never as itself', () => {
    // Prepare
    const { next, evidence } = failed();
    const tampered = { ...recordAttributes(next), reason_detail: `twilio:${PHONE}` };
    const tamperedEvidence = { ...evidenceItem(evidence, next.expiresAt, 30), reason_detail: PHONE };

    // Act
    const record = recordFromItem(tampered);
    const read = evidenceFromItem(tamperedEvidence);

    // Assess
    expect(record.reasonDetail).toBe('detail_refused');
    expect(read.reasonDetail).toBe('detail_refused');
  });

  it('writes no attribute for a transition without a detail', () => {
    // Prepare
    const dispatching = aDispatchingRecord();

    // Act
    const { next, evidence } = applyTransition(dispatching, {
      to: S.sent,
      reason: R.providerAccepted,
      actor: 'sender',
      at: T0 + SECOND,
      set: { provider: { name: 'simulator', messageId: 'SM1' } },
    });

    // Assess
    expect('reason_detail' in recordAttributes(next)).toBe(false);
    expect('reason_detail' in evidenceItem(evidence, next.expiresAt, 30)).toBe(false);
  });
});
