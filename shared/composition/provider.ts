import { Logger } from '@aws-lambda-powertools/logger';
import type { ServiceConfig } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { Fingerprinter } from '../domain/fingerprint.js';
import type { ProviderCapabilities } from '../domain/provider.js';
import type { SmsProvider } from '../ports/sms-provider.js';
import type { ProviderEvent } from '../providers/module.js';
import { type ProviderKind, providerModule } from '../providers/registry.js';

const eventLogger = new Logger({ serviceName: 'reset-notifier' });

/**
 * Where an adapter event goes when the caller gives nothing: one log line (ids and cause only,
 * never a number or a body). The composition root passes a reporter that also records the metric
 * through the service's Powertools `Metrics` (`outcome-metrics.ts`).
 */
function logProviderEvent(event: ProviderEvent): void {
  eventLogger.warn(event.message, { ...event.fields });
}

/**
 * The configured provider, built on first use so a failure to read its secret is retried by the
 * next message. If it cannot be built, nothing was sent: `send` says so, `lookup` is inconclusive.
 * What it is comes from its module (`shared/providers/registry.ts`), never from its name.
 */
export function providerFor(
  config: ServiceConfig,
  clock: Clock,
  // Kept for the callers' signature: no adapter reads the destination's fingerprint any more.
  _fingerprinter: Fingerprinter,
  /** Adapter events (absence proofs switched off, ...); default: one log line each. */
  onEvent: (event: ProviderEvent) => void = logProviderEvent,
): SmsProvider {
  const module = providerModule(config.provider);
  // Settings that cannot work refuse to start (at cold start, not at the first message): a
  // deployment error must be loud, not an endless provider_unavailable.
  module.check?.(config);
  let built: Promise<SmsProvider> | undefined;
  const get = () => {
    built ??= module.build(config, { clock, onEvent }).catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built.catch(() => undefined);
  };
  return {
    name: config.provider,
    // Known before the adapter is built: decisions must not wait on its secret.
    capabilities: module.capabilities,
    async send(command) {
      const provider = await get();
      return provider
        ? provider.send(command)
        : { kind: 'not_sent_retryable', detail: 'provider_unavailable' };
    },
    async lookup(ref) {
      const provider = await get();
      return provider ? provider.lookup(ref) : { kind: 'inconclusive', detail: 'provider_unavailable' };
    },
    ...(module.feedback
      ? {
          async confirm(messageId: string) {
            const provider = await get();
            return provider?.confirm
              ? provider.confirm(messageId)
              : { kind: 'failed', detail: provider ? 'no_feedback_api' : 'provider_unavailable' };
          },
        }
      : {}),
  };
}

/**
 * Every listed provider (`PROVIDERS`, docs/providers/failover.md), in order: one port per kind,
 * each built by {@link providerFor} from the same settings with its own kind. `primary`, when
 * given, stands for the first (the local stack's own, wrapped for its faults). One kind: `[primary]`.
 */
export function providersFor(
  config: ServiceConfig,
  clock: Clock,
  fingerprinter: Fingerprinter,
  onEvent: (event: ProviderEvent) => void = logProviderEvent,
  primary: SmsProvider = providerFor(config, clock, fingerprinter, onEvent),
): readonly SmsProvider[] {
  return config.providers.map((kind, i) =>
    i === 0 ? primary : providerFor({ ...config, provider: kind }, clock, fingerprinter, onEvent),
  );
}

/**
 * With more than one provider (`PROVIDERS`), which attempts a receipt edge may settle: those of a
 * provider whose details are in the edge's grammar (the Twilio route: `twilio` and `simulator`,
 * whose adapter is Twilio's; End User Messaging events: `eum`). One provider: unset, as before.
 */
export function receiptsSettleFor(
  config: Pick<ServiceConfig, 'providers'>,
): ((edge: string, provider: string) => boolean) | undefined {
  if (config.providers.length < 2) return undefined;
  return (edge, provider) =>
    (config.providers as readonly string[]).includes(provider) &&
    providerModule(provider as ProviderKind).destinationFaults.sources.includes(edge);
}

/** What each configured provider declares, known without building it. */
export function capabilitiesOf(provider: ServiceConfig['provider']): ProviderCapabilities {
  return providerModule(provider).capabilities;
}
