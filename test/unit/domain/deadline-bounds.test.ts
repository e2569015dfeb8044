import { describe, expect, it } from 'vitest';
import { abandonClaim, decideDispatch, recordSendOutcome } from '../../../shared/domain/dispatch.js';
import { applyTransition } from '../../../shared/domain/notification.js';
import { dispatchDeadline } from '../../../shared/domain/policy.js';
import { aDispatchingRecord, aPolicy, MINUTE, SECOND, T0 } from './fixtures.js';

describe('deadline bounds of a claim', () => {
  it('an abandoned claim goes back to accepted, due at once, and the next look expires it', () => {
    // Prepare: a claim whose write took so long that the deadline is now too close for a call.
    const policy = aPolicy();
    const claimed = aDispatchingRecord({ expiresAt: T0 + 6 * SECOND });
    const now = T0 + 500;
    // Act
    const back = applyTransition(claimed, abandonClaim(claimed, now)).next;
    const next = decideDispatch(back, now, policy, 'sender-b');
    // Assess
    expect(back).toMatchObject({
      state: 'accepted',
      lastReason: 'call_not_started',
      attempts: claimed.attempts - 1,
      dueAt: now,
      nextAttemptAt: now,
    });
    expect(back.leaseUntil).toBeUndefined();
    expect(next).toMatchObject({
      kind: 'transition',
      intent: { to: 'expired', reason: 'expired_before_dispatch' },
    });
  });

  it('a retryable rejection with a long Retry-After is never due after the dispatch deadline', () => {
    // Prepare
    const policy = aPolicy();
    const claimed = aDispatchingRecord({ expiresAt: T0 + 2 * MINUTE });
    // Act
    const intent = recordSendOutcome(
      claimed,
      { kind: 'not_sent_retryable', detail: 'rate_limited', retryAfterMs: 10 * MINUTE },
      T0,
      policy,
    );
    // Assess
    expect(intent.set?.nextAttemptAt).toBe(T0 + 10 * MINUTE);
    expect(intent.set?.dueAt).toBe(dispatchDeadline(claimed, policy));
  });
});
