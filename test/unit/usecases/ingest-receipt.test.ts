import { describe, expect, it } from 'vitest';
import { applyTransition } from '../../../shared/domain/notification.js';
import { ReasonCode as R, NotificationState as S } from '../../../shared/domain/states.js';
import { ingestReceipt, type ReceiptInput } from '../../../shared/usecases/ingest-receipt.js';
import type { StoreOperation } from '../../support/memory-store.js';
import { aDispatchingRecord, anUnknownRecord, aRecord, aSentRecord } from '../domain/fixtures.js';
import { seededStore, writtenAfterSeed } from './seeded-store.js';

const KEY = 'sms:password_reset:evt-1';

function aReceipt(overrides: Partial<ReceiptInput> = {}): ReceiptInput {
  return {
    provider: 'twilio',
    clientReference: `${KEY}#1`,
    messageId: 'SM-1',
    status: 'delivered',
    providerStatus: 'delivered',
    dedupeToken: 'tok-1',
    ...overrides,
  };
}

describe('ingestReceipt', () => {
  it('moves sent to delivered with one evidence record (delivery_receipt, actor receipt)', async () => {
    // Prepare
    const seed = aSentRecord();
    const { store, clock, policy } = await seededStore(seed);

    // Act
    const result = await ingestReceipt({ store, clock, policy }, aReceipt());

    // Assess
    expect(result).toEqual({ kind: 'applied', to: S.delivered });
    const written = await writtenAfterSeed(store, KEY, seed.version);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({
      fromState: S.sent,
      toState: S.delivered,
      reason: R.deliveryReceipt,
      actor: 'receipt',
      providerMessageId: 'SM-1',
    });
  });

  it('settles dispatch_unknown as found: the record takes the receipt message id', async () => {
    // Prepare
    const seed = anUnknownRecord();
    const { store, clock, policy } = await seededStore(seed);

    // Act
    const result = await ingestReceipt(
      { store, clock, policy },
      aReceipt({ messageId: 'SM-found', status: 'sent', providerStatus: 'sent' }),
    );

    // Assess
    expect(result).toEqual({ kind: 'applied', to: S.sent });
    const [record] = store.records();
    expect(record).toMatchObject({ state: S.sent, provider: { messageId: 'SM-found' } });
    expect(record?.unknownSince).toBeUndefined();
  });

  it('takes a receipt for a record still dispatching (the call is in flight): no further send', async () => {
    // Prepare
    const { store, clock, policy } = await seededStore(aDispatchingRecord());

    // Act
    const result = await ingestReceipt({ store, clock, policy }, aReceipt({ status: 'sent' }));

    // Assess
    expect(result).toEqual({ kind: 'applied', to: S.sent });
    expect(store.records()[0]?.leaseUntil).toBeUndefined();
  });

  it('writes nothing for the same receipt twice, same token or not (duplicates are one fact)', async () => {
    // Prepare
    const seed = aSentRecord();
    const { store, clock, policy } = await seededStore(seed);
    await ingestReceipt({ store, clock, policy }, aReceipt());

    // Act
    const sameToken = await ingestReceipt({ store, clock, policy }, aReceipt());
    const otherToken = await ingestReceipt({ store, clock, policy }, aReceipt({ dedupeToken: 'tok-2' }));

    // Assess
    expect(sameToken).toEqual({ kind: 'ignored', why: 'final' });
    expect(otherToken).toEqual({ kind: 'ignored', why: 'final' });
    expect(await writtenAfterSeed(store, KEY, seed.version)).toHaveLength(1);
  });

  it('never moves a record backwards: sent after delivered, and sent twice, change nothing', async () => {
    // Prepare
    const seed = anUnknownRecord();
    const { store, clock, policy } = await seededStore(seed);
    const deps = { store, clock, policy };

    // Act: out of order (delivered first), then the late `sent`, twice.
    const first = await ingestReceipt(deps, aReceipt({ status: 'delivered' }));
    const late = await ingestReceipt(deps, aReceipt({ status: 'sent', providerStatus: 'sent' }));
    const again = await ingestReceipt(deps, aReceipt({ status: 'sent', providerStatus: 'sent' }));

    // Assess
    expect([first.kind, late.kind, again.kind]).toEqual(['applied', 'ignored', 'ignored']);
    expect(store.records()[0]?.state).toBe(S.delivered);
    expect(await writtenAfterSeed(store, KEY, seed.version)).toHaveLength(1);
  });

  it('a repeated `sent` on a sent record is not newer and writes nothing', async () => {
    // Prepare
    const seed = aSentRecord();
    const { store, clock, policy } = await seededStore(seed);

    // Act
    const result = await ingestReceipt({ store, clock, policy }, aReceipt({ status: 'pending' }));

    // Assess
    expect(result).toEqual({ kind: 'ignored', why: 'not_newer' });
    expect(await writtenAfterSeed(store, KEY, seed.version)).toEqual([]);
  });

  it('ignores a receipt about another message of a sent record', async () => {
    const { store, clock, policy } = await seededStore(aSentRecord());
    const result = await ingestReceipt({ store, clock, policy }, aReceipt({ messageId: 'SM-other' }));
    expect(result).toEqual({ kind: 'ignored', why: 'other_message' });
  });

  it('allows a new attempt on not_sent for the current attempt (provider_not_sent)', async () => {
    // Prepare
    const seed = aSentRecord();
    const { store, clock, policy } = await seededStore(seed);

    // Act
    const result = await ingestReceipt(
      { store, clock, policy },
      aReceipt({ status: 'not_sent', providerStatus: 'failed' }),
    );

    // Assess
    expect(result).toEqual({ kind: 'applied', to: S.accepted });
    const [written] = await writtenAfterSeed(store, KEY, seed.version);
    expect(written).toMatchObject({ reason: R.providerNotSent, actor: 'receipt' });
  });

  it('ignores not_sent for an earlier attempt: the current attempt is not affected', async () => {
    const { store, clock, policy } = await seededStore(aSentRecord({ attempts: 2 }));
    const result = await ingestReceipt(
      { store, clock, policy },
      aReceipt({ status: 'not_sent', providerStatus: 'failed' }),
    );
    expect(result).toEqual({ kind: 'ignored', why: 'not_sent_for_old_attempt' });
  });

  it('ignores an attempt the record never made', async () => {
    const { store, clock, policy } = await seededStore(aSentRecord());
    const result = await ingestReceipt({ store, clock, policy }, aReceipt({ clientReference: `${KEY}#2` }));
    expect(result).toEqual({ kind: 'ignored', why: 'unknown_attempt' });
  });

  it('records the late truth of an unknown that expired (unknown_at_expiry -> delivered), once', async () => {
    // Prepare
    const seed = aRecord({ state: S.expired, attempts: 1, lastReason: R.unknownAtExpiry, version: 6 });
    const { store, clock, policy } = await seededStore(seed);
    const deps = { store, clock, policy };

    // Act
    const first = await ingestReceipt(deps, aReceipt({ messageId: 'SM-late' }));
    const repeat = await ingestReceipt(deps, aReceipt({ messageId: 'SM-late' }));

    // Assess
    expect(first).toEqual({ kind: 'applied', to: S.delivered });
    expect(repeat).toEqual({ kind: 'ignored', why: 'final' });
    expect(store.records()[0]).toMatchObject({ state: S.delivered, provider: { messageId: 'SM-late' } });
    expect(await writtenAfterSeed(store, KEY, seed.version)).toHaveLength(1);
  });

  it('leaves an expired-before-dispatch record alone, and never revives an expired one as sent', async () => {
    // Prepare
    const beforeDispatch = aRecord({ state: S.expired, lastReason: R.expiredBeforeDispatch, attempts: 1 });
    const unknown = aRecord({ state: S.expired, lastReason: R.unknownAtExpiry, attempts: 1 });
    const a = await seededStore(beforeDispatch);
    const b = await seededStore(unknown);

    // Act
    const r1 = await ingestReceipt(a, aReceipt());
    const r2 = await ingestReceipt(b, aReceipt({ status: 'sent', providerStatus: 'sent' }));

    // Assess
    expect([r1, r2]).toEqual([
      { kind: 'ignored', why: 'final' },
      { kind: 'ignored', why: 'final' },
    ]);
  });

  it('answers unknown_reference for a reference that is not ours, without reading the store', async () => {
    // Prepare
    const reads: StoreOperation[] = [];
    const { store, clock, policy } = await seededStore(aSentRecord(), {
      beforeOperation: (operation) => {
        reads.push(operation);
      },
    });
    reads.length = 0;

    // Act
    const results = await Promise.all(
      ['', 'no-hash', `${KEY}#0`, `${KEY}#x`, '#1'].map((clientReference) =>
        ingestReceipt({ store, clock, policy }, aReceipt({ clientReference })),
      ),
    );

    // Assess
    expect(results.every((r) => r.kind === 'unknown_reference')).toBe(true);
    expect(reads).toEqual([]);
  });

  it('answers unknown_command for a well-formed reference with no command', async () => {
    const { store, clock, policy } = await seededStore(aSentRecord());
    const result = await ingestReceipt(
      { store, clock, policy },
      aReceipt({ clientReference: 'other-key#1' }),
    );
    expect(result).toEqual({ kind: 'unknown_command' });
  });

  it('re-reads and re-decides after a lost version race', async () => {
    // Prepare: the first transition attempt finds that the sender just wrote `sent` (version race).
    const seed = anUnknownRecord();
    let raced = false;
    const setup = await seededStore(seed, {
      beforeOperation: async (operation) => {
        if (operation !== 'transition' || raced) return;
        raced = true;
        const current = (await setup.store.get(KEY))?.record;
        if (current === undefined) throw new Error('seed missing');
        // Another writer moves the record first: sent with the same message id.
        await setup.store.transition(
          applyTransition(current, {
            to: S.sent,
            reason: R.reconciledFound,
            actor: 'reconciler',
            at: current.updatedAt + 1,
            set: { provider: { name: 'simulator', messageId: 'SM-1' }, sentAt: current.updatedAt + 1 },
          }),
        );
      },
    });

    // Act
    const result = await ingestReceipt(setup, aReceipt({ status: 'delivered' }));

    // Assess: the receipt is re-decided against `sent` and moves it on (not a second `sent`).
    expect(result).toEqual({ kind: 'applied', to: S.delivered });
    const written = await writtenAfterSeed(setup.store, KEY, seed.version);
    expect(written.map((e) => `${e.fromState}->${e.toState}`)).toEqual([
      'dispatch_unknown->sent',
      'sent->delivered',
    ]);
  });

  it('gives up after repeated lost races with an ignored result, writing nothing itself', async () => {
    // Prepare: every transition write loses its race.
    const seed = anUnknownRecord();
    const setup = await seededStore(seed);
    let writes = 0;
    setup.store.transition = async (applied) => {
      writes++;
      return { kind: 'stale', current: applied.previous };
    };

    // Act
    const result = await ingestReceipt(setup, aReceipt());

    // Assess
    expect(result).toEqual({ kind: 'ignored', why: 'contended' });
    expect(writes).toBe(3);
    expect(await writtenAfterSeed(setup.store, KEY, seed.version)).toEqual([]);
  });

  it('lets a store fault through (the provider retries the callback)', async () => {
    const { store, clock, policy } = await seededStore(aSentRecord(), {
      beforeOperation: (operation) => {
        if (operation === 'get') throw new Error('ThrottlingException');
      },
    });
    await expect(ingestReceipt({ store, clock, policy }, aReceipt())).rejects.toThrow('ThrottlingException');
  });
});
