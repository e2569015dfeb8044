import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { composeSender, type MetricsSink } from '../../../shared/composition/handlers.js';
import { providersFor } from '../../../shared/composition/provider.js';
import { loadConfig } from '../../../shared/config.js';
import type { HealthSample } from '../../../shared/domain/circuit.js';
import type { ProviderHealth } from '../../../shared/ports/provider-health.js';
import { SETTINGS } from '../../../shared/settings.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';
import {
  acceptedRecord,
  countingProvider,
  plant,
  recordingQueue,
  switchableCipher,
  T0,
} from '../../support/reconcile-fixtures.js';

const NO_METRICS: MetricsSink = {
  addMetric: () => undefined,
  hasStoredMetrics: () => false,
  publishStoredMetrics: () => undefined,
};

const twoProviders = () =>
  loadConfig({
    [SETTINGS.tableName.env]: 'notifications',
    [SETTINGS.providers.env]: 'simulator,eum',
    [SETTINGS.eumOriginationIdentity.env]: 'pool-1',
    [SETTINGS.eumConfigurationSet.env]: 'cs-1',
  });

describe('composition with a provider list', () => {
  it('providersFor builds one port per listed kind, in order, the given primary first', () => {
    // Prepare
    const primary = countingProvider();
    // Act
    const providers = providersFor(
      twoProviders(),
      new ManualClock(T0),
      {} as never,
      () => undefined,
      primary,
    );
    // Assess
    expect(providers.map((p) => p.name)).toEqual(['simulator', 'eum']);
    expect(providers[0]).toBe(primary);
  });

  it('the sender sends through the secondary when the primary refuses, and feeds each sample to the health', async () => {
    // Prepare: the primary refuses (connection refused), the secondary accepts
    const store = new MemoryNotificationStore();
    const cipher = switchableCipher();
    const clock = new ManualClock(T0 + 1_000);
    const { next } = acceptedRecord('k-failover');
    await plant(store, cipher, next);
    const primary = {
      ...countingProvider(),
      send: async () => ({ kind: 'not_sent_retryable' as const, detail: 'connection_refused' }),
    };
    let secondarySends = 0;
    const secondary = {
      ...countingProvider(),
      name: 'eum',
      send: async () => ({ kind: 'accepted' as const, messageId: `eum-${++secondarySends}` }),
    };
    const samples: [string, HealthSample][] = [];
    const health: ProviderHealth = {
      view: async (providers) => providers.map((provider) => ({ provider, state: 'closed' as const })),
      record: async (provider, sample) => {
        samples.push([provider, sample]);
      },
    };
    const handler = await composeSender(twoProviders(), {
      clock,
      logger: new Logger({ serviceName: 'reset-notifier-test', logLevel: 'SILENT' }),
      store,
      queue: recordingQueue(),
      cipher,
      provider: primary,
      providers: [primary, secondary],
      health,
      metrics: NO_METRICS,
    });
    const message = {
      Records: [{ messageId: 'm0', body: JSON.stringify({ idempotency_key: 'k-failover', version: 1 }) }],
    } as SQSEvent;

    // Act
    await handler(message);
    clock.advance(60_000);
    await handler(message);

    // Assess
    expect((await store.get('k-failover'))?.record).toMatchObject({
      state: 'sent',
      attempts: 2,
      provider: { name: 'eum' },
    });
    expect(secondarySends).toBe(1);
    expect(samples).toEqual([
      ['simulator', 'error'],
      ['eum', 'ok'],
    ]);
  });
});
