/**
 * Every provider's deploy side, by kind: one line per provider folder (`./<kind>/infra.ts`).
 * Imported only by `infra/` (aws-cdk-lib); the runtime list is `./registry.ts`, and this one's
 * type requires a line for each of its kinds.
 */
import { type EumProviderSettings, eumInfra } from './eum/infra.js';
import type { ProviderInfra } from './infra.js';
import type { ProviderKind } from './registry.js';
import { type SimulatorProviderSettings, simulatorInfra } from './simulator/infra.js';
import { type SnsProviderSettings, snsInfra } from './sns/infra.js';
import { type TwilioProviderSettings, twilioInfra } from './twilio/infra.js';

export const PROVIDER_INFRA = {
  sns: snsInfra,
  eum: eumInfra,
  twilio: twilioInfra,
  simulator: simulatorInfra,
} as const satisfies { readonly [K in ProviderKind]: ProviderInfra<{ readonly kind: K }> };

/** The provider props of `ResetNotifierProps` (`provider`): one of the registered kinds' settings. */
export type ProviderSettings = {
  [K in keyof typeof PROVIDER_INFRA]: (typeof PROVIDER_INFRA)[K] extends ProviderInfra<infer S> ? S : never;
}[keyof typeof PROVIDER_INFRA];

export type { EumProviderSettings, SimulatorProviderSettings, SnsProviderSettings, TwilioProviderSettings };

/** The deploy side of the configured provider (one lookup; nothing branches on the kind). */
export function providerInfra<S extends ProviderSettings>(provider: S): ProviderInfra<S> {
  return PROVIDER_INFRA[provider.kind] as unknown as ProviderInfra<S>;
}

/** The kinds, for messages (`sns, eum, twilio or simulator`). */
export function providerKindList(): string {
  const kinds = Object.keys(PROVIDER_INFRA);
  return `${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}`;
}
