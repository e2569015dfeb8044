import { describe, expect, it } from 'vitest';
import { checkAll, checkDuplicates, type LedgerEntry } from '../../../scripts/chaos/invariants.js';
import {
  checkMisattributed,
  checkStale,
  receiptsSeenIn,
  unknownOutcomes,
} from '../../../scripts/chaos/provider-truth.js';
import type { EvidenceRecord, NotificationRecord } from '../../../shared/domain/notification.js';
import { aGoodDataset, T0 } from './fixtures.js';

const iso = (ms: number) => new Date(ms).toISOString();

function aMessage(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    id: 'SM2',
    client_reference: 'k-other#1',
    accepted_at: iso(T0 + 500),
    status: 'delivered',
    redacted: false,
    receipts: 'none',
    ...overrides,
  };
}

function delivered(dataset = aGoodDataset()): NotificationRecord {
  const record = dataset.commands.find((c) => c.idempotencyKey === 'k-ok');
  if (record === undefined) throw new Error('fixture: k-ok missing');
  return record;
}

describe('misattributed', () => {
  it('accepts the consistent dataset, and checkAll prints it', () => {
    // Prepare
    const dataset = aGoodDataset();

    // Act
    const all = checkAll(dataset);

    // Assess
    expect(all.find((i) => i.name === 'misattributed')?.count).toBe(0);
    expect(all.find((i) => i.name === 'stale')?.count).toBe(0);
  });

  it('counts a record holding another key’s message (the second reset to the same number)', () => {
    // Prepare: k-ok's record took SM2, a message created for k-other.
    const dataset = aGoodDataset();
    const record = { ...delivered(dataset), provider: { name: 'simulator', messageId: 'SM2' } };

    // Act
    const found = checkMisattributed([record], [], [...dataset.ledger, aMessage()]);

    // Assess
    expect(found.count).toBe(1);
    expect(found.examples[0]).toBe('k-ok: holds SM2, a message of k-other');
    expect(found.keys).toEqual(['k-ok']);
  });

  it('counts a wrong id that only an evidence record ever held, once per key and id', () => {
    // Prepare
    const dataset = aGoodDataset();
    const wrong: EvidenceRecord = {
      ...(dataset.evidence.at(-1) as EvidenceRecord),
      providerMessageId: 'SM2',
    };

    // Act
    const found = checkMisattributed(
      dataset.commands,
      [...dataset.evidence, wrong, wrong],
      [...dataset.ledger, aMessage()],
    );

    // Assess
    expect(found.count).toBe(1);
  });

  it('counts an id the provider does not have, and a ledger entry without a reference', () => {
    const dataset = aGoodDataset();
    const unknownId = { ...delivered(dataset), provider: { name: 'simulator', messageId: 'SM-nowhere' } };
    const orphan = {
      ...delivered(dataset),
      idempotencyKey: 'k-2',
      provider: { name: 'simulator', messageId: 'SM3' },
    };
    const found = checkMisattributed(
      [unknownId, orphan],
      [],
      [aMessage({ id: 'SM3', client_reference: null })],
    );
    expect(found.count).toBe(2);
  });
});

describe('stale', () => {
  it('counts a delivered message whose record stayed unknown and expired', () => {
    // Prepare
    const dataset = aGoodDataset();
    const record = {
      ...delivered(dataset),
      state: 'expired',
      lastReason: 'unknown_at_expiry',
      provider: { name: 'simulator' },
    } as NotificationRecord;

    // Act
    const { invariant, excused } = checkStale([record], dataset.ledger);

    // Assess
    expect(invariant.count).toBe(1);
    expect(excused).toBe(0);
    expect(invariant.examples[0]).toContain('k-ok: SM1 was delivered, the record says expired');
  });

  it('excuses it only when every receipt was lost and the reads were redacted', () => {
    // Prepare
    const dataset = aGoodDataset();
    const record = {
      ...delivered(dataset),
      state: 'expired',
      lastReason: 'unknown_at_expiry',
    } as NotificationRecord;
    const cases = [
      { message: { redacted: true, receipts: 'lost' as const }, stale: 0 },
      { message: { redacted: true, receipts: 'delayed' as const }, stale: 1 },
      { message: { redacted: false, receipts: 'lost' as const }, stale: 1 },
    ];

    // Act
    const counts = cases.map(
      ({ message }) =>
        checkStale([record], [aMessage({ id: 'SM1', client_reference: 'k-ok#1', ...message })]).invariant
          .count,
    );

    // Assess
    expect(counts).toEqual(cases.map((c) => c.stale));
  });

  it('excuses a provider that finds by returned id only, when that id never reached the record', () => {
    // Prepare: SNS accepted the Publish, then the call timed out: the record holds no id.
    const dataset = aGoodDataset();
    const unknownWithoutId = {
      ...delivered(dataset),
      state: 'expired',
      lastReason: 'unknown_at_expiry',
      provider: { name: 'sns' },
    } as NotificationRecord;
    const wrongId = {
      ...unknownWithoutId,
      provider: { name: 'sns', messageId: 'other' },
    } as NotificationRecord;
    const message = aMessage({ id: 'SM1', client_reference: 'k-ok#1' });
    // Act
    const idOnly = checkStale([unknownWithoutId], [message], undefined, { findsOnlyById: true });
    const withId = checkStale([wrongId], [message], undefined, { findsOnlyById: true });
    const otherProvider = checkStale([unknownWithoutId], [message], undefined, { findsOnlyById: false });
    // Assess: only the id that never came back is excused
    expect([idOnly.invariant.count, idOnly.excused]).toEqual([0, 1]);
    expect(withId.invariant.count).toBe(1);
    expect(otherProvider.invariant.count).toBe(1);
  });

  it('excuses a provider that shows messages only through events, when every event of the message was lost', () => {
    // Prepare: End User Messaging accepted the message, the answer and every event were lost
    const dataset = aGoodDataset();
    const unknown = {
      ...delivered(dataset),
      state: 'expired',
      lastReason: 'unknown_at_expiry',
      provider: { name: 'eum' },
    } as NotificationRecord;
    const lost = aMessage({ id: 'SM1', client_reference: 'k-ok#1', receipts: 'lost' });
    const delayed = aMessage({ id: 'SM1', client_reference: 'k-ok#1', receipts: 'delayed' });
    // Act / Assess: only the message whose events were all lost is excused
    expect(checkStale([unknown], [lost], undefined, { eventsOnly: true }).excused).toBe(1);
    expect(checkStale([unknown], [delayed], undefined, { eventsOnly: true }).invariant.count).toBe(1);
    expect(checkStale([unknown], [lost], undefined, { eventsOnly: false }).invariant.count).toBe(1);
  });

  it('treats "no receipt ever reached the route" as all lost when receipts were observed', () => {
    const dataset = aGoodDataset();
    const record = {
      ...delivered(dataset),
      state: 'sent',
      provider: { name: 'simulator' },
    } as NotificationRecord;
    const message = aMessage({ id: 'SM1', client_reference: 'k-ok#1', redacted: true, receipts: 'none' });
    expect(checkStale([record], [message], new Map()).invariant.count).toBe(0);
    expect(checkStale([record], [message], new Map([['SM1', 2]])).invariant.count).toBe(1);
  });

  it('ignores messages that were not delivered, and records that know the message', () => {
    const dataset = aGoodDataset();
    const failed = aMessage({ id: 'SM9', client_reference: 'k-ok#2', status: 'failed' });
    expect(checkStale(dataset.commands, [...dataset.ledger, failed]).invariant.count).toBe(0);
  });
});

