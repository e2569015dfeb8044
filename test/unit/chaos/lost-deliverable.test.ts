import { describe, expect, it } from 'vitest';
import { checkLostDeliverable, type DeliverableInput } from '../../../scripts/chaos/lost-deliverable.js';
import { admit, applyTransition, type EvidenceRecord } from '../../../shared/domain/notification.js';
import { DEFAULT_POLICY } from '../../../shared/domain/policy.js';

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

/** A command claimed once, gone unknown (lease expired), ended `unknown_at_expiry`: no SMS. */
function anUnknownAtExpiry(key: string) {
  const first = admit({
    request: {
      idempotencyKey: key,
      eventId: `evt-${key}`,
      channel: 'sms',
      template: 'password_reset',
      locale: 'en',
      expiresAt: T0 + 120_000,
      sensitive: { phone: '+14155550123', params: { code: '9123456789' } },
    },
    destinationFingerprint: 'fp1:0123456789abcdef0123456789abcdef',
    payloadFingerprint: 'pf1:feedface',
    providerName: 'simulator',
    now: T0,
    safetyNetAt: T0 + DEFAULT_POLICY.queueSafetyNetMs,
  });
  const claimed = applyTransition(first.next, {
    to: 'dispatching',
    reason: 'claimed',
    actor: 'sender',
    at: T0 + 100,
    set: {
      attempts: 1,
      leaseUntil: T0 + 10_000,
      leaseOwner: 's1',
      attemptStartedAt: T0 + 100,
      dueAt: T0 + 10_000,
    },
  });
  const unknown = applyTransition(claimed.next, {
    to: 'dispatch_unknown',
    reason: 'lease_expired',
    actor: 'reconciler',
    at: T0 + 10_000,
    set: { unknownSince: T0 + 10_000, dueAt: T0 + 12_000 },
    remove: ['leaseUntil', 'leaseOwner'],
  });
  const expired = applyTransition(unknown.next, {
    to: 'expired',
    reason: 'unknown_at_expiry',
    actor: 'reconciler',
    at: T0 + 120_000,
  });
  const evidence: EvidenceRecord[] = [first.evidence, claimed.evidence, unknown.evidence, expired.evidence];
  return { record: expired.next, evidence };
}

function anInput(overrides: Partial<DeliverableInput> = {}): DeliverableInput {
  const lost = anUnknownAtExpiry('k-lost');
  return {
    commands: [lost.record],
    evidence: lost.evidence,
    ledger: [],
    requests: [],
    provider: 'twilio',
    phases: [],
    faultsByKey: new Map(),
    shortLifeKeys: new Set(),
    ...overrides,
  };
}

