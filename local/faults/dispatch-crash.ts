/**
 * Crash injection into the sender (chaos runs, crash tests): a hook runs at four points of a
 * dispatch, where a real Lambda can die, and may throw {@link InjectedCrashError} to die there.
 * The points are found from the calls the dispatch use case makes on its ports, so the use case
 * itself carries no test seam: {@link withDispatchSteps} wraps the store and provider handed to
 * the sender (never the reconciler's).
 */

import type { SenderPorts } from '../../shared/composition/handlers.js';
import type { SendOutcome } from '../../shared/domain/provider.js';
import { NotificationState } from '../../shared/domain/states.js';
import { UseCaseError } from '../../shared/usecases/errors.js';

/** The points of a dispatch a crash can be injected at. */
export const DispatchStep = {
  beforeClaim: 'before_claim',
  afterClaim: 'after_claim',
  afterProviderCall: 'after_provider_call',
  beforeOutcomeWrite: 'before_outcome_write',
} as const;
export type DispatchStep = (typeof DispatchStep)[keyof typeof DispatchStep];

/** Runs when a dispatch of `idempotencyKey` reaches `step`; throws to crash the sender there. */
export type DispatchStepHook = (step: DispatchStep, idempotencyKey: string) => void | Promise<void>;

/** A crash injected on purpose: behaves like a Lambda dying at that step (the message comes back). */
export class InjectedCrashError extends UseCaseError {
  readonly code = 'injected_crash';
}

/** A send made for a key whose outcome is not written yet, and what its `after_provider_call` threw. */
interface PendingOutcome {
  readonly attempt: number;
  readonly crash?: { readonly error: unknown };
}

/**
 * The sender's ports with `hook` run at each step of a dispatch:
 *
 * - `before_claim`: before the claim, the store `transition` into `dispatching`;
 * - `after_claim`: once that claim returned `written`;
 * - `after_provider_call`: once `provider.send` settled (returned or threw);
 * - `before_outcome_write`: before the next `transition` out of `dispatching` of that key and
 *   attempt, i.e. the outcome write after a send. A claim given up before any send (the
 *   `call_not_started` write) reaches no step, as a send that was never made has no outcome.
 *
 * The use case catches whatever `provider.send` throws (a broken adapter reads as an unknown
 * outcome), so a throw of the `after_provider_call` hook cannot leave from there: it is kept and
 * thrown by the outcome write, before anything is written. Nothing the use case does between the
 * two is visible outside, so the crash has the same effect as one right after the call.
 */
export function withDispatchSteps(ports: SenderPorts, hook: DispatchStepHook): SenderPorts {
  const pending = new Map<string, PendingOutcome>();

  const store = override(ports.store, {
    async transition(applied) {
      const key = applied.next.idempotencyKey;
      const from = applied.previous.state;
      if (from !== NotificationState.dispatching && applied.next.state === NotificationState.dispatching) {
        await hook(DispatchStep.beforeClaim, key);
        const result = await ports.store.transition(applied);
        if (result.kind !== 'written') return result;
        // A new attempt: whatever an earlier one left unwritten is not this dispatch's.
        pending.delete(key);
        await hook(DispatchStep.afterClaim, key);
        return result;
      }
      const sent = pending.get(key);
      if (from === NotificationState.dispatching && sent?.attempt === applied.previous.attempts) {
        pending.delete(key);
        if (sent.crash) throw sent.crash.error;
        await hook(DispatchStep.beforeOutcomeWrite, key);
      }
      return ports.store.transition(applied);
    },
  });

  const provider = override(ports.provider, {
    async send(command) {
      let settled: { readonly outcome: SendOutcome } | { readonly error: unknown };
      try {
        settled = { outcome: await ports.provider.send(command) };
      } catch (error) {
        settled = { error };
      }
      let crash: PendingOutcome['crash'];
      try {
        await hook(DispatchStep.afterProviderCall, command.idempotencyKey);
      } catch (error) {
        crash = { error };
      }
      pending.set(command.idempotencyKey, { attempt: command.attempt, ...(crash ? { crash } : {}) });
      if ('error' in settled) throw settled.error;
      return settled.outcome;
    },
  });

  return { store, provider };
}

/**
 * `target` with some methods replaced; every other member is read from `target` itself (methods
 * bound to it), so the wrapper keeps up with a port that gains members and with class instances.
 */
function override<T extends object>(target: T, methods: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(methods, property)) return methods[property as keyof T];
      const value = Reflect.get(object, property, object);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}
