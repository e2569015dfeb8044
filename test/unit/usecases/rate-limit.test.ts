import { describe, expect, it } from 'vitest';
import { createTokenBucket, rateLimitedLookups } from '../../../shared/usecases/rate-limit.js';
import { ManualClock } from '../../support/manual-clock.js';
import { countingProvider } from '../../support/reconcile-fixtures.js';

/** A sleep that moves the manual clock instead of waiting. */
function virtualTime() {
  const clock = new ManualClock(0);
  const sleeps: number[] = [];
  const sleep = async (ms: number) => {
    sleeps.push(ms);
    clock.advance(ms);
  };
  return { clock, sleeps, sleep };
}

describe('token bucket', () => {
  it('lets a burst through, then spaces calls at the rate', async () => {
    // Prepare: 4 per second, burst 4.
    const time = virtualTime();
    const bucket = createTokenBucket({ ratePerSecond: 4, clock: time.clock, sleep: time.sleep });
    // Act: 12 concurrent acquisitions.
    const at: number[] = [];
    await Promise.all(
      Array.from({ length: 12 }, () => bucket.acquire().then(() => at.push(time.clock.now()))),
    );
    // Assess: the first 4 at once, the next 8 over 2 s; never more than 4 in any second after the burst.
    expect(at.slice(0, 4)).toEqual([0, 0, 0, 0]);
    expect(at.at(-1)).toBe(2_000);
    for (let i = 4; i < at.length; i++) expect((at[i] ?? 0) - (at[i - 1] ?? 0)).toBe(250);
    expect(bucket.waitedMs).toBe(2_000);
  });

  it('is unbounded at rate 0', async () => {
    const time = virtualTime();
    const bucket = createTokenBucket({ ratePerSecond: 0, clock: time.clock, sleep: time.sleep });
    await Promise.all(Array.from({ length: 50 }, () => bucket.acquire()));
    expect(time.sleeps).toEqual([]);
  });

  it("bounds a provider's lookups and leaves its sends alone", async () => {
    // Prepare: SNS-like, under 5 per second.
    const time = virtualTime();
    const provider = countingProvider();
    const limited = rateLimitedLookups(
      provider,
      createTokenBucket({ ratePerSecond: 4, burst: 1, clock: time.clock, sleep: time.sleep }),
    );
    const ref = {
      idempotencyKey: 'k',
      attempt: 1,
      clientReference: 'k#1',
      to: '+1',
      secret: 's',
      attemptStartedAt: 0,
      callDeadline: 0,
    };
    // Act
    await Promise.all(Array.from({ length: 9 }, () => limited.lookup(ref)));
    // Assess: 9 lookups at 4/s from one token = 2 s.
    expect(provider.lookups).toHaveLength(9);
    expect(time.clock.now()).toBe(2_000);
    expect(limited.capabilities).toBe(provider.capabilities);
  });
});
