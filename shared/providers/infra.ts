/**
 * The one shape of a provider's deploy side: `shared/providers/<kind>/infra.ts` exports one
 * {@link ProviderInfra} and `./infra-registry.ts` lists it. The stack's constructs ask it for
 * what the provider needs (environment, grants, resources) and never branch on the kind, like a
 * CDK event source's `bind`. These files use aws-cdk-lib: only `infra/` imports them, never a
 * Lambda entry (biome.json keeps the rest of `shared/` from importing them).
 */
import type { Stack } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { CfnConfigurationSet } from 'aws-cdk-lib/aws-smsvoice';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { KeptReceipts } from '../../infra/constructs/kept-receipts.js';
import type { Pipeline } from '../../infra/constructs/pipeline.js';
import type { ServiceFunction } from '../../infra/constructs/service-function.js';
import type { Storage } from '../../infra/constructs/storage.js';
import type { FUNCTION_ENTRIES, ResolvedSettings } from '../../infra/settings.js';
import type { CONTEXT_KEYS } from '../../infra/stack.js';
import type { ContextValue } from '../settings.js';

/** Reads the CDK context keys of `infra/stack.ts`'s `CONTEXT_KEYS` (unset and blank: undefined). */
export interface ContextReader {
  readonly stack: Stack;
  get(key: keyof typeof CONTEXT_KEYS): string | undefined;
  /** The value, or an error naming the key (`... is required for this provider`). */
  required(key: keyof typeof CONTEXT_KEYS): string;
  /** The full context key, for messages. */
  name(key: keyof typeof CONTEXT_KEYS): string;
  /** The value as its setting's codec parses it (a number, a list, `on`/`off`); unset: undefined. */
  value<K extends keyof typeof CONTEXT_KEYS>(key: K): ContextValue<K> | undefined;
}

/** Checks a setting that names a resource outside the stack (form only; see `infra/external-resources.ts`). */
export type ExternalCheck = (
  setting: string,
  value: string | undefined,
  ok: (value: string) => boolean,
  shape: string,
) => void;

/** What a provider's resources may use from the rest of the stack. */
export interface ProviderResourcesContext {
  readonly settings: ResolvedSettings;
  readonly storage: Storage;
  readonly pipeline: Pipeline;
  /** The absolute path of one of the entry files (`FUNCTION_ENTRIES`). */
  entry(name: keyof typeof FUNCTION_ENTRIES): string;
}

/** The resources a provider adds to the stack (all optional: SNS log groups, the EUM events path). */
export interface ProviderResources {
  readonly eventsTopic?: sns.Topic;
  readonly configurationSet?: CfnConfigurationSet;
  readonly receipts?: ServiceFunction;
  /** Where the receipts function's failed events are kept without numbers, and its keeper. */
  readonly keptReceipts?: KeptReceipts;
  readonly deliveryLogGroups?: readonly LogGroup[];
  readonly deliveryStatusRole?: iam.Role;
}

/** One provider, as the stack sees it. `S` is its props type (`provider` of `ResetNotifierProps`). */
export interface ProviderInfra<S extends { readonly kind: string }> {
  readonly kind: S['kind'];
  /** Account-wide lookups per second the provider allows; the stack splits them over the reconcile workers. */
  readonly lookupsPerSecond: number;
  /** cdk-nag's reason when sending can only be granted on "*" (the sender's wildcard finding). */
  readonly wildcardSendReason?: string;
  /** The provider posts Twilio-style status callbacks: the API gets the public receipts route. */
  readonly statusCallbacks: boolean;
  /** An alarm on the provider's own spend metric, when it has one. */
  readonly spendAlarm?: {
    readonly namespace: string;
    readonly metricName: string;
    description(thresholdUsd: number): string;
  };
  /** Its props from CDK context (`cdk deploy -c reset-notifier:provider=<kind> ...`). */
  fromContext(context: ContextReader): S;
  /**
   * Its props with the physical names it leaves to the stack named after the stack, so two stacks
   * in one account and region never ask for the same name; absent: nothing to name.
   */
  namedAfterStack?(provider: S, stackName: string): S;
  /** Rejects props that cannot work, naming the prop (synthesis fails). */
  validate(provider: S, fail: (message: string) => never): void;
  /** Checks the form of props that name resources outside the stack. */
  checkExternal?(provider: S, check: ExternalCheck): void;
  /** The function environment it adds (the variables of its settings). */
  environment(scope: Construct, provider: S): Record<string, string>;
  /** What the sender needs to send. */
  grantSend(scope: Construct, sender: ServiceFunction, provider: S): void;
  /** What the reconciler and its workers need to look messages up (never to send). */
  grantLookup(scope: Construct, fn: ServiceFunction, provider: S): void;
  /** What the API function needs to forward confirmations to the provider's feedback API. */
  grantFeedback(scope: Construct, api: ServiceFunction, provider: S): void;
  /** What the status-callback receipts function needs (with {@link statusCallbacks}). */
  grantReceipts(scope: Construct, receipts: ServiceFunction, provider: S): void;
  /** Resources of its own, created under `scope` (the stack's `AwsSms` construct). */
  resources(scope: Construct, provider: S, context: ProviderResourcesContext): ProviderResources;
}

/** A grant a provider does not need. */
export const NO_GRANT = (): void => undefined;
/** No resources of its own. */
export const NO_RESOURCES = (): ProviderResources => ({});
