import { describe, expect, it } from 'vitest';
import { startLocalStack } from '../../../local/stack.js';
import { loadLocalConfig } from '../../../shared/config.js';
import { SETTINGS, settingsEnv } from '../../../shared/settings.js';

describe('the local stack settings', () => {
  it('take the defaults of the settings table when unset', () => {
    // Act
    const local = loadLocalConfig({});
    // Assess
    expect(local).toEqual({
      ports: { api: 3000, sim: 4010, dynamodb: 8000, sqs: 4566 },
      reconcileIntervalMs: 5_000,
      reconcileWorkerConcurrency: 2,
      reconcilePollWorkerConcurrency: 2,
      queueVisibilityTimeoutSeconds: 30,
      maxReceiveCount: 5,
      consoleEnabled: true,
    });
  });

  it('read what is set, with the codecs of the table', () => {
    // Prepare
    const env = settingsEnv({ reconcileWorkers: 4, reconcileInterval: 0.5, console: 'off', simPort: 0 });
    // Act
    const local = loadLocalConfig(env);
    // Assess
    expect(local).toMatchObject({
      reconcileWorkerConcurrency: 4,
      reconcileIntervalMs: 500,
      consoleEnabled: false,
      ports: { sim: 0 },
    });
  });

  it.each([
    [SETTINGS.reconcileWorkers.env, 'abc', /must be a number, got "abc"/],
    [SETTINGS.reconcilePollWorkers.env, '0', /must be at least 1/],
    [SETTINGS.maxReceiveCount.env, '2.5', /must be a whole number/],
    [SETTINGS.apiPort.env, 'http', /must be a number/],
  ])('refuse %s=%s with the variable named', (name, value, message) => {
    expect(() => loadLocalConfig({ [name]: value })).toThrow(new RegExp(`^${name} `));
    expect(() => loadLocalConfig({ [name]: value })).toThrow(message);
  });

  it('stop the start before anything runs when one is malformed (not 0 workers without a word)', async () => {
    // Act
    const started = startLocalStack({ env: settingsEnv({ reconcileWorkers: 'abc' }) });
    // Assess
    await expect(started).rejects.toThrow(/^RECONCILE_WORKER_CONCURRENCY must be a number, got "abc"/);
  });
});
