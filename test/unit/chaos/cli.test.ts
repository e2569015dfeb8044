import { describe, expect, it } from 'vitest';
import { captureOutput } from '../../../scripts/chaos/capture.js';
import { formatSummary, parseChaosArgs, parseDuration } from '../../../scripts/chaos/cli.js';
import type { ChaosRunResult } from '../../../scripts/chaos/driver.js';

describe('chaos command line', () => {
  it('has defaults for a CI-sized run', () => {
    expect(parseChaosArgs([])).toEqual({
      events: 2000,
      seed: 1,
      concurrency: 12,
      settleTimeoutMs: 240_000,
      maxPending: 500,
      modelRuns: 5000,
      verbose: false,
      provider: 'twilio',
      tolerateUnknownFaults: false,
    });
  });

  it('parses every option', () => {
    // Act
    const options = parseChaosArgs([
      '--events',
      '10000',
      '--seed',
      '42',
      '--concurrency',
      '12',
      '--duration',
      '10m',
      '--settle-timeout',
      '90s',
      '--max-pending',
      '50',
      '--model-runs',
      '0',
      '--json',
      'out.json',
      '--verbose',
      '--provider',
      'eum',
      '--tolerate-unknown-faults',
    ]);
    // Assess
    expect(options).toEqual({
      events: 10000,
      seed: 42,
      concurrency: 12,
      durationMs: 600_000,
      settleTimeoutMs: 90_000,
      maxPending: 50,
      modelRuns: 0,
      verbose: true,
      tolerateUnknownFaults: true,
      jsonPath: 'out.json',
      provider: 'eum',
    });
  });

  it('runs without an event bound when only a duration is given', () => {
    expect(parseChaosArgs(['--duration', '1h']).events).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('rejects bad values and unknown options', () => {
    expect(() => parseChaosArgs(['--events', '0'])).toThrow(/--events/);
    expect(() => parseChaosArgs(['--events', 'many'])).toThrow(/--events/);
    expect(() => parseChaosArgs(['--duration', 'soon'])).toThrow(/duration/);
    expect(() => parseChaosArgs(['--bogus'])).toThrow();
    expect(() => parseChaosArgs(['--provider', 'pigeon'])).toThrow(/--provider/);
  });

  it('reads durations in ms, s, m and h', () => {
    expect([
      parseDuration('1500ms'),
      parseDuration('90'),
      parseDuration('2.5m'),
      parseDuration('1h'),
    ]).toEqual([1_500, 90_000, 150_000, 3_600_000]);
  });

  it('prints one line per figure and the verdict', () => {
    // Prepare
    const result = {
      seed: 1,
      passed: false,
      forensics: [],
      notable: [],
      invariants: [
        { name: 'duplicates', label: 'dup keys', count: 0, examples: [], keys: [] },
        { name: 'lost', label: 'lost keys', count: 1, examples: ['k: still accepted'], keys: ['k'] },
      ],
      stats: {
        events: 3,
        posts: 5,
        clientRetries: 0,
        responses: { '202': 3 },
        admittedKeys: 3,
        rejectedTooLate: 0,
        conflicts: 0,
        shortLife: 0,
        finalStates: { delivered: 2, accepted: 1 },
        lastReasons: {},
        providerSends: 2,
        providerMessages: 2,
        faultsFired: {},
        faultPhases: {},
        crashes: { before_claim: 0, after_claim: 0, after_provider_call: 0, before_outcome_write: 0 },
        decryptions: { failed: 1, passed: 9 },
        lostAnswers: {
          surfacing: 2,
          retried: 1,
          byOperation: { TransactWriteItems: 3 },
          byShape: { timeout: 3 },
        },
        zeroSms: { count: 1, byReason: { redaction_on: 1 } },
        poisonPlanted: 3,
        poisonPresent: 3,
        poisonMarked: 3,
        throttles: { injectedSurfacing: 0, injectedRetried: 0, surfaced: 0, byOperation: {}, calls: {} },
        extraSqsMessages: 0,
        extraReconcilerPasses: 0,
        logLines: 0,
        storedItems: 0,
        evidenceRecords: 0,
        admissionMs: 1000,
        settleMs: 1000,
        collectMs: 0,
        checkMs: 0,
        totalMs: 3000,
        settled: true,
        lateArrivals: 0,
        lateArrivalMaxMs: 0,
        sendsStartedAfterDeadline: 0,
        eventLoopDelayP99Ms: 1,
        eventLoopDelayMaxMs: 2,
        unknownWithoutSms: 0,
        messageFaultPhases: { none: 2, 'redaction+receipt_loss': 1 },
        unsupportedFaultPhases: 0,
        receiptsSeen: 4,
        receiptsRejected: 0,
        staleExcused: 1,
        backgroundHung: 0,
        pastExpiry: { count: 0, maxMs: 0, p99Ms: 0 },
        unknownOutcomes: {
          unknown: 2,
          withSms: 1,
          withoutSms: 1,
          withoutSmsByReason: { unknown_at_expiry: 1 },
          withoutSmsByCause: { timeout_before_accept: 1 },
        },
      },
    } satisfies ChaosRunResult;
    // Act
    const lines = formatSummary(result, { concurrency: 8 });
    // Assess
    expect(lines[0]).toMatch(/^chaos: seed=1 events=3 concurrency=8 duration=3\.0 s/);
    expect(lines).toContain('duplicates: 0 (dup keys)');
    expect(lines).toContain('lost: 1 (lost keys)');
    expect(lines).toContain('  e.g. k: still accepted');
    expect(lines).toContain(
      'unknowns: outcomes that were dispatch_unknown=2, ended with an SMS=1, ended without any SMS=1 (by final reason unknown_at_expiry=1; by cause timeout_before_accept=1)',
    );
    expect(lines).toContain('faults: message fault phases none=2 redaction+receipt_loss=1');
    expect(lines.at(-1)).toBe('RESULT: FAIL');
  });
});

describe('chaos output capture', () => {
  it('captures lines written to stdout and stderr, and restores the streams', () => {
    // Prepare
    const originalStdout = process.stdout.write;
    const capture = captureOutput();
    // Act
    process.stdout.write('first line\nsecond ');
    process.stderr.write(Buffer.from('from stderr\n'));
    process.stdout.write('part\n');
    const lines = capture.stop();
    // Assess
    expect(lines).toEqual(['first line', 'from stderr', 'second part']);
    expect(process.stdout.write).toBe(originalStdout);
  });
});
