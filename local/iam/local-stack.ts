import type { ServiceConfig } from '../../shared/config.js';
import { settingsEnv } from '../../shared/settings.js';
import { createIamEnforcer, type IamDenial, type IamEnforcer } from './enforcer.js';
import { installSdkEnforcement } from './sdk.js';
import { type LocalTemplate, localTemplate, type TemplateProvider } from './template.js';

/** How the local stack evaluates IAM (`LocalStackOptions.iam`). */
export interface LocalIamOptions {
  /** Evaluate every AWS call against the template's IAM. @default the `LOCAL_IAM` setting (on) */
  readonly enforce?: boolean;
  /** Changes the synthesized template before it is used (tests: a grant removed, a condition tightened). */
  readonly template?: (template: LocalTemplate) => LocalTemplate;
}

/**
 * The enforcer of a local stack configured by `config`: the template synthesized for its
 * provider, its resource names paired with the local ones, and the SDK clients hooked.
 */
export async function localIamEnforcer(
  config: ServiceConfig,
  options: LocalIamOptions,
  onDenial: (denial: IamDenial) => void,
): Promise<IamEnforcer> {
  const synthesized = await localTemplate(config.provider as TemplateProvider);
  const template = options.template ? options.template(structuredClone(synthesized)) : synthesized;
  installSdkEnforcement();
  return createIamEnforcer(
    template,
    settingsEnv({
      tableName: config.tableName,
      dispatchQueueUrl: config.dispatchQueueUrl,
      reconcileQueueUrl: config.reconcileQueueUrl,
      reconcilePollQueueUrl: config.reconcilePollQueueUrl,
      snsDeliveryLogGroups: config.snsDeliveryLogGroups.length > 0 ? config.snsDeliveryLogGroups : undefined,
      eumOriginationIdentity: config.eumOriginationIdentity,
      eumConfigurationSet: config.eumConfigurationSet,
      eumProtectConfigurationId: config.eumProtectConfigurationId,
      eumEventsTopicArn: config.eumEventsTopicArn,
    }),
    onDenial,
  );
}
