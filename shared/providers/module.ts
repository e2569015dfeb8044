/**
 * The one shape of a provider's runtime side: `shared/providers/<kind>/module.ts` exports one
 * {@link ProviderModule} and `./registry.ts` lists it. The composition root reads the module (what
 * it declares, how to build it) and never branches on the provider's name. The deploy side of the
 * same provider (environment, grants, resources) is `<kind>/infra.ts`, imported only by `infra/`,
 * so no Lambda bundle carries aws-cdk-lib (docs/providers/README.md, "Adding a provider").
 */
import type { ServiceConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { ProviderCapabilities } from '../domain/provider.js';
import type { DestinationFaults } from '../domain/zero-sms.js';
import type { SmsProvider } from '../ports/sms-provider.js';

/**
 * Something an adapter observed that operators must see (an absence proof switched off, ...):
 * one log line with `fields` (ids and causes only, never a number or a body) and one count of
 * `metric` through the service's one metrics sink.
 */
export interface ProviderEvent {
  readonly provider: string;
  /** The log line's message. */
  readonly message: string;
  /** A name of `SERVICE_METRICS` (shared/handlers/service-metrics.ts): the alarms read it there. */
  readonly metric: string;
  readonly fields: Readonly<Record<string, string | number>>;
}

/** What a module's `build` gets besides the settings. */
export interface ProviderBuildDeps {
  readonly clock: Clock;
  /** Where the adapter's events go (the composition root: a log line and a metric). */
  readonly onEvent: (event: ProviderEvent) => void;
}

/** One provider, as the composition root sees it. */
export interface ProviderModule<K extends ServiceConfig['provider'] = ServiceConfig['provider']> {
  /** `PROVIDER`'s value, and the port's `name`. */
  readonly kind: K;
  /** Known without building the adapter: decisions must not wait on its secret. */
  readonly capabilities: ProviderCapabilities;
  /**
   * Names of the entries of the settings table (`SETTINGS` in `shared/settings.ts`) this provider
   * reads (a unit test checks each is one).
   */
  readonly settings: readonly string[];
  /** The provider has a feedback API: the port's optional `confirm` is offered. */
  readonly feedback: boolean;
  /**
   * The adapter bounds its own lookup calls (one call serves a batch): a per-lookup bucket in front
   * would serialise the batch away. Otherwise `PROVIDER_LOOKUP_RATE_PER_SECOND` bounds lookups.
   */
  readonly boundsOwnLookups: boolean;
  /** Its `reason_detail` codes that put the fault on the destination (zero-SMS outcomes that never page). */
  readonly destinationFaults: DestinationFaults;
  /** Refuses settings that cannot work, at cold start (a deployment error must be loud). */
  check?(config: ServiceConfig): void;
  /** The adapter for these settings (may read a secret: the composition root retries a failure). */
  build(config: ServiceConfig, deps: ProviderBuildDeps): Promise<SmsProvider>;
}

/** The adapter with the port's optional `confirm` (a provider's feedback API) added. */
export function withFeedback(
  adapter: SmsProvider,
  confirm: NonNullable<SmsProvider['confirm']>,
): SmsProvider {
  return {
    name: adapter.name,
    capabilities: adapter.capabilities,
    send: (command) => adapter.send(command),
    lookup: (ref) => adapter.lookup(ref),
    confirm,
  };
}
