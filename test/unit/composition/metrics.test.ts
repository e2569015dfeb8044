import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  composeReconcileWorker,
  composeSender,
  type HandlerParts,
  type MetricsSink,
} from '../../../shared/composition/handlers.js';
import { loadConfig } from '../../../shared/config.js';
import type { NotificationStore } from '../../../shared/ports/store.js';
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

/** A sink that keeps what was recorded and each publish. */
function aRecordingSink() {
  let stored: Array<[string, number]> = [];
  const published: Array<Array<[string, number]>> = [];
  const sink: MetricsSink = {
    addMetric: (name, _unit, value) => {
      stored.push([name, value]);
    },
    hasStoredMetrics: () => stored.length > 0,
    publishStoredMetrics: () => {
      published.push(stored);
      stored = [];
    },
  };
  return { sink, published };
}

function parts(store: NotificationStore, metrics: MetricsSink, provider = countingProvider()): HandlerParts {
  return {
    clock: new ManualClock(T0),
    logger: new Logger({ serviceName: 'reset-notifier-test', logLevel: 'SILENT' }),
    store,
    queue: recordingQueue(),
    cipher: switchableCipher(),
    provider,
    metrics,
  };
}

function batch(...keys: string[]): SQSEvent {
  return {
    Records: keys.map((key, i) => ({
      messageId: `m${i}`,
      body: JSON.stringify({ idempotency_key: key, version: 1 }),
    })),
  } as SQSEvent;
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('service metrics (EMF, published once per invocation)', () => {
  it('sender: counts provider calls, unknown outcomes and failed records, in one publish per batch', async () => {
    // Prepare: one key whose send ends unknown, one whose read fails
    const store = new MemoryNotificationStore({
      beforeOperation: (operation, key) => {
        if (operation === 'get' && key === 'bad') throw new Error('boom');
      },
    });
    const cipher = switchableCipher();
    await plant(store, cipher, acceptedRecord('k-1').next);
    const provider = {
      ...countingProvider(),
      send: async () => ({ kind: 'unknown' as const, detail: 'timeout', timedOut: true }),
    };
    const { sink, published } = aRecordingSink();
    const handler = await composeSender(loadConfig({}), { ...parts(store, sink, provider), cipher });

    // Act
    const response = await handler(batch('k-1', 'bad'));
    await handler(batch());

    // Assess: one publish (the empty batch recorded nothing and published nothing)
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    expect(published).toHaveLength(1);
    expect(published[0]?.sort()).toEqual(
      [
        ['ProviderSends', 1],
        ['ProviderUnknownOutcomes', 1],
        ['SenderRecordFailures', 1],
      ].sort(),
    );
  });

  it('reconcile worker: one EMF line per batch, in the namespace the stack sets, with only the service dimension', async () => {
    // Prepare: Powertools Metrics writing to a captured stdout
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'ResetNotifier/TestStack');
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const metrics = new Metrics({ serviceName: 'reset-notifier' });
    const handler = await composeReconcileWorker(
      loadConfig({}),
      parts(new MemoryNotificationStore(), metrics),
    );

    // Act
    await handler(batch());
    await handler(batch());

    // Assess
    const lines = written
      .join('')
      .split('\n')
      .filter((line) => line.includes('"_aws"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: 'ResetNotifier/TestStack',
            Dimensions: [['service']],
            Metrics: expect.arrayContaining([
              { Name: 'ReconcileWorkerItemErrors', Unit: 'Count' },
              { Name: 'ReconcilePoisonItems', Unit: 'Count' },
              { Name: 'ReconcileParkedItems', Unit: 'Count' },
            ]),
          },
        ],
      },
      service: 'reset-notifier',
      ReconcileWorkerItemErrors: 0,
      ReconcilePoisonItems: 0,
      ReconcileParkedItems: 0,
    });
    expect(Object.keys(lines[0] ?? {}).sort()).toEqual(
      ['_aws', 'service', 'ReconcileWorkerItemErrors', 'ReconcilePoisonItems', 'ReconcileParkedItems'].sort(),
    );
  });
});
