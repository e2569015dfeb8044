import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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
import { countingFinalOutcomes, providerEventReporter } from '../../../shared/composition/outcome-metrics.js';
import { loadConfig } from '../../../shared/config.js';
import { applyTransition, type NotificationRecord } from '../../../shared/domain/notification.js';
import type { NotificationStore } from '../../../shared/ports/store.js';
import { twilioEvent } from '../../../shared/providers/twilio/module.js';
import type { TwilioAdapterEvent } from '../../../shared/providers/twilio/provider.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';
import {
  acceptedRecord,
  countingProvider,
  plant,
  recordingQueue,
  switchableCipher,
  T0,
  unknownRecord,
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

describe('final outcome metrics (counted where transitions are written)', () => {
  it('reconcile worker: an unknown that expires is one final outcome and one zero-SMS outcome (unknown_at_expiry)', async () => {
    // Prepare: an unknown whose token ran out 19 minutes ago; lookups stay inconclusive
    const store = new MemoryNotificationStore();
    const cipher = switchableCipher();
    await plant(store, cipher, unknownRecord('k-exp', { now: T0 - 20 * 60_000, expiresInMs: 60_000 }));
    const { sink, published } = aRecordingSink();
    const handler = await composeReconcileWorker(loadConfig({}), { ...parts(store, sink), cipher });

    // Act
    await handler(batch('k-exp'));

    // Assess
    expect((await store.get('k-exp'))?.record).toMatchObject({
      state: 'expired',
      lastReason: 'unknown_at_expiry',
    });
    const names = published
      .flat()
      .filter(([, value]) => value > 0)
      .map(([name]) => name);
    expect(names.filter((n) => n.startsWith('ZeroSms') || n === 'FinalOutcomes').sort()).toEqual(
      ['FinalOutcomes', 'ZeroSmsOutcome', 'ZeroSmsUnknownAtExpiry'].sort(),
    );
  });

  it('counts a refusal of an invalid number as a destination fault only (never the paging metric)', async () => {
    // Prepare
    const store = new MemoryNotificationStore();
    const cipher = switchableCipher();
    const dispatching = claimedRecord('k-bad-number');
    await plant(store, cipher, dispatching);
    const { sink, published } = aRecordingSink();
    const counting = countingFinalOutcomes(store, sink);
    const refused = applyTransition(dispatching, {
      to: 'failed',
      reason: 'provider_rejected_permanent',
      reasonDetail: 'twilio:21211',
      actor: 'sender',
      at: T0 + 5,
    });

    // Act
    const first = await counting.transition(refused);
    const replay = await counting.transition(refused);
    sink.publishStoredMetrics();

    // Assess: the stale replay changed nothing and counted nothing
    expect([first.kind, replay.kind]).toEqual(['written', 'stale']);
    expect(published).toEqual([
      [
        ['FinalOutcomes', 1],
        ['ZeroSmsDestinationFault', 1],
      ],
    ]);
  });

  it('passes every other store member through unchanged', async () => {
    // Prepare
    const store = new MemoryNotificationStore();
    const counting = countingFinalOutcomes(store, aRecordingSink().sink);

    // Act / Assess
    expect(counting.dueShardCount).toBe(store.dueShardCount);
    expect(await counting.get('absent')).toBeUndefined();
  });

  it('records the Twilio adapter events through the service metrics, no second EMF path', () => {
    // Prepare
    const { sink, published } = aRecordingSink();
    const warned: Array<[string, Record<string, unknown>]> = [];
    const reporter = providerEventReporter(
      { warn: (m: string, f: Record<string, unknown>) => warned.push([m, f]) } as never,
      sink,
    );
    const report = (event: TwilioAdapterEvent) => reporter(twilioEvent(event));

    // Act
    report({ kind: 'redaction_observed', messageSid: `SM${'a'.repeat(32)}`, why: 'blank_body' });
    report({ kind: 'list_lag_observed', messageSid: `SM${'b'.repeat(32)}`, ageMs: 90_000 });
    sink.publishStoredMetrics();

    // Assess
    expect(published).toEqual([
      [
        ['TwilioRedactionObserved', 1],
        ['TwilioListLagObserved', 1],
      ],
    ]);
    expect(warned.map(([message]) => message)).toEqual([
      'twilio absence proof disabled',
      'twilio absence proof disabled',
    ]);
    expect(JSON.stringify(warned)).not.toContain('_aws');
  });

  it('no source file writes EMF by hand: every metric goes through Powertools Metrics into the one namespace', () => {
    // Prepare
    const root = resolve(import.meta.dirname, '../../..');
    const files = ['shared', 'functions', 'infra'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join(root, dir, f)),
    );

    // Act
    const handWritten = files.filter((f) => readFileSync(f, 'utf8').includes('CloudWatchMetrics'));

    // Assess
    expect(files.length).toBeGreaterThan(20);
    expect(handWritten).toEqual([]);
  });
});

/** A `dispatching` record for `key` (claimed at T0). */
function claimedRecord(key: string): NotificationRecord {
  const admitted = acceptedRecord(key).next;
  return applyTransition(admitted, { to: 'dispatching', reason: 'claimed', actor: 'sender', at: T0 + 1 })
    .next;
}
