import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  afterSample,
  applyChange,
  bucketLengthMs,
  CIRCUIT_BUCKETS,
  type Circuit,
  type CircuitSettings,
  CLOSED_CIRCUIT,
  type HealthSample,
  letProbeThrough,
  observedState,
  probeDue,
  senderState,
  tripReason,
  windowTotals,
  withSample,
} from '../../../shared/domain/circuit.js';

const SETTINGS: CircuitSettings = {
  windowMs: 30_000,
  minSamples: 10,
  errorRate: 0.5,
  unknownRate: 0.2,
  probePeriodMs: 15_000,
};
const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);
const BUCKET = bucketLengthMs(SETTINGS);

/** `circuit` with `samples` counted one after the other, each `stepMs` after the previous, from `at`. */
function recorded(circuit: Circuit, samples: readonly HealthSample[], at = T0, stepMs = 0): Circuit {
  return samples.reduce((c, sample, i) => withSample(c, sample, at + i * stepMs, SETTINGS), circuit);
}

const times = (n: number, sample: HealthSample): HealthSample[] => Array.from({ length: n }, () => sample);

/** A circuit open since `since`. */
const openSince = (since: number): Circuit =>
  applyChange(CLOSED_CIRCUIT, { to: 'open', since, reason: 'error_rate' });

describe('windowTotals: fixed buckets over a sliding window', () => {
  it('counts every sample of the last window, by kind', () => {
    // Prepare
    const circuit = recorded(CLOSED_CIRCUIT, ['ok', 'error', 'unknown', 'ok'], T0, 1_000);
    // Act
    const totals = windowTotals(circuit, T0 + 3_000, SETTINGS);
    // Assess
    expect(totals).toEqual({ ok: 2, error: 1, unknown: 1, total: 4 });
  });

  it('forgets a bucket once it slid out of the window', () => {
    // Prepare: one error in the first bucket, one ok a whole window later
    const circuit = recorded(CLOSED_CIRCUIT, ['error'], T0);
    const later = withSample(circuit, 'ok', T0 + SETTINGS.windowMs, SETTINGS);
    // Act
    const totals = windowTotals(later, T0 + SETTINGS.windowMs, SETTINGS);
    // Assess: the ring slot of the first bucket was reused or is out of the window
    expect(totals).toEqual({ ok: 1, error: 0, unknown: 0, total: 1 });
  });

  it('keeps at most one bucket per ring slot', () => {
    // Act
    const circuit = recorded(CLOSED_CIRCUIT, times(50, 'ok'), T0, BUCKET / 2);
    // Assess
    expect(circuit.buckets.length).toBeLessThanOrEqual(CIRCUIT_BUCKETS);
  });

  it('ignores samples taken before the last close', () => {
    // Prepare
    const failing = recorded(CLOSED_CIRCUIT, times(5, 'error'), T0);
    const closed = applyChange(failing, { to: 'closed', countFrom: T0 + 1, reason: 'probe_succeeded' });
    // Act
    const totals = windowTotals(closed, T0 + 1, SETTINGS);
    // Assess
    expect(totals.total).toBe(0);
  });

  it('drops a sample older than the bucket in its slot (a clock behind the others)', () => {
    // Prepare
    const circuit = recorded(CLOSED_CIRCUIT, ['ok'], T0 + SETTINGS.windowMs);
    // Act
    const after = withSample(circuit, 'error', T0, SETTINGS);
    // Assess
    expect(after).toBe(circuit);
  });
});

