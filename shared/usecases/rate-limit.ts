import type { Clock } from '../domain/clock.js';
import type { LookupOutcome } from '../domain/provider.js';
import type { LookupRef, SmsProvider } from '../ports/sms-provider.js';

/** Waits `ms` milliseconds. Injected so tests drive time with a manual clock, never the wall. */
export type Sleep = (ms: number) => Promise<void>;

/** Wall-clock sleep for production. */
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Options of {@link createTokenBucket}. */
export interface TokenBucketOptions {
  /** Sustained rate; 0 or less means unbounded. */
  readonly ratePerSecond: number;
  /** Tokens available at once (default: one second's worth, at least 1). */
  readonly burst?: number;
  readonly clock: Clock;
  readonly sleep: Sleep;
}

/** A token bucket: {@link TokenBucket.acquire} resolves when a token was taken, in call order. */
export interface TokenBucket {
  acquire(): Promise<void>;
  /** Milliseconds callers spent waiting so far (a figure for logs and benchmarks). */
  readonly waitedMs: number;
}

/**
 * A per-container token bucket. Callers are served in order (a promise chain), so a burst of
 * concurrent lookups is spread over time instead of racing for the same token.
 */
export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  const rate = options.ratePerSecond;
  const burst = Math.max(1, options.burst ?? Math.ceil(rate));
  let tokens = burst;
  let refilledAt = options.clock.now();
  let waitedMs = 0;
  let tail: Promise<void> = Promise.resolve();
  const refill = () => {
    const now = options.clock.now();
    tokens = Math.min(burst, tokens + ((now - refilledAt) / 1000) * rate);
    refilledAt = now;
  };
  const take = async () => {
    for (;;) {
      refill();
      if (tokens >= 1) {
        tokens -= 1;
        return;
      }
      const wait = Math.ceil(((1 - tokens) / rate) * 1000);
      waitedMs += wait;
      await options.sleep(wait);
    }
  };
  return {
    acquire() {
      if (!(rate > 0)) return Promise.resolve();
      const turn = tail.then(take);
      tail = turn.catch(() => undefined);
      return turn;
    },
    get waitedMs() {
      return waitedMs;
    },
  };
}

/** The provider with its lookups bounded by `bucket` (sends are untouched: the reconciler never sends). */
export function rateLimitedLookups(provider: SmsProvider, bucket: TokenBucket): SmsProvider {
  return {
    name: provider.name,
    capabilities: provider.capabilities,
    send: (command) => provider.send(command),
    async lookup(ref: LookupRef): Promise<LookupOutcome> {
      await bucket.acquire();
      return provider.lookup(ref);
    },
  };
}

/**
 * The default lookup rate for a provider when `PROVIDER_LOOKUP_RATE_PER_SECOND` is unset: none.
 * SNS is bounded inside its adapter instead, per `FilterLogEvents` call (5 per second per account;
 * the adapter's default is 4), because one call there serves a whole batch of lookups.
 */
export function defaultLookupRate(_provider: string): number {
  return 0;
}
