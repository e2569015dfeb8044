import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { POISON_POLICY, poisonMove } from '../../../shared/domain/poison.js';

const NOW = 1_000_000;
const MINUTE = 60_000;

describe('poisonMove: a poison item is moved out of the way, never deleted', () => {
  it.each([
    [1, { dueAt: NOW + MINUTE, parked: false }],
    [2, { dueAt: NOW + 2 * MINUTE, parked: false }],
    [4, { dueAt: NOW + 8 * MINUTE, parked: false }],
    [POISON_POLICY.maxRetries, { dueAt: NOW + POISON_POLICY.parkMs, parked: true }],
    [POISON_POLICY.maxRetries + 3, { dueAt: NOW + POISON_POLICY.parkMs, parked: true }],
  ])('failure %i', (count, expected) => {
    // Act
    const move = poisonMove(count, NOW);

    // Assess
    expect(move).toEqual(expected);
  });

  it('moves every item into the future, later the more it failed, parked exactly from the cap on', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.nat(), (count, now) => {
        // Act
        const move = poisonMove(count, now);
        const next = poisonMove(count + 1, now);

        // Assess
        expect(move.dueAt).toBeGreaterThan(now);
        expect(next.dueAt).toBeGreaterThanOrEqual(move.dueAt);
        expect(move.parked).toBe(count >= POISON_POLICY.maxRetries);
        if (!move.parked) expect(move.dueAt - now).toBeLessThanOrEqual(POISON_POLICY.retryMaxMs);
      }),
    );
  });
});
