import { describe, expect, it } from 'vitest';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import type { FeedbackOutcome } from '../../../shared/ports/sms-provider.js';
import { ConfirmationContendedError, confirmDelivery } from '../../../shared/usecases/confirm-delivery.js';
import { anUnknownRecord, aRecord, aSentRecord } from '../domain/fixtures.js';
import { seededStore, writtenAfterSeed } from './seeded-store.js';

const KEY = 'sms:password_reset:evt-1';

function aFeedback(outcome: FeedbackOutcome | Error) {
  const calls: string[] = [];
  return {
    calls,
    confirm: async (messageId: string): Promise<FeedbackOutcome> => {
      calls.push(messageId);
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
  };
}

describe('confirmDelivery', () => {
  it('records user_confirmed once, forwards the message id to the feedback API, and returns the view', async () => {
    // Prepare
    const seed = aSentRecord({ provider: { name: 'twilio', messageId: 'SM-1' } });
    const { store, clock } = await seededStore(seed);
    const feedback = aFeedback({ kind: 'recorded' });

    // Act
    const result = await confirmDelivery({ store, clock, feedback }, KEY);

    // Assess
    expect(result).toMatchObject({ kind: 'confirmed', feedback: 'recorded', view: { state: S.delivered } });
    expect(feedback.calls).toEqual(['SM-1']);
    const written = await writtenAfterSeed(store, KEY, seed.version);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({ reason: R.userConfirmed, actor: 'api', providerMessageId: 'SM-1' });
  });

  it('a second confirmation writes nothing, forwards nothing, and answers with the view', async () => {
    // Prepare
    const seed = aSentRecord();
    const { store, clock } = await seededStore(seed);
    const feedback = aFeedback({ kind: 'recorded' });
    await confirmDelivery({ store, clock, feedback }, KEY);

    // Act
    const repeat = await confirmDelivery({ store, clock, feedback }, KEY);

    // Assess
    expect(repeat).toMatchObject({ kind: 'already_confirmed', view: { state: S.delivered } });
    expect(feedback.calls).toHaveLength(1);
    expect(await writtenAfterSeed(store, KEY, seed.version)).toHaveLength(1);
  });

  it('answers not_found for an unknown key', async () => {
    const { store, clock } = await seededStore(aSentRecord());
    expect(await confirmDelivery({ store, clock }, 'no-such-key')).toEqual({ kind: 'not_found' });
  });

  it('refuses a command that was never sent, writing nothing', async () => {
    // Prepare
    const seed = aRecord({ state: S.failed, attempts: 1, lastReason: R.providerRejectedPermanent });
    const { store, clock } = await seededStore(seed);

    // Act
    const result = await confirmDelivery({ store, clock }, KEY);

    // Assess
    expect(result).toMatchObject({ kind: 'never_sent', view: { state: S.failed } });
    expect(await writtenAfterSeed(store, KEY, seed.version)).toEqual([]);
  });

  it.each([
    ['fails', { kind: 'failed', detail: 'http_404' } as const],
    ['throws', new Error('socket hang up')],
  ])('still confirms when the feedback API %s, and reports it without PII', async (_label, outcome) => {
    // Prepare
    const { store, clock } = await seededStore(aSentRecord());
    const reported: unknown[] = [];

    // Act
    const result = await confirmDelivery(
      { store, clock, feedback: aFeedback(outcome), onFeedbackFailure: (detail) => reported.push(detail) },
      KEY,
    );

    // Assess
    expect(result).toMatchObject({ kind: 'confirmed', feedback: 'failed' });
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ idempotencyKey: KEY });
  });

  it('skips the forward when the record has no message id (confirmed while unknown without an id)', async () => {
    // Prepare
    const { store, clock } = await seededStore(anUnknownRecord());
    const feedback = aFeedback({ kind: 'recorded' });

    // Act
    const result = await confirmDelivery({ store, clock, feedback }, KEY);

    // Assess
    expect(result).toMatchObject({ kind: 'confirmed', feedback: 'skipped' });
    expect(feedback.calls).toEqual([]);
  });

  it('re-decides after a lost race and throws a retryable error when it keeps losing', async () => {
    // Prepare
    const { store, clock } = await seededStore(aSentRecord());
    let writes = 0;
    store.transition = async (applied) => {
      writes++;
      return { kind: 'stale', current: applied.previous };
    };

    // Act
    const outcome = confirmDelivery({ store, clock }, KEY);

    // Assess
    await expect(outcome).rejects.toBeInstanceOf(ConfirmationContendedError);
    expect(writes).toBe(3);
  });
});
