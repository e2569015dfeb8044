import { describe, expect, it } from 'vitest';
import {
  type DispatchStep,
  type DispatchStepHook,
  InjectedCrashError,
  withDispatchSteps,
} from '../../../local/faults/dispatch-crash.js';
import type { SmsProvider } from '../../../shared/ports/sms-provider.js';
import { dispatchNotification } from '../../../shared/usecases/dispatch-notification.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';
import {
  acceptedRecord,
  countingProvider,
  keyOnShard,
  POLICY,
  plant,
  switchableCipher,
  T0,
} from '../../support/reconcile-fixtures.js';

/** A sender over the in-memory store and a fake provider; `log` gets every port call and step, in order. */
async function aSender(options: { provider?: SmsProvider } = {}) {
  const log: string[] = [];
  const store = new MemoryNotificationStore({
    beforeOperation: (operation) => {
      log.push(`store.${operation}`);
    },
  });
  const cipher = switchableCipher();
  const provider = countingProvider();
  const fake = options.provider ?? provider;
  const logged: SmsProvider = {
    ...fake,
    send: (command) => {
      log.push('provider.send');
      return fake.send(command);
    },
  };
  const clock = new ManualClock(T0 + 1_000);
  const { next } = acceptedRecord(keyOnShard(0));
  await plant(store, cipher, next);
  log.length = 0;
  const key = next.idempotencyKey;
  const dispatch = (hook: DispatchStepHook) => {
    const ports = withDispatchSteps({ store, provider: logged }, async (step, at) => {
      log.push(step);
      expect(at).toBe(key);
      await hook(step, at);
    });
    return dispatchNotification({ ...ports, cipher, clock, policy: POLICY, owner: 'test-sender' }, key);
  };
  return { store, provider, clock, log, key, dispatch };
}

const crashAt = (crashStep: DispatchStep) => (step: DispatchStep) => {
  if (step === crashStep) throw new InjectedCrashError(`crash at ${step}`);
};

describe('withDispatchSteps: the sender reaches each step at its port call', () => {
  it('fires the four steps in order around the claim, the send and the outcome write', async () => {
    // Prepare
    const sender = await aSender();
    // Act
    const report = await sender.dispatch(() => undefined);
    // Assess
    expect(report).toMatchObject({ kind: 'sent', outcome: 'accepted', recorded: true, to: 'sent' });
    expect(sender.log).toEqual([
      'store.get',
      'before_claim',
      'store.transition',
      'after_claim',
      'provider.send',
      'after_provider_call',
      'before_outcome_write',
      'store.transition',
    ]);
  });

  it.each([
    ['before_claim', 'accepted', 0],
    ['after_claim', 'dispatching', 0],
    ['after_provider_call', 'dispatching', 1],
    ['before_outcome_write', 'dispatching', 1],
  ] as const)('a crash at %s leaves the record %s after %d sends', async (step, state, sends) => {
    // Prepare
    const sender = await aSender();
    // Act
    const attempt = sender.dispatch(crashAt(step));
    // Assess
    await expect(attempt).rejects.toBeInstanceOf(InjectedCrashError);
    await expect(attempt).rejects.toMatchObject({ code: 'injected_crash' });
    // Nothing is written after the crash, and no later step is reached.
    const log = [...sender.log];
    expect(log.at(-1)).toBe(step);
    expect(log.filter((entry) => entry === 'store.transition')).toHaveLength(step === 'before_claim' ? 0 : 1);
    expect((await sender.store.get(sender.key))?.record.state).toBe(state);
    expect(sender.provider.sends).toBe(sends);
  });

  it('an adapter that throws still reaches after_provider_call, and its error reads as unknown', async () => {
    // Prepare
    const throwing: SmsProvider = {
      ...countingProvider(),
      send: async () => {
        throw new TypeError('adapter bug');
      },
    };
    const sender = await aSender({ provider: throwing });
    // Act
    const report = await sender.dispatch(() => undefined);
    // Assess
    expect(report).toMatchObject({ kind: 'sent', outcome: 'unknown', detail: 'adapter_threw:TypeError' });
    expect(sender.log.slice(-3)).toEqual(['after_provider_call', 'before_outcome_write', 'store.transition']);
  });

  it('a claim given up before the call (call_not_started) reaches no outcome step', async () => {
    // Prepare
    const sender = await aSender();
    // Act: the claim write "took" so long that no call can finish inside the lease.
    const report = await sender.dispatch((step) => {
      if (step === 'after_claim') sender.clock.advance(POLICY.providerTimeoutMs + POLICY.leaseSlackMs);
    });
    // Assess
    expect(report).toMatchObject({ kind: 'transitioned', to: 'accepted', reason: 'call_not_started' });
    expect(sender.provider.sends).toBe(0);
    expect(sender.log).toEqual([
      'store.get',
      'before_claim',
      'store.transition',
      'after_claim',
      'store.transition',
    ]);
  });

  it('a claim lost to a concurrent sender reaches before_claim only', async () => {
    // Prepare
    const sender = await aSender();
    let rival: ReturnType<typeof sender.dispatch> | undefined;
    // Act: a second sender claims, sends and records while the first is about to claim.
    const report = await sender.dispatch(async (step) => {
      if (step !== 'before_claim' || rival) return;
      rival = sender.dispatch(() => undefined);
      await rival;
    });
    // Assess
    expect(report).toEqual({ kind: 'lost_race', at: 'claim' });
    expect(await rival).toMatchObject({ kind: 'sent', recorded: true });
    expect(sender.provider.sends).toBe(1);
    expect(sender.log).toEqual([
      'store.get',
      'before_claim',
      ...['store.get', 'before_claim', 'store.transition', 'after_claim'],
      ...['provider.send', 'after_provider_call', 'before_outcome_write', 'store.transition'],
      'store.transition',
    ]);
  });
});
