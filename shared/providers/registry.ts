/**
 * Every provider the service can run with, by `PROVIDER` value: one line per provider folder
 * (`./<kind>/module.ts`). The deploy side has its own list, `./infra-registry.ts`, so that the
 * Lambda bundles never import aws-cdk-lib; its type requires a line for every kind listed here.
 */
import type { ServiceConfig } from '../config.js';
import type { DestinationFaults } from '../domain/zero-sms.js';
import { eumModule } from './eum/module.js';
import type { ProviderModule } from './module.js';
import { simulatorModule } from './simulator/module.js';
import { snsModule } from './sns/module.js';
import { twilioModule } from './twilio/module.js';

/** A provider's kind: `PROVIDER`'s value. */
export type ProviderKind = ServiceConfig['provider'];

export const PROVIDER_MODULES: { readonly [K in ProviderKind]: ProviderModule<K> } = {
  sns: snsModule,
  eum: eumModule,
  twilio: twilioModule,
  simulator: simulatorModule,
};

/** Every provider's destination faults (a detail names its source, so all of them apply at once). */
export const DESTINATION_FAULTS: readonly DestinationFaults[] = Object.values(PROVIDER_MODULES).map(
  (module) => module.destinationFaults,
);

/** The module of a configured provider. */
export function providerModule(kind: ProviderKind): ProviderModule {
  return PROVIDER_MODULES[kind];
}
