import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../shared/domain/clock.js';
import { backoffMs, dispatchDeadline, isPastDispatchDeadline } from '../../../shared/domain/policy.js';
import { clientReference } from '../../../shared/domain/provider.js';
import { ManualClock } from '../../support/manual-clock.js';
import { aPolicy, aRecord, SECOND, T0 } from './fixtures.js';

describe('dispatch deadline', () => {
  it('is expiresAt - dispatchMarginMs, and "past" is inclusive (DESIGN: now >= expires_at - margin)', () => {
    // Prepare
    const policy = aPolicy({ dispatchMarginMs: 5 * SECOND });
    const record = aRecord({ expiresAt: T0 + 60 * SECOND });

    // Act
    const deadline = dispatchDeadline(record, policy);

    // Assess
    expect(deadline).toBe(T0 + 55 * SECOND);
    expect(isPastDispatchDeadline(record, deadline - 1, policy)).toBe(false);
    expect(isPastDispatchDeadline(record, deadline, policy)).toBe(true);
    expect(isPastDispatchDeadline(record, deadline + 1, policy)).toBe(true);
  });
});

describe('backoffMs', () => {
  it('doubles from the base and is capped', () => {
    // Prepare
    const policy = aPolicy({ backoffBaseMs: 1_000, backoffMaxMs: 10_000 });

    // Act
    const waits = [0, 1, 2, 3, 4, 5, 6, 100].map((step) => backoffMs(step, policy));

    // Assess
    expect(waits).toEqual([1_000, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000]);
  });

  it('is monotonic, at least the base (when base <= max) and never above the cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 1_000 }),
        (base, extra, step) => {
          // Prepare
          const policy = { backoffBaseMs: base, backoffMaxMs: base + extra };

          // Act
          const wait = backoffMs(step, policy);

          // Assess
          expect(wait).toBeGreaterThanOrEqual(base);
          expect(wait).toBeLessThanOrEqual(base + extra);
          expect(backoffMs(step + 1, policy)).toBeGreaterThanOrEqual(wait);
          expect(Number.isFinite(wait)).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('clientReference', () => {
  it('is <idempotency_key>#<attempt>', () => {
    expect(clientReference('sms:password_reset:abc', 3)).toBe('sms:password_reset:abc#3');
  });

  it('differs per attempt', () => {
    expect(clientReference('k', 1)).not.toBe(clientReference('k', 2));
  });
});

describe('clocks', () => {
  it('ManualClock moves only when told', () => {
    // Prepare
    const clock = new ManualClock(T0);

    // Act
    const start = clock.now();
    clock.advance(1_500);
    const advanced = clock.now();
    clock.set(T0 - 1);

    // Assess
    expect(start).toBe(T0);
    expect(advanced).toBe(T0 + 1_500);
    expect(clock.now()).toBe(T0 - 1);
  });

  it('systemClock reads wall time', () => {
    // Prepare
    const before = Date.now();

    // Act
    const now = systemClock.now();

    // Assess
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});