describe('duplicates with not-sent failures', () => {
  it('a failed (never handed to a carrier) message and its retry are not a duplicate', () => {
    const ledger = [
      aMessage({ id: 'SM1', client_reference: 'k#1', status: 'failed' }),
      aMessage({ id: 'SM2', client_reference: 'k#2' }),
    ];
    expect(checkDuplicates(ledger).count).toBe(0);
    expect(checkDuplicates([...ledger, aMessage({ id: 'SM3', client_reference: 'k#3' })]).count).toBe(1);
  });
});

describe('receiptsSeenIn', () => {
  it('counts receipt lines by message id and nothing else', () => {
    const lines = [
      JSON.stringify({ level: 'INFO', message: 'receipt', message_id: 'SM1', result: 'applied' }),
      JSON.stringify({ level: 'INFO', message: 'receipt', message_id: 'SM1', result: 'ignored' }),
      JSON.stringify({ level: 'WARN', message: 'receipt rejected', why: 'bad_signature' }),
      'plain text "message":"receipt" not json',
    ];
    expect(receiptsSeenIn(lines)).toEqual(new Map([['SM1', 2]]));
  });
});

describe('unknown outcomes without an SMS', () => {
  it('counts unknowns, splits those that left the user without an SMS by final reason and cause', () => {
    // Prepare: k-ok went unknown once but its message exists; k-none timed out before acceptance.
    const dataset = aGoodDataset();
    const ok = delivered(dataset);
    const none = {
      ...ok,
      idempotencyKey: 'k-none',
      state: 'expired',
      lastReason: 'unknown_at_expiry',
    } as NotificationRecord;
    const unknown = (key: string, attempt: number): EvidenceRecord => ({
      ...(dataset.evidence[1] as EvidenceRecord),
      idempotencyKey: key,
      fromState: 'dispatching',
      toState: 'dispatch_unknown',
      reason: 'provider_timeout',
      attempt,
    });
    const requests = [
      { received_at: iso(T0), client_reference: 'k-ok#1', fault: 'timeout_after_accept' },
      { received_at: iso(T0), client_reference: 'k-none#1', fault: 'timeout_before_accept' },
    ];

    // Act
    const report = unknownOutcomes(
      [ok, none],
      [unknown('k-ok', 1), unknown('k-none', 1)],
      dataset.ledger,
      requests,
    );

    // Assess
    expect(report).toEqual({
      unknown: 2,
      withSms: 1,
      withoutSms: 1,
      withoutSmsByReason: { unknown_at_expiry: 1 },
      withoutSmsByCause: { timeout_before_accept: 1 },
    });
  });

  it('names a call that never reached the provider no_request', () => {
    const dataset = aGoodDataset();
    const none = {
      ...delivered(dataset),
      idempotencyKey: 'k-x',
      state: 'expired',
      lastReason: 'expired_before_dispatch',
    } as NotificationRecord;
    const trail: EvidenceRecord = {
      ...(dataset.evidence[1] as EvidenceRecord),
      idempotencyKey: 'k-x',
      toState: 'dispatch_unknown',
      attempt: 1,
    };
    expect(unknownOutcomes([none], [trail], [], []).withoutSmsByCause).toEqual({ no_request: 1 });
  });
});