describe('tripReason and afterSample: when a circuit opens, closes, re-opens', () => {
  it.each([
    ['below min samples, all errors', { ok: 0, error: 9, unknown: 0 }, undefined],
    ['error rate at the threshold', { ok: 5, error: 5, unknown: 0 }, undefined],
    ['error rate over the threshold', { ok: 4, error: 6, unknown: 0 }, 'error_rate'],
    ['unknown rate at the threshold', { ok: 8, error: 0, unknown: 2 }, undefined],
    ['unknown rate over the threshold', { ok: 7, error: 0, unknown: 3 }, 'unknown_rate'],
    ['both over: errors first', { ok: 0, error: 6, unknown: 4 }, 'error_rate'],
    ['healthy', { ok: 100, error: 10, unknown: 5 }, undefined],
  ] as const)('%s', (_name, counts, expected) => {
    // Prepare
    const totals = { ...counts, total: counts.ok + counts.error + counts.unknown };
    // Act
    const reason = tripReason(totals, SETTINGS);
    // Assess
    expect(reason).toBe(expected);
  });

  it('opens a closed circuit on the sample that tips the window, since that sample', () => {
    // Prepare
    const circuit = recorded(CLOSED_CIRCUIT, [...times(4, 'ok'), ...times(6, 'error')]);
    // Act
    const change = afterSample(circuit, 'error', T0 + 10, SETTINGS);
    // Assess
    expect(change).toEqual({ to: 'open', since: T0 + 10, reason: 'error_rate' });
  });

  it.each([
    ['ok', { to: 'closed', countFrom: T0 + 20_000, reason: 'probe_succeeded' }],
    ['error', { to: 'open', since: T0 + 20_000, reason: 'probe_failed' }],
    ['unknown', { to: 'open', since: T0 + 20_000, reason: 'probe_failed' }],
  ] as const)('a probe that reports %s', (sample, expected) => {
    // Prepare
    const halfOpen = applyChange(openSince(T0), { to: 'half_open', since: T0 + 15_000, reason: 'probe_due' });
    // Act
    const change = afterSample(halfOpen, sample, T0 + 20_000, SETTINGS);
    // Assess
    expect(change).toEqual(expected);
  });

  it('does nothing with samples that reach an open circuit', () => {
    // Prepare
    const open = recorded(openSince(T0), times(20, 'error'));
    // Act
    const change = afterSample(open, 'ok', T0 + 1, SETTINGS);
    // Assess
    expect(change).toBeUndefined();
  });

  it('bumps the version on every change, so a write guarded by the old one loses', () => {
    // Act
    const open = openSince(T0);
    const halfOpen = applyChange(open, { to: 'half_open', since: T0 + 15_000, reason: 'probe_due' });
    // Assess
    expect([CLOSED_CIRCUIT.version, open.version, halfOpen.version]).toEqual([0, 1, 2]);
  });
});

describe('probes', () => {
  it.each([
    ['closed', CLOSED_CIRCUIT, T0 + 60_000, false, 'closed', 'closed'],
    ['open, before the probe period', openSince(T0), T0 + 14_999, false, 'open', 'open'],
    ['open, at the probe period', openSince(T0), T0 + 15_000, true, 'half_open', 'open'],
    [
      'half-open, probe out',
      applyChange(openSince(T0), { to: 'half_open', since: T0 + 15_000, reason: 'probe_due' }),
      T0 + 20_000,
      false,
      'half_open',
      'open',
    ],
    [
      'half-open, probe never reported',
      applyChange(openSince(T0), { to: 'half_open', since: T0 + 15_000, reason: 'probe_due' }),
      T0 + 30_000,
      true,
      'half_open',
      'open',
    ],
  ] as const)('%s', (_name, circuit, now, due, observed, sender) => {
    // Assess
    expect(probeDue(circuit, now, SETTINGS)).toBe(due);
    expect(observedState(circuit, now, SETTINGS)).toBe(observed);
    expect(senderState(circuit)).toBe(sender);
    expect(letProbeThrough(circuit, now, SETTINGS)).toEqual(
      due ? { to: 'half_open', since: now, reason: 'probe_due' } : undefined,
    );
  });
});

