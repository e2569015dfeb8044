import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkClock,
  MAX_CLOCK_SKEW_MS,
  MAX_SAMPLE_AGE_MS,
  preferSample,
  SAMPLE_HOLD_MS,
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

describe('preferSample: the tightest recent answer, not merely the last', () => {
  it('keeps a quick answer over a later slow one (a claim write that waited 3 s under load)', () => {
    // Prepare: a correct clock; the slow answer was stamped as it left the server, 3 s after the request
    const quick = aSample({ serverAheadMs: 0, local: T0 + 400, rttMs: 8 }).sample;
    const slow = aSample({ serverAheadMs: 0, local: T0 + 5_000, rttMs: 3_000, stampAfterMs: 2_990 });
    // Act
    const kept = preferSample(preferSample(undefined, quick), slow.sample);
    // Assess: "now" runs at most the resolution plus the quick round trip ahead, not 4 s
    expect(kept).toBe(quick);
    expect(checkClock(kept, slow.receivedAt).now).toBeLessThanOrEqual(slow.receivedAt + 1_000 + 8);
    expect(checkClock(slow.sample, slow.receivedAt).now).toBeGreaterThanOrEqual(slow.receivedAt + 3_000);
  });

  it('takes a looser answer once the kept one is older than the hold', () => {
    // Prepare
    const quick = aSample({ serverAheadMs: 0, local: T0 + 400, rttMs: 8 }).sample;
    const slow = aSample({ serverAheadMs: 0, local: T0 + 400 + SAMPLE_HOLD_MS, rttMs: 900 }).sample;
    // Act / Assess
    expect(preferSample(quick, slow)).toBe(slow);
  });

  it('takes the later answer when the two disagree (our clock was stepped 15 s back in between)', () => {
    // Prepare: after the step the server reads 15 s ahead of us; the later sample is looser but right
    const before = aSample({ serverAheadMs: 0, local: T0 + 400, rttMs: 8 }).sample;
    const after = aSample({ serverAheadMs: 15_000, local: T0 + 2_000, rttMs: 600 });
    // Act
    const kept = preferSample(before, after.sample);
    // Assess
    expect(kept).toBe(after.sample);
    expect(checkClock(kept, after.receivedAt).kind).toBe('beyond_bound');
  });

  it('whatever order answers come in, "now" is never earlier than the true time', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -10_000, max: 10_000 }),
        fc.array(
          fc.record({ at: fc.integer({ min: 0, max: 20_000 }), rttMs: fc.integer({ min: 0, max: 4_000 }) }),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        (serverAheadMs, answers) => {
          // Prepare: the server's clock is the true one, constant skew
          const samples = answers.map(({ at, rttMs }) => aSample({ serverAheadMs, local: T0 + at, rttMs }));
          const localNow = Math.max(...samples.map((s) => s.receivedAt));
          // Act
          let kept: ServerTimeSample | undefined;
          for (const { sample } of samples) kept = preferSample(kept, sample);
          const check = checkClock(kept, localNow);
          // Assess
          expect(check.now).toBeGreaterThanOrEqual(localNow + serverAheadMs);
          const tightest = Math.min(...answers.map((a) => a.rttMs));
          expect(check.now).toBeLessThanOrEqual(
            Math.max(localNow, localNow + serverAheadMs) + 1_000 + tightest,
          );
        },
      ),
    );
  });
});
