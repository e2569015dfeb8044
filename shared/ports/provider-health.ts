/**
 * The provider-health port: one circuit per provider, shared by every sender (kept in the store,
 * not per container), so a brownout seen by one sender moves every sender to the next provider
 * (issue 23, docs/providers/failover.md). The circuit's rules are pure (`../domain/circuit.ts`);
 * this port only reads and records.
 */
import type { CircuitState, HealthSample } from '../domain/circuit.js';
import type { EpochMs } from '../domain/notification.js';

/** The circuit's states and a send's sample are the domain's (`../domain/circuit.ts`), where its rules are. */
export type { CircuitState, HealthSample } from '../domain/circuit.js';

/** A provider's circuit as the sender sees it at `now`. */
export interface CircuitView {
  readonly provider: string;
  readonly state: CircuitState;
  /** Open or half-open since (absent when closed). */
  readonly since?: EpochMs;
}

/** The one port the sender, the status command and the console use for provider health. */
export interface ProviderHealth {
  /**
   * Each named provider's circuit at `now`, in the order given. For a sender, `half_open` means
   * this very call let the one probe through (a guarded write in the store): send it, and record
   * its sample; every other sender sees `open` until the probe reports back, or until a probe
   * period passes without it. An observer (status, console) sees `half_open` while a probe is due
   * or out, and its view never writes.
   */
  view(providers: readonly string[], now: EpochMs): Promise<readonly CircuitView[]>;
  /** Records one send's sample; may open, close or half-open the circuit. Never throws on contention. */
  record(provider: string, sample: HealthSample, now: EpochMs): Promise<void>;
}
