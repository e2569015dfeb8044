import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MIX,
  eventSpec,
  faultPhase,
  MESSAGE_FAULT_MODES,
  NOT_SENT_CODES,
  phoneFor,
  SEND_FAULT_MODES,
} from '../../../scripts/chaos/scenario.js';

describe('message fault phases', () => {
  const phases = Array.from({ length: 400 }, (_, i) => faultPhase(3, i));
  const plans = phases.flatMap((p) => p.messageFaults);

  it('use every documented message fault mode, and never one as a send fault', () => {
    expect(new Set(plans.map((p) => p.mode))).toEqual(new Set(MESSAGE_FAULT_MODES));
    for (const phase of phases) {
      if (phase.mode !== null) expect(SEND_FAULT_MODES).toContain(phase.mode);
      expect(MESSAGE_FAULT_MODES as readonly string[]).not.toContain(phase.mode);
    }
  });

  it('give list lag longer than the settle time, receipt delay a duration and not-sent a documented code', () => {
    for (const plan of plans) {
      if (plan.mode === 'redaction') expect(plan.probability, 'an account setting: every message').toBe(1);
      else expect(plan.probability).toBeGreaterThanOrEqual(0.2);
      expect(plan.probability).toBeLessThanOrEqual(plan.mode === 'redaction' ? 1 : 0.6);
      if (plan.mode === 'list_lag') expect(plan.ms).toBeGreaterThan(DEFAULT_MIX.settleMs);
      if (plan.mode === 'receipt_delay') expect(plan.ms).toBeGreaterThan(0);
      if (plan.mode === 'fail_not_sent') expect(NOT_SENT_CODES).toContain(plan.error_code);
    }
  });

  it('include the worst case (redaction with every receipt lost) and phases without message faults', () => {
    const names = phases.map((p) => p.messageFaults.map((f) => f.mode).join('+'));
    expect(names).toContain('redaction+receipt_loss');
    expect(names).toContain('');
    expect(faultPhase(3, 7)).toEqual(faultPhase(3, 7));
  });

  it('can be switched off', () => {
    const quiet = Array.from({ length: 50 }, (_, i) =>
      faultPhase(3, i, { ...DEFAULT_MIX, messageFaultProbability: 0 }),
    );
    expect(quiet.every((p) => p.messageFaults.length === 0)).toBe(true);
  });
});

describe('several resets to the same number', () => {
  it('reuse the number of one of the 8 events before, for about a quarter of events', () => {
    // Act
    const events = Array.from({ length: 1_000 }, (_, i) => eventSpec(5, i));
    const repeats = events.filter((e) => e.phone !== phoneFor(5, e.index));

    // Assess
    expect(repeats.length).toBeGreaterThan(150);
    expect(repeats.length).toBeLessThan(350);
    for (const e of repeats) {
      const earlier = Array.from({ length: 8 }, (_, k) => e.index - 1 - k).filter((i) => i >= 0);
      expect(earlier.map((i) => phoneFor(5, i))).toContain(e.phone);
    }
    expect(eventSpec(5, 0).phone).toBe(phoneFor(5, 0));
  });
});
