import { AsyncLocalStorage } from 'node:async_hooks';
import type { IamEnforcer } from './enforcer.js';
import type { LocalFunction } from './template.js';

/** Who is calling: the function whose role signs the AWS requests made in this async context. */
export interface Caller {
  readonly fn: LocalFunction;
  readonly enforcer: IamEnforcer;
}

const callers = new AsyncLocalStorage<Caller>();

/**
 * Runs `task` as function `fn`: every AWS SDK call and cipher operation it starts, directly or
 * through timers and promises, is evaluated against `fn`'s role by `enforcer` (as Lambda signs a
 * function's calls with its execution role). Without an enforcer, runs `task` unchanged.
 */
export function runAs<T>(enforcer: IamEnforcer | undefined, fn: LocalFunction, task: () => T): T {
  return enforcer === undefined ? task() : callers.run({ fn, enforcer }, task);
}

/** The caller of the current async context, if code runs as a function. */
export function currentCaller(): Caller | undefined {
  return callers.getStore();
}
