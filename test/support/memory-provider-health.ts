/**
 * An in-memory {@link ProviderHealth} over the domain's circuit rules: the shared "table" is a
 * {@link CircuitTable}, each instance one container (a sender or an observer) reading it. For the
 * contract suite and for unit tests of the sender's use of the port; no cache (a view sees every
 * change at once, which the contract allows).
 */
import {
  afterSample,
  applyChange,
  type Circuit,
  type CircuitChange,
  type CircuitSettings,
  CLOSED_CIRCUIT,
  type HealthSample,
  letProbeThrough,
  observedState,
  probeDue,
  senderState,
  withSample,
} from '../../shared/domain/circuit.js';
import type { EpochMs } from '../../shared/domain/notification.js';
import type { CircuitView, ProviderHealth } from '../../shared/ports/provider-health.js';

/** The circuits every container of one test shares, by provider. */
export class CircuitTable {
  readonly circuits = new Map<string, Circuit>();

  get(provider: string): Circuit {
    return this.circuits.get(provider) ?? CLOSED_CIRCUIT;
  }

  /** Applies `change` if the stored circuit still has `version` (the store's guarded write). */
  apply(provider: string, version: number, change: CircuitChange): boolean {
    const current = this.get(provider);
    if (current.version !== version) return false;
    this.circuits.set(provider, applyChange(current, change));
    return true;
  }
}

/** One container's {@link ProviderHealth} over `table`. */
export class MemoryProviderHealth implements ProviderHealth {
  /** Every change this container applied, oldest first. */
  readonly changes: { readonly provider: string; readonly change: CircuitChange }[] = [];

  constructor(
    private readonly table: CircuitTable,
    private readonly settings: CircuitSettings,
    private readonly role: 'sender' | 'observer' = 'sender',
  ) {}

  async view(providers: readonly string[], now: EpochMs): Promise<readonly CircuitView[]> {
    return providers.map((provider) => {
      const circuit = this.table.get(provider);
      if (this.role === 'sender' && probeDue(circuit, now, this.settings)) {
        const probe = letProbeThrough(circuit, now, this.settings);
        if (probe !== undefined && this.apply(provider, circuit.version, probe)) {
          return { provider, state: 'half_open', since: now };
        }
      }
      const stored = this.table.get(provider);
      const state = this.role === 'sender' ? senderState(stored) : observedState(stored, now, this.settings);
      return state === 'closed' || stored.since === undefined
        ? { provider, state }
        : { provider, state, since: stored.since };
    });
  }

  async record(provider: string, sample: HealthSample, now: EpochMs): Promise<void> {
    const counted = withSample(this.table.get(provider), sample, now, this.settings);
    this.table.circuits.set(provider, counted);
    const change = afterSample(counted, sample, now, this.settings);
    if (change !== undefined) this.apply(provider, counted.version, change);
  }

  private apply(provider: string, version: number, change: CircuitChange): boolean {
    const applied = this.table.apply(provider, version, change);
    if (applied) this.changes.push({ provider, change });
    return applied;
  }
}
