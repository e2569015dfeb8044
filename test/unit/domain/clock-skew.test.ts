import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkClock,
  MAX_CLOCK_SKEW_MS,
  MAX_SAMPLE_AGE_MS,
  type ServerTimeSample,
} from '../../../shared/domain/clock-skew.js';
import { parseReasonDetail } from '../../../shared/domain/reason-detail.js';

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

/**
 * A sample as the middleware records it: our clock reads `local` when the request leaves and
 * `local + rttMs` when the answer comes; the server's clock is `serverAheadMs` ahead of ours, and
 * it stamps its answer `stampAfterMs` after the request arrives, truncated to the second.
 */
function aSample(opts: { serverAheadMs: number; rttMs?: number; stampAfterMs?: number; local?: number }) {
  const local = opts.local ?? T0 + 400;
  const rttMs = opts.rttMs ?? 10;
  const stampAt = local + (opts.stampAfterMs ?? rttMs / 2) + opts.serverAheadMs;
  const sample: ServerTimeSample = {
    serverDate: Math.floor(stampAt / 1000) * 1000,
    sentAt: local,
    receivedAt: local + rttMs,
  };
  return { sample, receivedAt: local + rttMs };
}

describe('checkClock: the sender clock against the store server time', () => {
  it.each([
    // name, server ahead of us (ms), verdict, detail
    ['in step', 0, 'within_bound', undefined],
    ['500 ms slow', 500, 'within_bound', undefined],
    ['500 ms fast', -500, 'within_bound', undefined],
    ['just under the bound slow', MAX_CLOCK_SKEW_MS - 1, 'within_bound', undefined],
    ['15 s slow (the issue)', 15_000, 'beyond_bound', 'clock_skew:behind:14'],
    ['15 s fast', -15_000, 'beyond_bound', 'clock_skew:ahead:14'],
    ['an hour slow', 3_600_000, 'beyond_bound', 'clock_skew:behind:3599'],
  ] as const)('%s: %s ms -> %s', (_name, serverAheadMs, kind, detail) => {
    // Prepare
    const { sample, receivedAt } = aSample({ serverAheadMs });
    // Act
    const check = checkClock(sample, receivedAt);
    // Assess
    expect(check.kind).toBe(kind);
    expect(check.kind === 'beyond_bound' ? check.detail : undefined).toBe(detail);
    if (detail !== undefined) expect(parseReasonDetail(detail)).toBe(detail);
  });

  it('never calls a correct clock skewed, whatever the round trip and where in the second the stamp falls', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (phase, rttMs, where) => {
          // Prepare: any server skew within the bound
          const { sample, receivedAt } = aSample({
            serverAheadMs: 0,
            local: T0 + phase,
            rttMs,
            stampAfterMs: Math.floor(rttMs * where),
          });
          // Act
          const check = checkClock(sample, receivedAt);
          // Assess
          expect(check.kind).toBe('within_bound');
        },
      ),
    );
  });

  it('its "now" is never earlier than the true time, whichever clock is wrong (the expiry check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -60_000, max: 60_000 }),
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: 0, max: 2_000 }),
        fc.integer({ min: 0, max: 30_000 }),
        (serverAheadMs, phase, rttMs, laterMs) => {
          // Prepare: the server's clock is the true one
          const { sample, receivedAt } = aSample({ serverAheadMs, local: T0 + phase, rttMs });
          const localNow = receivedAt + laterMs;
          // Act
          const check = checkClock(sample, localNow);
          // Assess
          expect(check.now).toBeGreaterThanOrEqual(localNow + serverAheadMs);
          expect(check.now).toBeGreaterThanOrEqual(localNow);
          // ... and at most the resolution plus the round trip later than it.
          expect(check.now).toBeLessThanOrEqual(Math.max(localNow, localNow + serverAheadMs) + 1_000 + rttMs);
        },
      ),
    );
  });

  it.each([
    ['no sample', undefined, T0, 'no_sample'],
    [
      'a sample older than the limit',
      aSample({ serverAheadMs: 15_000 }).sample,
      T0 + 400 + 10 + MAX_SAMPLE_AGE_MS + 1,
      'stale_sample',
    ],
    ['our clock went back behind the sample', aSample({ serverAheadMs: 15_000 }).sample, T0, 'stale_sample'],
  ] as const)('%s: unchecked, our own clock', (_name, sample, localNow, why) => {
    // Act
    const check = checkClock(sample, localNow);
    // Assess
    expect(check).toEqual({ kind: 'unchecked', why, now: localNow });
  });
});