describe('properties', () => {
  const sample = fc.constantFrom<HealthSample>('ok', 'error', 'unknown');
  const settings = fc.record({
    windowMs: fc.integer({ min: 1_000, max: 120_000 }),
    minSamples: fc.integer({ min: 1, max: 50 }),
    errorRate: fc.double({ min: 0, max: 1, noNaN: true }),
    unknownRate: fc.double({ min: 0, max: 1, noNaN: true }),
    probePeriodMs: fc.integer({ min: 1_000, max: 120_000 }),
  });
  /** Samples each a few hundred ms after the previous one. */
  const history = fc.array(fc.tuple(sample, fc.integer({ min: 0, max: 2_000 })), { maxLength: 80 });

  it('never opens a circuit on fewer samples in its window than the minimum', () => {
    fc.assert(
      fc.property(settings, history, sample, (s, steps, last) => {
        // Prepare
        let circuit = CLOSED_CIRCUIT;
        let now = T0;
        for (const [kind, step] of steps) {
          now += step;
          circuit = withSample(circuit, kind, now, s);
        }
        circuit = withSample(circuit, last, now, s);
        // Act
        const change = afterSample(circuit, last, now, s);
        // Assess
        if (windowTotals(circuit, now, s).total < s.minSamples) expect(change).toBeUndefined();
      }),
    );
  });

  it('counts no more samples in the window than were recorded, and none older than the window', () => {
    fc.assert(
      fc.property(settings, history, (s, steps) => {
        // Prepare
        let circuit = CLOSED_CIRCUIT;
        let now = T0;
        const at: number[] = [];
        for (const [kind, step] of steps) {
          now += step;
          at.push(now);
          circuit = withSample(circuit, kind, now, s);
        }
        // Act
        const totals = windowTotals(circuit, now, s);
        // Assess
        expect(totals.total).toBeLessThanOrEqual(
          at.filter((t) => t > now - s.windowMs - bucketLengthMs(s)).length,
        );
        expect(totals.total).toBeGreaterThanOrEqual(
          at.filter((t) => t > now - s.windowMs + bucketLengthMs(s)).length,
        );
      }),
    );
  });

  it('always lets a probe through once the probe period has passed since the circuit opened', () => {
    fc.assert(
      fc.property(settings, fc.nat({ max: 10_000_000 }), fc.nat({ max: 10_000_000 }), (s, since, extra) => {
        // Prepare
        const open = openSince(T0 + since);
        const now = T0 + since + s.probePeriodMs + extra;
        // Assess
        expect(probeDue(open, now, s)).toBe(true);
        expect(observedState(open, now, s)).toBe('half_open');
        expect(letProbeThrough(open, now, s)).toEqual({ to: 'half_open', since: now, reason: 'probe_due' });
      }),
    );
  });

  it('never lets a probe through, and never reports half-open, before the probe period', () => {
    fc.assert(
      fc.property(settings, fc.nat({ max: 10_000_000 }), fc.nat(), (s, since, early) => {
        // Prepare
        const open = openSince(T0 + since);
        const now = T0 + since + (early % s.probePeriodMs);
        // Assess
        expect(letProbeThrough(open, now, s)).toBeUndefined();
        expect(observedState(open, now, s)).toBe('open');
      }),
    );
  });

  it('a half-open circuit closes on an ok probe and re-opens on any other, whatever the window', () => {
    fc.assert(
      fc.property(settings, history, sample, (s, steps, probe) => {
        // Prepare
        const halfOpen = applyChange(
          recorded(
            openSince(T0),
            steps.map(([kind]) => kind),
          ),
          { to: 'half_open', since: T0 + s.probePeriodMs, reason: 'probe_due' },
        );
        const now = T0 + s.probePeriodMs + 1;
        // Act
        const change = afterSample(withSample(halfOpen, probe, now, s), probe, now, s);
        // Assess
        expect(change?.to).toBe(probe === 'ok' ? 'closed' : 'open');
        if (change?.to === 'closed')
          expect(windowTotals(applyChange(halfOpen, change), now, s).total).toBe(0);
      }),
    );
  });
});
