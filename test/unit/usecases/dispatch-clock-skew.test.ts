import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../shared/domain/clock.js';
import type { ServerTimeSample } from '../../../shared/domain/clock-skew.js';
import { decideReconcile } from '../../../shared/domain/dispatch.js';
import { finalOutcomeOf } from '../../../shared/domain/zero-sms.js';
import type { CommandStore } from '../../../shared/ports/command-store.js';
import type { ServerTimeSource } from '../../../shared/ports/server-time.js';
import type { SmsProvider } from '../../../shared/ports/sms-provider.js';
import { dispatchNotification } from '../../../shared/usecases/dispatch-notification.js';
import { POLICY, T0 } from '../../support/reconcile-fixtures.js';
import { aSender } from './sender-fixture.js';

type SendCommand = Parameters<SmsProvider['send']>[0];

/** The accepted command of {@link aSender} expires 10 minutes after T0. */
const EXPIRES_AT = T0 + 10 * 60_000;

/**
 * The store as the DynamoDB adapter serves it: every answer carries the server's time (the
 * `Date` header, whole seconds), and the server's clock is `serverAheadMs` ahead of `clock`.
 */
function withServerTime(store: CommandStore, clock: Clock, serverAheadMs: number) {
  let latest: ServerTimeSample | undefined;
  const serverTime: ServerTimeSource = { latestServerTime: () => latest };
  const sampled = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const sentAt = clock.now();
        const result = await value.apply(target, args);
        const serverDate = Math.floor((clock.now() + serverAheadMs) / 1000) * 1000;
        latest = { serverDate, sentAt, receivedAt: clock.now() };
        return result;
      };
    },
  });
  return { store: sampled, serverTime };
}

/** A sender whose clock is `slowByMs` behind the store's server (negative: ahead), at `trueNow`. */
async function aSkewedSender(slowByMs: number, trueNow: number) {
  const sender = await aSender();
  sender.clock.set(trueNow - slowByMs);
  const { store, serverTime } = withServerTime(sender.store, sender.clock, slowByMs);
  return { ...sender, deps: { ...sender.deps, store, serverTime } };
}

describe('dispatchNotification: the sender clock against the store server time (issue 25 item 8)', () => {
  it('a sender 15 s slow does not claim 4 s after the token expired: the command expires unsent', async () => {
    // Prepare
    const sender = await aSkewedSender(15_000, EXPIRES_AT + 4_000);
    // Act
    const report = await dispatchNotification(sender.deps, sender.key);
    // Assess
    expect(report).toMatchObject({ kind: 'transitioned', to: 'expired', reason: 'expired_before_dispatch' });
    expect(sender.provider.sends).toBe(0);
    const trail = await sender.store.evidence(sender.key);
    expect(trail.map((e) => e.reason)).toEqual(['admitted', 'expired_before_dispatch']);
    // Stamped on the later clock: not before the token's real expiry.
    expect(trail[1]?.at).toBeGreaterThanOrEqual(EXPIRES_AT + 4_000);
  });

  it('a sender 15 s slow well before expiry sends nothing: the claim is given back with clock_skew', async () => {
    // Prepare
    const sender = await aSkewedSender(15_000, T0 + 60_000);
    // Act
    const report = await dispatchNotification(sender.deps, sender.key);
    // Assess
    expect(report).toEqual({
      kind: 'refused',
      why: 'clock_skew',
      detail: 'clock_skew:behind:15',
      recorded: true,
    });
    expect(sender.provider.sends).toBe(0);
    const stored = await sender.store.get(sender.key);
    expect(stored?.record).toMatchObject({
      state: 'accepted',
      attempts: 0,
      reasonDetail: 'clock_skew:behind:15',
    });
    const trail = await sender.store.evidence(sender.key);
    expect(trail.map((e) => [e.reason, e.reasonDetail])).toEqual([
      ['admitted', undefined],
      ['claimed', undefined],
      ['call_not_started', 'clock_skew:behind:15'],
    ]);
  });

  it('a sender 15 s fast sends nothing either', async () => {
    // Prepare
    const sender = await aSkewedSender(-15_000, T0 + 60_000);
    // Act
    const report = await dispatchNotification(sender.deps, sender.key);
    // Assess
    expect(report).toMatchObject({ kind: 'refused', detail: 'clock_skew:ahead:14' });
    expect(sender.provider.sends).toBe(0);
  });

  it('a refused command that runs out of time ends loudly: an expiry naming the skew, a paging zero-SMS outcome', async () => {
    // Prepare
    const sender = await aSkewedSender(15_000, T0 + 60_000);
    await dispatchNotification(sender.deps, sender.key);
    const stored = await sender.store.get(sender.key);
    if (!stored) throw new Error('command missing');
    // Act: the reconciler (a correct clock) finds it past the dispatch deadline
    const step = decideReconcile(stored.record, EXPIRES_AT, POLICY);
    // Assess
    expect(step).toMatchObject({
      kind: 'transition',
      intent: { to: 'expired', reasonDetail: 'not_claimed_in_time:clock_skew:behind:15' },
    });
    if (step.kind !== 'transition') return;
    const outcome = finalOutcomeOf(
      {
        fromState: 'accepted',
        fromFinal: false,
        toState: 'expired',
        toFinal: true,
        reason: step.intent.reason,
        ...(step.intent.reasonDetail === undefined ? {} : { reasonDetail: step.intent.reasonDetail }),
      },
      [],
    );
    expect(outcome?.zeroSms).toEqual({ class: 'expired_before_dispatch', destination: 'valid', pages: true });
  });

  it('a clock within the bound sends, its validity period counted on the later clock', async () => {
    // Prepare: 1.5 s slow, 100 s before expiry
    const sender = await aSkewedSender(1_500, EXPIRES_AT - 100_000);
    const commands: SendCommand[] = [];
    const provider = {
      ...sender.provider,
      send: (command: SendCommand) => {
        commands.push(command);
        return sender.provider.send(command);
      },
    };
    // Act
    const report = await dispatchNotification({ ...sender.deps, provider }, sender.key);
    // Assess
    expect(report).toMatchObject({ kind: 'sent', outcome: 'accepted' });
    expect(sender.provider.sends).toBe(1);
    // Our clock says 101.5 s are left; the server's, at most 100.
    expect(commands[0]?.validityPeriodSeconds).toBeLessThanOrEqual(100);
    // The provider times its call on our clock: the deadline is in it.
    expect(commands[0]?.deadline).toBeLessThanOrEqual(sender.clock.now() + POLICY.providerTimeoutMs);
  });
});
