import { describe, expect, it } from 'vitest';
import { ZERO_SMS_ALARM } from '../../../infra/constructs/observability.js';
import {
  DEFAULT_ALARM_DRILL,
  drillPhase,
  formatAlarmReport,
  ZERO_SMS_ALARM_FIGURES,
  zeroSmsByAlarmPeriod,
} from '../../../scripts/chaos/alarms.js';
import { parseChaosArgs } from '../../../scripts/chaos/cli.js';
import type { EvidenceRecord } from '../../../shared/domain/notification.js';
import type { NotificationState, ReasonCode } from '../../../shared/domain/states.js';

const PERIOD = 5 * 60_000;
/** The start of an alarm period (aligned as CloudWatch aligns them). */
const P0 = Date.UTC(2026, 11, 2, 8, 0, 0);

/** One evidence record of `key`, with what the zero-SMS classification reads. */
function step(
  key: string,
  seq: number,
  at: number,
  from: NotificationState | null,
  to: NotificationState,
  reason: ReasonCode,
  reasonDetail?: string,
): EvidenceRecord {
  return {
    idempotencyKey: key,
    eventId: `evt-${key}`,
    seq,
    at,
    fromState: from,
    toState: to,
    attempt: 1,
    reason,
    actor: 'reconciler',
    destinationFingerprint: 'fp1:00',
    ...(reasonDetail === undefined ? {} : { reasonDetail: reasonDetail as never }),
  };
}

/** A command admitted at `at` that ends at `endAt` as `to` (`reason`), the path in between elided. */
function command(
  key: string,
  at: number,
  endAt: number,
  to: NotificationState,
  reason: ReasonCode,
  detail?: string,
) {
  const from: NotificationState = to === 'expired' ? 'accepted' : to === 'failed' ? 'dispatching' : 'sent';
  return [step(key, 1, at, null, 'accepted', 'admitted'), step(key, 2, endAt, from, to, reason, detail)];
}

describe('chaos: the zero-SMS alarm as the run sees it', () => {
  it('reads its figures from the construct that deploys the alarm', () => {
    expect(ZERO_SMS_ALARM_FIGURES).toEqual({
      periodMs: ZERO_SMS_ALARM.period.toMilliseconds(),
      ratePercent: ZERO_SMS_ALARM.ratePercent,
      expression: ZERO_SMS_ALARM.expression,
    });
  });

  it('counts each command once, in the period of its first final transition, and compares the rate with the threshold', () => {
    // Prepare: period 0: 40 delivered, 1 expired (2.4 %); period 1: 10 delivered, 5 retry_exhausted,
    // 3 refused as invalid numbers (not paging); a late receipt in period 1 for a period-0 command
    const evidence = [
      ...Array.from({ length: 40 }, (_, i) =>
        command(`d${i}`, P0, P0 + 1_000, 'delivered', 'delivery_receipt'),
      ),
      ...command('x0', P0, P0 + 2_000, 'expired', 'unknown_at_expiry'),
      step('x0', 3, P0 + PERIOD + 1, 'expired', 'delivered', 'delivery_receipt'),
      ...Array.from({ length: 10 }, (_, i) =>
        command(`e${i}`, P0, P0 + PERIOD + 5, 'delivered', 'status_polled'),
      ),
      ...Array.from({ length: 5 }, (_, i) =>
        command(`r${i}`, P0, P0 + PERIOD + 9, 'expired', 'retry_exhausted'),
      ),
      ...Array.from({ length: 3 }, (_, i) =>
        command(`i${i}`, P0, P0 + PERIOD + 9, 'failed', 'provider_rejected_permanent', 'twilio:21211'),
      ),
      // Not final: not counted anywhere.
      step('open', 1, P0, null, 'accepted', 'admitted'),
    ].flat();

    // Act
    const periods = zeroSmsByAlarmPeriod(evidence, { periodMs: PERIOD, ratePercent: 5 });

    // Assess
    expect(periods.map((p) => [p.start, p.finals, p.zeroSms, p.destinationFault, p.breaching])).toEqual([
      [P0, 41, 1, 0, false],
      [P0 + PERIOD, 18, 5, 3, true],
    ]);
    expect(periods[0]?.byClass).toEqual({ unknown_at_expiry: 1 });
    expect(periods[1]?.ratePercent).toBeCloseTo((100 * 5) / 18);
  });

  it('the drill refuses every send (429) during its outage and leaves the seeded schedule alone outside it', () => {
    // Prepare
    const { startAfterMs, outageMs } = DEFAULT_ALARM_DRILL;

    // Act / Assess
    expect(drillPhase(undefined, startAfterMs, 3)).toBeUndefined();
    expect(drillPhase(DEFAULT_ALARM_DRILL, startAfterMs - 1, 3)).toBeUndefined();
    expect(drillPhase(DEFAULT_ALARM_DRILL, startAfterMs + outageMs, 3)).toBeUndefined();
    expect(drillPhase(DEFAULT_ALARM_DRILL, startAfterMs, 3)).toMatchObject({
      index: 3,
      mode: 'rate_limited',
      probability: 1,
      messageFaults: [],
    });
    // Longer than the longest token of a normal event (3 minutes): commands admitted early in it expire.
    expect(outageMs).toBeGreaterThan(180_000);
  });

  it('reports every period and whether the drill paged', () => {
    // Prepare
    const periods = zeroSmsByAlarmPeriod(
      [
        ...command('a', P0, P0 + 1, 'delivered', 'delivery_receipt'),
        ...command('b', P0, P0 + PERIOD + 1, 'expired', 'expired_before_dispatch'),
      ],
      ZERO_SMS_ALARM_FIGURES,
    );

    // Act
    const lines = formatAlarmReport(periods, { ...DEFAULT_ALARM_DRILL, startedAt: P0 });

    // Assess
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/ZeroSmsOutcome=0 FinalOutcomes=1 rate=0.0% threshold>5% -> OK/);
    expect(lines[1]).toMatch(/ZeroSmsOutcome=1 FinalOutcomes=1 rate=100.0% threshold>5% -> ALARM/);
    expect(lines[2]).toMatch(/crossed its threshold in 1 of 2 periods -> PAGED/);
  });

  it('is asked for with --alarm-drill; the default run has no drill', () => {
    expect(parseChaosArgs(['--alarm-drill', '--duration', '8m']).alarmDrill).toBe(true);
    expect(parseChaosArgs([]).alarmDrill).toBeUndefined();
  });
});
