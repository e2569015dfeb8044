import { describe, expect, it } from 'vitest';
import { dispatchNotification } from '../../../shared/usecases/dispatch-notification.js';
import { PayloadUnreadableError } from '../../../shared/usecases/errors.js';
import { T0 } from '../../support/reconcile-fixtures.js';
import { aSender } from './sender-fixture.js';

describe('dispatchNotification: the payload is opened before the claim', () => {
  it('a cipher failure is "not sent": no claim, no unknown, no provider call, retryable', async () => {
    // Prepare
    const sender = await aSender();
    sender.cipher.failing = true;
    // Act
    const attempt = dispatchNotification(sender.deps, sender.key);
    // Assess
    await expect(attempt).rejects.toBeInstanceOf(PayloadUnreadableError);
    await expect(attempt).rejects.toMatchObject({ code: 'payload_unreadable' });
    const stored = await sender.store.get(sender.key);
    expect(stored?.record).toMatchObject({ state: 'accepted', version: 1, attempts: 0 });
    expect(await sender.store.evidence(sender.key)).toHaveLength(1);
    expect(sender.provider.sends).toBe(0);
  });

  it('sends once the cipher recovers (the queue delivers the message again)', async () => {
    // Prepare
    const sender = await aSender();
    sender.cipher.failing = true;
    await dispatchNotification(sender.deps, sender.key).catch(() => undefined);
    sender.cipher.failing = false;
    // Act
    const report = await dispatchNotification(sender.deps, sender.key);
    // Assess
    expect(report).toMatchObject({ kind: 'sent', outcome: 'accepted', to: 'sent' });
    expect(sender.provider.sends).toBe(1);
  });

  it('with receipts, schedules the first status poll after the grace time', async () => {
    // Prepare
    const sender = await aSender();
    // Act
    await dispatchNotification({ ...sender.deps, receiptGraceMs: 90_000 }, sender.key);
    // Assess
    const stored = await sender.store.get(sender.key);
    expect(stored?.record.dueAt).toBe(T0 + 1_000 + 90_000);
  });
});
