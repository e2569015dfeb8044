/**
 * A short chaos soak in the test suite: the same driver as `npm run chaos`, 150 events with a fixed
 * seed on the suite's emulators. Every invariant must count zero.
 */
import { describe, expect, inject, it } from 'vitest';
import { FAULT_MODES } from '../../local/simulator/faults.js';
import { CHAOS_SETTINGS, runChaos } from '../../scripts/chaos/driver.js';

/** Whether this simulator knows the message fault modes (redaction, list_lag, receipt_*, fail_not_sent). */
const SIMULATOR_HAS_MESSAGE_FAULTS = (FAULT_MODES as readonly string[]).includes('redaction');

describe('chaos (short soak)', () => {
  it('150 events under every fault: no duplicate, no late send, nothing lost, evidence complete, no PII', {
    // An unknown whose only honest end is expiry (redaction seen, receipts lost) waits for it (<= 3 min).
    timeout: 420_000,
  }, async () => {
    // Act
    const result = await runChaos({
      events: 150,
      seed: 20261129,
      concurrency: 6,
      settleTimeoutMs: 240_000,
      dynamodbEndpoint: inject('dynamodbEndpoint'),
      sqsEndpoint: inject('sqsEndpoint'),
      tolerateUnknownFaultModes: !SIMULATOR_HAS_MESSAGE_FAULTS,
    });

    // Assess
    const figures = Object.fromEntries(result.invariants.map((i) => [i.name, i.count]));
    expect(figures, JSON.stringify({ invariants: result.invariants, forensics: result.forensics })).toEqual({
      duplicates: 0,
      post_expiry_sends: 0,
      validity_beyond_expiry: 0,
      lost: 0,
      evidence: 0,
      ledger_mismatch: 0,
      admission: 0,
      budget: 0,
      event_duplicates: 0,
      number_budget: 0,
      privacy: 0,
      misattributed: 0,
      stale: 0,
      stuck: 0,
      lost_deliverable: 0,
    });
    expect(result.stats.settled).toBe(true);
    // Receipts reached the stack's own route, all signed; message faults ran where the simulator has them.
    expect(result.stats.receiptsSeen).toBeGreaterThan(0);
    expect(result.stats.receiptsRejected).toBe(0);
    if (SIMULATOR_HAS_MESSAGE_FAULTS) expect(result.stats.unsupportedFaultPhases).toBe(0);
    expect(result.passed).toBe(true);
    // The soak really exercised the faults it claims to.
    expect(result.stats.admittedKeys).toBeGreaterThan(100);
    expect(Object.values(result.stats.crashes).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(result.stats.throttles.injectedSurfacing + result.stats.throttles.injectedRetried).toBeGreaterThan(
      0,
    );
    expect(result.stats.conflicts).toBeGreaterThan(0);
    expect(result.stats.lostAnswers.surfacing + result.stats.lostAnswers.retried).toBeGreaterThan(0);
    // SMS pumping met its budgets: some resets admitted, the rest refused, none failed.
    expect(result.stats.pumping?.admitted).toBeGreaterThan(0);
    expect(result.stats.pumping?.refused).toBeGreaterThan(0);
    expect(result.stats.logLines).toBeGreaterThan(0);
    // The design's assumption held in the rig: no request reached the provider later after its caller
    // gave up than the reconciler's settle time, and the sender never started a late call.
    expect(result.stats.lateArrivalMaxMs).toBeLessThan(CHAOS_SETTINGS.reconcileSettle * 1000);
    expect(result.stats.sendsStartedAfterDeadline).toBe(0);
  });

  it('the privacy check is not vacuous: a phone number printed by the service logger is caught', {
    timeout: 360_000,
  }, async () => {
    // Act: a tiny soak whose service logger prints one phone number.
    const result = await runChaos({
      events: 20,
      seed: 7,
      concurrency: 4,
      dynamodbEndpoint: inject('dynamodbEndpoint'),
      sqsEndpoint: inject('sqsEndpoint'),
      leakCanary: true,
      tolerateUnknownFaultModes: !SIMULATOR_HAS_MESSAGE_FAULTS,
    });
    // Assess
    const privacy = result.invariants.find((i) => i.name === 'privacy');
    expect(privacy?.count).toBe(1);
    expect(privacy?.examples[0]).toMatch(/^log line \d+ contains a phone number$/);
    expect(result.passed).toBe(false);
  });
});
