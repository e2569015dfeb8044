/**
 * One contract for the {@link ProviderHealth} port, run against every implementation (the
 * in-memory one and the DynamoDB one): what the sender, the status command and the console rely
 * on. Every container of one test shares the implementation's store; each test has its own provider.
 */
import { describe, expect, it } from 'vitest';
import type { CircuitSettings, HealthSample } from '../../shared/domain/circuit.js';
import type { ProviderHealth } from '../../shared/ports/provider-health.js';

/** The thresholds every implementation is built with for the contract. */
export const CONTRACT_CIRCUIT_SETTINGS: CircuitSettings = {
  windowMs: 30_000,
  minSamples: 10,
  errorRate: 0.5,
  unknownRate: 0.2,
  probePeriodMs: 15_000,
};

/** One container (a sender or an observer) over the shared store, and the state changes it applied. */
export interface HealthContainer {
  readonly health: ProviderHealth;
  readonly changes: () => number;
}

export interface ProviderHealthContractSetup {
  readonly container: (role: 'sender' | 'observer') => HealthContainer;
  /** How long a container may reuse what it read (0: never). */
  readonly cacheMs: number;
}

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);
const { probePeriodMs } = CONTRACT_CIRCUIT_SETTINGS;

let counter = 0;
const aProvider = () => {
  counter += 1;
  return `contract-${counter}-${Math.random().toString(36).slice(2, 8)}`;
};

/** Records `samples` through `health`, all at once (concurrently) at `at`. */
const recordAll = (health: ProviderHealth, provider: string, samples: readonly HealthSample[], at = T0) =>
  Promise.all(samples.map((sample) => health.record(provider, sample, at)));

const times = (n: number, sample: HealthSample): HealthSample[] => Array.from({ length: n }, () => sample);

/** The state one container sees of `provider` at `at`. */
const stateOf = async (health: ProviderHealth, provider: string, at: number) =>
  (await health.view([provider], at))[0]?.state;

