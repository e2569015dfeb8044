import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoProviderHealth, type HealthRole } from '../adapters/dynamodb/provider-health.js';
import type { ServiceConfig } from '../config.js';
import type { CircuitSettings } from '../domain/circuit.js';
import { CIRCUIT_LEVELS, circuitMetric } from '../handlers/service-metrics.js';
import type { ProviderHealth } from '../ports/provider-health.js';
import { type Env, readNumber, SETTINGS } from '../settings.js';
import { clientConfig } from './clients.js';
import type { MetricsSink } from './handlers.js';

/** The circuit's thresholds from the environment (the `CIRCUIT_*` settings). */
export function circuitSettingsOf(env: Env = process.env): CircuitSettings {
  return {
    windowMs: readNumber(env, SETTINGS.circuitWindow) * 1000,
    minSamples: readNumber(env, SETTINGS.circuitMinSamples),
    errorRate: readNumber(env, SETTINGS.circuitErrorRate) / 100,
    unknownRate: readNumber(env, SETTINGS.circuitUnknownRate) / 100,
    probePeriodMs: readNumber(env, SETTINGS.circuitProbe) * 1000,
  };
}

/** What {@link providerHealthFor} builds on besides the configuration. */
export interface ProviderHealthParts {
  /** `sender`: its views may let the one probe through; `observer` (status, console): reads only. */
  readonly role: HealthRole;
  /** Default: a client for the configured endpoint and region. */
  readonly client?: DynamoDBClient;
  /** Faults (warn) and state changes (info); default none. */
  readonly logger?: Logger;
  /** A sender's: each view publishes every provider's circuit ({@link circuitMetric}). */
  readonly metrics?: MetricsSink;
  /** Where the `CIRCUIT_*` settings are read; default `process.env`. */
  readonly env?: Env;
}

/**
 * The provider circuits (docs/providers/failover.md#circuit), kept in the service's table and
 * shared by every sender. For the sender's composition (A wires it into the dispatch: one view per
 * send, one sample per provider call), the status command and the console (observers).
 */
export function providerHealthFor(config: ServiceConfig, parts: ProviderHealthParts): ProviderHealth {
  const { logger } = parts;
  const health = createDynamoProviderHealth({
    client: parts.client ?? new DynamoDBClient(clientConfig(config, config.dynamodbEndpoint)),
    tableName: config.tableName,
    settings: circuitSettingsOf(parts.env),
    role: parts.role,
    onFault: ({ provider, operation, error }) =>
      logger?.warn('provider health not read or recorded', { provider, operation, error: error as Error }),
    onChange: ({ provider, change }) =>
      logger?.info('provider circuit changed', { provider, to: change.to, reason: change.reason }),
  });
  return parts.metrics === undefined ? health : publishingCircuits(health, parts.metrics);
}

/** `health` whose every view publishes each provider's circuit level through `metrics`. */
export function publishingCircuits(health: ProviderHealth, metrics: MetricsSink): ProviderHealth {
  return {
    view: async (providers, now) => {
      const views = await health.view(providers, now);
      for (const view of views) {
        metrics.addMetric(circuitMetric(view.provider), MetricUnit.NoUnit, CIRCUIT_LEVELS[view.state]);
      }
      return views;
    },
    record: (provider, sample, now) => health.record(provider, sample, now),
  };
}
