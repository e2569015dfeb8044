import { describe, expect, it } from 'vitest';
import { renderEntry } from '../../../shared/cli/status.js';
import { applyTransition } from '../../../shared/domain/notification.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import { toEvidenceView, toView } from '../../../shared/usecases/view.js';
import { aDispatchingRecord, anUnknownRecord, SECOND, T0 } from '../domain/fixtures.js';

describe('reset-notifier status rendering', () => {
  it('shows the reason_detail of a failed command and of its evidence, and no waiting_for row', () => {
    // Prepare
    const { next, evidence } = applyTransition(aDispatchingRecord(), {
      to: S.failed,
      reason: R.providerRejectedPermanent,
      reasonDetail: 'twilio:21211',
      actor: 'sender',
      at: T0 + SECOND,
    });

    // Act
    const text = renderEntry(
      { notification: toView(next), evidence: [toEvidenceView(evidence)] },
      T0 + SECOND,
    );

    // Assess
    expect(text).toMatch(/^reason_detail\s+twilio:21211$/m);
    expect(text).toMatch(/provider_rejected_permanent\s+twilio:21211\s+sender/);
    expect(text).not.toMatch(/^waiting_for/m);
  });

  it('says what a command in doubt waits for, until when, and when expiry ends the wait', () => {
    // Prepare
    const soon = anUnknownRecord({ dueAt: T0 + 4 * SECOND });
    const late = anUnknownRecord({ dueAt: T0 + 20 * SECOND, expiresAt: T0 + 10 * SECOND });

    // Act
    const soonText = renderEntry({ notification: toView(soon), evidence: [] }, T0);
    const lateText = renderEntry({ notification: toView(late), evidence: [] }, T0);

    // Assess
    expect(soonText).toMatch(
      /^waiting_for\s+reconcile_check until 2026-11-29T12:00:04\.000Z {2}\(in 4\.000s\)$/m,
    );
    expect(lateText).toMatch(
      /^waiting_for\s+reconcile_check until 2026-11-29T12:00:10\.000Z {2}\(in 10\.0s, then expires\)$/m,
    );
  });
});
