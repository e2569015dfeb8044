import { join } from 'node:path';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { CfnConfigurationSet } from 'aws-cdk-lib/aws-smsvoice';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { ProviderResources } from '../../shared/providers/infra.js';
import { providerInfra } from '../../shared/providers/infra-registry.js';
import { FUNCTION_ENTRIES, type ResolvedSettings } from '../settings.js';
import type { KeptReceipts } from './kept-receipts.js';
import type { Pipeline } from './pipeline.js';
import type { ServiceFunction } from './service-function.js';
import type { Storage } from './storage.js';

/** Props of {@link AwsSmsResources}. */
export interface AwsSmsResourcesProps {
  readonly settings: ResolvedSettings;
  readonly storage: Storage;
  readonly pipeline: Pipeline;
}

/**
 * Every listed provider's own resources, from its deploy side (`resources` of
 * `shared/providers/<kind>/infra.ts`), all under this construct (their logical ids keep its path,
 * and do not depend on which other providers are listed or in what order):
 *
 * - `eum`: a configuration set with one event destination (an SNS topic with its own KMS key) and
 *   the receipts function subscribed to it, and its kept receipts (a queue of copies without
 *   numbers, and the keeper: the function's on-failure destination and its subscription's DLQ consumer);
 * - `sns`: the SMS delivery-status log groups SNS writes, with a retention and a KMS key, and the
 *   role SNS writes them with (see docs/providers/aws.md);
 * - `twilio`, `simulator`: none (their receipts route is part of the API).
 *
 * Each resource slot is filled by at most one provider: two that fill the same one fail synthesis.
 */
export class AwsSmsResources extends Construct {
  readonly eventsTopic?: sns.Topic;
  readonly configurationSet?: CfnConfigurationSet;
  readonly receipts?: ServiceFunction;
  /** `eum`: the kept-receipts queue and its keeper (the receipts function's on-failure destination). */
  readonly keptReceipts?: KeptReceipts;
  readonly deliveryLogGroups: readonly LogGroup[] = [];
  readonly deliveryStatusRole?: iam.Role;

  constructor(scope: Construct, id: string, props: AwsSmsResourcesProps) {
    super(scope, id);
    const { settings, storage, pipeline } = props;
    const filled = new Map<keyof ProviderResources, string>();
    const merged: { -readonly [K in keyof ProviderResources]?: ProviderResources[K] } = {};
    for (const provider of settings.providers) {
      const built = providerInfra(provider).resources(this, provider, {
        settings,
        storage,
        pipeline,
        entry: (name) => join(settings.code.entryDirectory, FUNCTION_ENTRIES[name]),
      });
      for (const slot of Object.keys(built) as (keyof ProviderResources)[]) {
        if (built[slot] === undefined) continue;
        const before = filled.get(slot);
        if (before !== undefined) {
          throw new Error(`ResetNotifier: providers ${before} and ${provider.kind} both add ${slot}`);
        }
        filled.set(slot, provider.kind);
        Object.assign(merged, { [slot]: built[slot] });
      }
    }
    const built: ProviderResources = merged;
    if (built.eventsTopic !== undefined) this.eventsTopic = built.eventsTopic;
    if (built.configurationSet !== undefined) this.configurationSet = built.configurationSet;
    if (built.receipts !== undefined) this.receipts = built.receipts;
    if (built.keptReceipts !== undefined) this.keptReceipts = built.keptReceipts;
    if (built.deliveryLogGroups !== undefined) this.deliveryLogGroups = built.deliveryLogGroups;
    if (built.deliveryStatusRole !== undefined) this.deliveryStatusRole = built.deliveryStatusRole;
  }
}
