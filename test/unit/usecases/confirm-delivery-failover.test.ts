import { describe, expect, it } from 'vitest';
import type { FeedbackOutcome, SmsProvider } from '../../../shared/ports/sms-provider.js';
import { confirmDelivery } from '../../../shared/usecases/confirm-delivery.js';
import { aSentRecord } from '../domain/fixtures.js';
import { seededStore } from './seeded-store.js';

const KEY = 'sms:password_reset:evt-1';

/** A feedback API that keeps the message ids it was given. */
function aFeedback() {
  const calls: string[] = [];
  return {
    calls,
    confirm: async (messageId: string): Promise<FeedbackOutcome> => {
      calls.push(messageId);
      return { kind: 'recorded' };
    },
  };
}

describe('confirmDelivery with more than one provider', () => {
  it("forwards to the feedback API of the provider the message went through, not the primary's", async () => {
    // Prepare: the message was sent by the secondary
    const seed = aSentRecord({ provider: { name: 'eum', messageId: 'EUM-1' } });
    const { store, clock } = await seededStore(seed);
    const primary = aFeedback();
    const secondary = aFeedback();
    const byName: Record<string, Pick<SmsProvider, 'confirm'>> = { twilio: primary, eum: secondary };

    // Act
    const result = await confirmDelivery(
      { store, clock, feedback: primary, feedbackOf: (name) => byName[name] },
      KEY,
    );

    // Assess
    expect(result).toMatchObject({ kind: 'confirmed', feedback: 'recorded' });
    expect(secondary.calls).toEqual(['EUM-1']);
    expect(primary.calls).toEqual([]);
  });

  it('a provider without a feedback API: skipped, never forwarded to another', async () => {
    // Prepare
    const seed = aSentRecord({ provider: { name: 'sns', messageId: 'sns-1' } });
    const { store, clock } = await seededStore(seed);
    const primary = aFeedback();

    // Act
    const result = await confirmDelivery(
      { store, clock, feedback: primary, feedbackOf: () => undefined },
      KEY,
    );

    // Assess
    expect(result).toMatchObject({ kind: 'confirmed', feedback: 'skipped' });
    expect(primary.calls).toEqual([]);
  });
});
