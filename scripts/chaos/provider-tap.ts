/**
 * Observes the sender's side of every provider send (the global `fetch` the Twilio adapter uses):
 * when a call started and when its caller gave up. Set against the simulator's request log this
 * measures how long after a timeout a request can still reach the provider, which is exactly what
 * the reconciler's settle time must exceed.
 */

/** The sender's view of one send request. */
export interface TappedCall {
  readonly startedAt: number;
  endedAt?: number;
  /** The caller gave up (timeout, abort, transport error) instead of getting a response. */
  gaveUp?: boolean;
}

export interface ProviderTap {
  /** By client reference (from the request's StatusCallback URL). */
  readonly calls: Map<string, TappedCall>;
  restore(): void;
}

function clientReferenceOf(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  const callback = new URLSearchParams(body).get('StatusCallback');
  if (!callback) return undefined;
  try {
    return new URL(callback).searchParams.get('client_reference') ?? undefined;
  } catch {
    return undefined;
  }
}

const PROVIDER_API = /^https?:\/\/[^/]+(\/2010-04-01\/.*)$/;

/**
 * Wraps `globalThis.fetch` until {@link ProviderTap.restore}. With `redirectTo`, requests to the
 * provider's Messages API go to that origin instead (the simulator thread). Other requests pass
 * through untouched.
 */
export function tapProviderSends(options: { redirectTo?: string } = {}): ProviderTap {
  const original = globalThis.fetch;
  const calls = new Map<string, TappedCall>();
  const tapped: typeof fetch = async (requested, init) => {
    const target =
      typeof requested === 'string' ? requested : requested instanceof URL ? requested.href : requested.url;
    const path = PROVIDER_API.exec(target)?.[1];
    const url =
      options.redirectTo !== undefined && path !== undefined ? `${options.redirectTo}${path}` : target;
    const input = url === target ? requested : url;
    const reference =
      init?.method === 'POST' && url.endsWith('/Messages.json') ? clientReferenceOf(init.body) : undefined;
    if (reference === undefined) return original(input, init);
    const call: TappedCall = { startedAt: Date.now() };
    calls.set(reference, call);
    try {
      const response = await original(input, init);
      call.endedAt = Date.now();
      return response;
    } catch (error) {
      call.endedAt = Date.now();
      call.gaveUp = true;
      throw error;
    }
  };
  globalThis.fetch = tapped;
  return {
    calls,
    restore() {
      if (globalThis.fetch === tapped) globalThis.fetch = original;
    },
  };
}
