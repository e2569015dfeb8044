/**
 * The provider-health port: one circuit per provider, shared by every sender (kept in the store,
 * not per container), so a brownout seen by one sender moves every sender to the next provider
 * (issue 23, docs/providers/failover.md). The circuit's rules are pure (`../domain/circuit.ts`);
 * this port only reads and records.
 */
import type { EpochMs } from '../domain/notification.js';

/**
 * A circuit's state: `closed` sends normally; `open` sends nothing (the sender moves to the next
 * provider, which is safe: nothing left); `half_open` lets one probe send through to see whether
 * the provider is back.
 */
export type CircuitState = 'closed' | 'open' | 'half_open';

/** What one send told us about the provider's health (never about the destination). */
export type HealthSample =
  /** Accepted, or refused for a reason about the destination: the provider works. */
  | 'ok'
  /** Refused before acceptance for a reason about the provider (5xx, throttle, connection refused). */
  | 'error'
  /** The call's outcome is unknown (a timeout after the request left). */
  | 'unknown';

/** A provider's circuit as the sender sees it at `now`. */
export interface CircuitView {
  readonly provider: string;
  readonly state: CircuitState;
  /** Open or half-open since (absent when closed). */
  readonly since?: EpochMs;
}

/** The one port the sender, the status command and the console use for provider health. */
export interface ProviderHealth {
  /** Each named provider's circuit at `now`, in the order given. */
  view(providers: readonly string[], now: EpochMs): Promise<readonly CircuitView[]>;
  /** Records one send's sample; may open, close or half-open the circuit. Never throws on contention. */
  record(provider: string, sample: HealthSample, now: EpochMs): Promise<void>;
}