describe('lost_deliverable', () => {
  it('counts a claim that never reached the provider and ended unknown at expiry (a lost claim answer)', () => {
    // Prepare
    const input = anInput({ faultsByKey: new Map([['k-lost', new Set(['lost_answer_surfacing'])]]) });

    // Act
    const report = checkLostDeliverable(input);

    // Assess
    expect(report.invariant.count).toBe(1);
    expect(report.byReason).toEqual({ 'unknown_at_expiry:no_provider_call:lost_answer_surfacing': 1 });
    expect(report.invariant.examples[0]).toContain('k-lost: expired without an SMS');
  });

  it('lists an SNS or EUM unknown with no provider call apart (unprovable), and counts the same on Twilio', () => {
    // Prepare: the claim's send reached no provider (no request in the ledger), no fault injected.
    const input = (provider: 'sns' | 'eum' | 'twilio') => anInput({ provider });

    // Act
    const sns = checkLostDeliverable(input('sns'));
    const eum = checkLostDeliverable(input('eum'));
    const twilio = checkLostDeliverable(input('twilio'));

    // Assess
    expect(sns.byReason).toEqual({ sns_unknown_no_provider_call: 1 });
    expect(eum.byReason).toEqual({ eum_unknown_no_provider_call: 1 });
    expect(sns.invariant.count + eum.invariant.count).toBe(0);
    expect(twilio.invariant.count).toBe(1);
  });

  it('excuses an SNS unknown after a provider timeout: SNS cannot prove absence', () => {
    // Prepare
    const input = anInput({
      provider: 'sns',
      requests: [
        { received_at: iso(T0 + 200), client_reference: 'k-lost#1', fault: 'timeout_before_accept' },
      ],
    });

    // Act
    const report = checkLostDeliverable(input);

    // Assess
    expect(report.invariant.count).toBe(0);
    expect(report.byReason).toEqual({ sns_unknown_unprovable: 1 });
  });

  it('excuses a Twilio unknown once Message Redaction was seen, but not without it', () => {
    // Prepare
    const requests = [
      { received_at: iso(T0 + 200), client_reference: 'k-lost#1', fault: 'timeout_before_accept' },
    ];
    const redaction = [{ start: T0 + 5_000, end: T0 + 7_000, sendFault: null, messageFaults: ['redaction'] }];

    // Act
    const excused = checkLostDeliverable(anInput({ requests, phases: redaction }));
    const counted = checkLostDeliverable(anInput({ requests }));

    // Assess
    expect(excused.byReason).toEqual({ redaction_on: 1 });
    expect(excused.invariant.count).toBe(0);
    expect(counted.byReason).toEqual({ 'unknown_at_expiry:provider_timeout_before_accept:no_fault': 1 });
    expect(counted.invariant.count).toBe(1);
  });

  it('excuses a short-life token that expired before any send, but not a normal one', () => {
    // Prepare
    const first = anUnknownAtExpiry('k-short');
    const expired = {
      ...first.record,
      state: 'expired' as const,
      lastReason: 'expired_before_dispatch' as const,
    };
    const input = (short: boolean) =>
      anInput({
        commands: [expired],
        evidence: [],
        shortLifeKeys: new Set(short ? ['k-short'] : []),
      });

    // Act
    const excused = checkLostDeliverable(input(true));
    const counted = checkLostDeliverable(input(false));

    // Assess
    expect(excused.byReason).toEqual({ token_life_short: 1 });
    expect(counted.byReason).toEqual({ 'expired_before_dispatch:no_fault': 1 });
    expect(counted.invariant.count).toBe(1);
  });

  it('excuses a message the provider held queued until its validity ended (30036), not another failure', () => {
    // Prepare
    const failed = (code: number) => [
      {
        id: 'SM1',
        client_reference: 'k-lost#1',
        accepted_at: iso(T0 + 300),
        status: 'failed',
        error_code: code,
      },
    ];

    // Act
    const excused = checkLostDeliverable(anInput({ ledger: failed(30036) }));
    const counted = checkLostDeliverable(anInput({ ledger: failed(30500) }));

    // Assess
    expect(excused.byReason).toEqual({ provider_queue_expired: 1 });
    expect(counted.invariant.count).toBe(1);
  });

  it('excuses an End User Messaging message failed while its events were lost, not one whose events came', () => {
    // Prepare: the command closed `sent` at the horizon; the provider failed its message.
    const lost = anUnknownAtExpiry('k-lost');
    const closed = {
      ...lost.record,
      state: 'sent' as const,
      lastReason: 'status_horizon' as const,
      closed: true,
    };
    const ledger = [{ id: 'm1', client_reference: 'k-lost#1', accepted_at: iso(T0 + 300), status: 'failed' }];
    const phase = (messageFaults: string[]) => [
      { start: T0, end: T0 + 2_000, sendFault: null, messageFaults },
    ];
    const input = (messageFaults: string[]) =>
      anInput({ provider: 'eum', commands: [closed], ledger, phases: phase(messageFaults) });

    // Act
    const excused = checkLostDeliverable(input(['fail_not_sent', 'receipt_loss']));
    const counted = checkLostDeliverable(input(['fail_not_sent']));

    // Assess
    expect(excused.byReason).toEqual({ eum_events_lost: 1 });
    expect(excused.invariant.count).toBe(0);
    expect(counted.invariant.count).toBe(1);
  });

  it('excuses an AWS message that failed while only the queue delay could fail it', () => {
    // Prepare
    const ledger = [{ id: 'm1', client_reference: 'k-lost#1', accepted_at: iso(T0 + 300), status: 'failed' }];
    const phase = (messageFaults: string[]) => [
      { start: T0, end: T0 + 2_000, sendFault: null, messageFaults },
    ];

    // Act
    const held = checkLostDeliverable(anInput({ provider: 'eum', ledger, phases: phase(['queue_delay']) }));
    const notSent = checkLostDeliverable(
      anInput({ provider: 'eum', ledger, phases: phase(['queue_delay', 'fail_not_sent']) }),
    );

    // Assess
    expect(held.byReason).toEqual({ provider_queue_expired: 1 });
    expect(notSent.byReason).not.toHaveProperty('provider_queue_expired');
  });

  it('ignores a command that holds an SMS, and one that is not final (lost/stuck count it)', () => {
    // Prepare
    const input = anInput({
      ledger: [{ id: 'SM1', client_reference: 'k-lost#1', accepted_at: iso(T0 + 300), status: 'delivered' }],
    });

    // Act
    const report = checkLostDeliverable(input);

    // Assess
    expect(report.zeroSms).toBe(0);
    expect(report.invariant.count).toBe(0);
  });
});
