import { describe, expect, it } from 'vitest';
import { circuitSettingsOf, publishingCircuits } from '../../../shared/composition/provider-health.js';
import { CIRCUIT_LEVELS, circuitMetric } from '../../../shared/handlers/service-metrics.js';
import { settingsEnv } from '../../../shared/settings.js';
import { CircuitTable, MemoryProviderHealth } from '../../support/memory-provider-health.js';

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);

describe('circuitSettingsOf', () => {
  it('reads the CIRCUIT_* settings, with their defaults when unset', () => {
    // Act
    const defaults = circuitSettingsOf({});
    const set = circuitSettingsOf(
      settingsEnv({
        circuitWindow: 60,
        circuitMinSamples: 3,
        circuitErrorRate: 25,
        circuitUnknownRate: 5,
        circuitProbe: 2,
      }),
    );
    // Assess
    expect(defaults).toEqual({
      windowMs: 30_000,
      minSamples: 10,
      errorRate: 0.5,
      unknownRate: 0.2,
      probePeriodMs: 15_000,
    });
    expect(set).toEqual({
      windowMs: 60_000,
      minSamples: 3,
      errorRate: 0.25,
      unknownRate: 0.05,
      probePeriodMs: 2_000,
    });
  });

  it('refuses a rate over 100 % naming the variable', () => {
    expect(() => circuitSettingsOf({ CIRCUIT_ERROR_RATE_PERCENT: '150' })).toThrow(
      /^CIRCUIT_ERROR_RATE_PERCENT must be at most 100/,
    );
  });
});

describe('publishingCircuits', () => {
  it("publishes each viewed provider's circuit level, and records through", async () => {
    // Prepare
    const published: [string, number][] = [];
    const metrics = {
      addMetric: (name: string, _unit: unknown, value: number) => {
        published.push([name, value]);
      },
      hasStoredMetrics: () => published.length > 0,
      publishStoredMetrics: () => undefined,
    };
    const settings = circuitSettingsOf({});
    const health = publishingCircuits(new MemoryProviderHealth(new CircuitTable(), settings), metrics);
    for (let i = 0; i < 10; i += 1) await health.record('twilio', 'error', T0);
    // Act
    await health.view(['twilio', 'eum'], T0);
    // Assess
    expect(published).toEqual([
      [circuitMetric('twilio'), CIRCUIT_LEVELS.open],
      [circuitMetric('eum'), CIRCUIT_LEVELS.closed],
    ]);
  });
});