/** Registers the contract suite for one implementation; `setup()` is read inside each test. */
export function describeProviderHealthContract(name: string, setup: () => ProviderHealthContractSetup): void {
  describe(`ProviderHealth contract: ${name}`, () => {
    /** A provider whose circuit one sender opened at T0 with ten errors. */
    const opened = async () => {
      const provider = aProvider();
      await recordAll(setup().container('sender').health, provider, times(10, 'error'));
      return provider;
    };

    it('sees a provider nobody recorded for as closed, in the order asked', async () => {
      // Prepare
      const [a, b] = [aProvider(), aProvider()];
      // Act
      const views = await setup().container('sender').health.view([a, b], T0);
      // Assess
      expect(views).toEqual([
        { provider: a, state: 'closed' },
        { provider: b, state: 'closed' },
      ]);
    });

    it('stays closed below the minimum samples, however bad they are', async () => {
      // Prepare
      const provider = aProvider();
      // Act
      await recordAll(setup().container('sender').health, provider, times(9, 'error'));
      // Assess
      expect(await stateOf(setup().container('observer').health, provider, T0)).toBe('closed');
    });

    it.each([
      ['errors', [...times(4, 'ok'), ...times(6, 'error')]],
      ['unknown outcomes', [...times(7, 'ok'), ...times(3, 'unknown')]],
    ] as const)('opens when %s are over their rate, for every container at once', async (_kind, samples) => {
      // Prepare
      const provider = aProvider();
      const sender = setup().container('sender');
      // Act: one at a time, so the last sample is the one that tips the window
      for (const sample of samples) await sender.health.record(provider, sample, T0);
      // Assess
      expect(await sender.health.view([provider], T0)).toEqual([{ provider, state: 'open', since: T0 }]);
      expect(await stateOf(setup().container('sender').health, provider, T0)).toBe('open');
      expect(await stateOf(setup().container('observer').health, provider, T0)).toBe('open');
    });

    it('counts concurrent samples of several senders once each, and opens once', async () => {
      // Prepare
      const provider = aProvider();
      const senders = [1, 2, 3].map(() => setup().container('sender'));
      // Act: nine errors at once, spread over three senders, then the tenth
      await Promise.all(senders.map((s) => recordAll(s.health, provider, times(3, 'error'))));
      const before = await stateOf(setup().container('observer').health, provider, T0);
      await Promise.all(senders.map((s) => recordAll(s.health, provider, times(3, 'error'))));
      // Assess
      expect(before).toBe('closed');
      expect(await stateOf(setup().container('observer').health, provider, T0)).toBe('open');
      expect(senders.reduce((n, s) => n + s.changes(), 0)).toBe(1);
    });

    it('forgets samples that slid out of the window', async () => {
      // Prepare
      const provider = aProvider();
      const sender = setup().container('sender').health;
      await recordAll(sender, provider, times(9, 'error'));
      // Act
      await sender.record(provider, 'error', T0 + CONTRACT_CIRCUIT_SETTINGS.windowMs + 1);
      // Assess
      expect(await stateOf(setup().container('observer').health, provider, T0 + 60_000)).toBe('closed');
    });

    it('lets exactly one of several concurrent senders probe after the probe period; observers never take it', async () => {
      // Prepare
      const provider = await opened();
      const due = T0 + probePeriodMs;
      const observer = setup().container('observer').health;
      // Act
      const early = await stateOf(setup().container('sender').health, provider, due - 1);
      const observed = await stateOf(observer, provider, due);
      const views = await Promise.all(
        [1, 2, 3, 4, 5].map(() => stateOf(setup().container('sender').health, provider, due)),
      );
      // Assess
      expect(early).toBe('open');
      expect(observed).toBe('half_open');
      expect(views.filter((s) => s === 'half_open')).toHaveLength(1);
      expect(views.filter((s) => s === 'open')).toHaveLength(4);
      expect(await stateOf(setup().container('observer').health, provider, due + 1)).toBe('half_open');
    });

    it('closes on an ok probe, with the window started afresh', async () => {
      // Prepare
      const provider = await opened();
      const prober = setup().container('sender').health;
      const due = T0 + probePeriodMs;
      expect(await stateOf(prober, provider, due)).toBe('half_open');
      // Act
      await prober.record(provider, 'ok', due + 500);
      await recordAll(prober, provider, times(9, 'error'), due + 4_000);
      // Assess: the ten errors before the close no longer count
      expect(
        await setup()
          .container('sender')
          .health.view([provider], due + 4_000),
      ).toEqual([{ provider, state: 'closed' }]);
    });

    it('re-opens on a failed probe, for another probe period', async () => {
      // Prepare
      const provider = await opened();
      const prober = setup().container('sender').health;
      const due = T0 + probePeriodMs;
      expect(await stateOf(prober, provider, due)).toBe('half_open');
      // Act
      await prober.record(provider, 'unknown', due + 500);
      // Assess
      expect(
        await setup()
          .container('observer')
          .health.view([provider], due + 500),
      ).toEqual([{ provider, state: 'open', since: due + 500 }]);
      expect(await stateOf(setup().container('sender').health, provider, due + 500 + probePeriodMs - 1)).toBe(
        'open',
      );
      expect(await stateOf(setup().container('sender').health, provider, due + 500 + probePeriodMs)).toBe(
        'half_open',
      );
    });

    it('lets another probe through when one never reports back within a probe period', async () => {
      // Prepare
      const provider = await opened();
      const due = T0 + probePeriodMs;
      expect(await stateOf(setup().container('sender').health, provider, due)).toBe('half_open');
      // Act
      const meanwhile = await stateOf(setup().container('sender').health, provider, due + probePeriodMs - 1);
      const after = await stateOf(setup().container('sender').health, provider, due + probePeriodMs);
      // Assess
      expect(meanwhile).toBe('open');
      expect(after).toBe('half_open');
    });

    it("shows a container another's change once its cache time has passed", async () => {
      // Prepare
      const provider = aProvider();
      const reader = setup().container('sender').health;
      expect(await stateOf(reader, provider, T0)).toBe('closed');
      // Act
      await recordAll(setup().container('sender').health, provider, times(10, 'error'));
      // Assess
      expect(await stateOf(reader, provider, T0 + setup().cacheMs)).toBe('open');
    });

    it('never throws when many senders record and transition at once', async () => {
      // Prepare
      const provider = aProvider();
      const senders = [1, 2, 3, 4].map(() => setup().container('sender'));
      // Act
      const results = await Promise.allSettled(
        senders.flatMap((s) => times(8, 'error').map((sample) => s.health.record(provider, sample, T0))),
      );
      // Assess
      expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
      expect(senders.reduce((n, s) => n + s.changes(), 0)).toBe(1);
      expect(await stateOf(setup().container('observer').health, provider, T0)).toBe('open');
    });
  });
}
