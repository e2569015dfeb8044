import { SETTINGS } from '../../shared/settings.js';
import {
  evaluateRequest,
  type IamDecision,
  type IamRequest,
  type TemplatePolicies,
  templatePolicies,
} from './policies.js';
import type { LocalFunction, LocalTemplate } from './template.js';

/** A call IAM refused, as the enforcer records it (no request payload: it may hold personal data). */
export interface IamDenial {
  readonly fn: LocalFunction;
  readonly action: string;
  readonly resource: string;
  /** The message AWS gives with the error (principal, action, resource, why). */
  readonly message: string;
}

/** Evaluates the local runtime's AWS calls against the template's IAM. */
export interface IamEnforcer {
  readonly policies: TemplatePolicies;
  /** The IAM requests one SDK operation makes (`service` as in an IAM action: `dynamodb`, `sqs`, ...). */
  requestsOf(service: string, operation: string, input: Readonly<Record<string, unknown>>): IamRequest[];
  /** Evaluates `requests` by `fn`; the first denied one, recorded, or undefined when all are allowed. */
  check(fn: LocalFunction, requests: readonly IamRequest[]): IamDenial | undefined;
  /** The deployed ARN of the key the cipher stands for (`KMS_KEY_ID` of the template). */
  readonly fieldKeyArn: string;
  /** Every denial so far, oldest first. */
  denials(): readonly IamDenial[];
}

/**
 * The settings that name a resource: the local stack's value of each is the local stand-in for
 * the template's (`TABLE_NAME` locally -> the deployed table name, ...).
 */
const RESOURCE_SETTINGS = [
  SETTINGS.tableName,
  SETTINGS.dispatchQueueUrl,
  SETTINGS.reconcileQueueUrl,
  SETTINGS.reconcilePollQueueUrl,
  SETTINGS.snsDeliveryLogGroups,
  SETTINGS.eumOriginationIdentity,
  SETTINGS.eumConfigurationSet,
  SETTINGS.eumProtectConfigurationId,
  SETTINGS.eumEventsTopicArn,
  SETTINGS.kmsKey,
].map((setting) => setting.env);

/**
 * An enforcer for `local`'s template, with `localEnv` the local stack's environment (the
 * resource names it uses instead of the template's).
 */
export function createIamEnforcer(
  local: LocalTemplate,
  localEnv: Readonly<Record<string, string>>,
  onDenial: (denial: IamDenial) => void = () => undefined,
): IamEnforcer {
  const policies = templatePolicies(local);
  const { account, region, partition } = policies.deployment;
  const deployedEnv: Record<string, string> = Object.assign({}, ...Object.values(policies.environments));
  const deployedName = new Map<string, string>();
  for (const name of RESOURCE_SETTINGS) {
    const localValue = localEnv[name];
    const deployed = deployedEnv[name];
    if (!localValue || deployed === undefined) continue;
    const locals = localValue.split(',');
    const deployeds = deployed.split(',');
    locals.forEach((value, i) => {
      const counterpart = deployeds[i];
      if (counterpart !== undefined) deployedName.set(value.trim(), counterpart.trim());
    });
  }
  // Unmapped local names stay as they are: no grant names them, so IAM denies, as it would in AWS.
  const deployedOf = (value: string) => deployedName.get(value) ?? value;
  const arn = (service: string, resource: string) =>
    `arn:${partition}:${service}:${region}:${account}:${resource}`;
  const tableArn = (name: unknown) => arn('dynamodb', `table/${deployedOf(String(name))}`);
  const queueArn = (url: unknown) => arn('sqs', deployedOf(String(url)).split('/').pop() ?? '');
  const logGroupArn = (nameOrArn: unknown) => {
    const value = deployedOf(String(nameOrArn));
    return value.startsWith('arn:') ? value.replace(/:\*$/, '') : arn('logs', `log-group:${value}`);
  };
  const smsVoiceArn = (type: string, nameOrArn: unknown) => {
    const value = deployedOf(String(nameOrArn));
    return value.startsWith('arn:') ? value : arn('sms-voice', `${type}/${value}`);
  };
  const fieldKeyArn = deployedEnv[SETTINGS.kmsKey.env] ?? arn('kms', 'key/unknown');

  const requestsOf: IamEnforcer['requestsOf'] = (service, operation, input) => {
    const action = (name: string) => `${service}:${name}`;
    switch (service) {
      case 'dynamodb':
        return dynamodbRequests(operation, input, tableArn);
      case 'sqs': {
        // The batch operations are authorized as their single-message action (no `*Batch` action exists).
        const single = operation.replace(/Batch$/, '');
        const resource =
          input.QueueUrl !== undefined
            ? queueArn(input.QueueUrl)
            : input.QueueName !== undefined
              ? arn('sqs', String(input.QueueName))
              : '*';
        return [{ action: action(single), resource }];
      }
      case 'sns': {
        // Publishing to a phone number has no resource ARN: IAM evaluates it on "*".
        const target = input.TopicArn ?? input.TargetArn;
        return [
          { action: action(operation), resource: target === undefined ? '*' : deployedOf(String(target)) },
        ];
      }
      case 'logs': {
        const group = input.logGroupIdentifier ?? input.logGroupName;
        return [{ action: action(operation), resource: group === undefined ? '*' : logGroupArn(group) }];
      }
      case 'sms-voice': {
        const resources = [
          input.OriginationIdentity === undefined
            ? undefined
            : smsVoiceArn('pool', input.OriginationIdentity),
          input.ConfigurationSetName === undefined
            ? undefined
            : smsVoiceArn('configuration-set', input.ConfigurationSetName),
          input.ProtectConfigurationId === undefined
            ? undefined
            : smsVoiceArn('protect-configuration', input.ProtectConfigurationId),
          input.MessageId === undefined ? undefined : arn('sms-voice', `message/${String(input.MessageId)}`),
        ].filter((r): r is string => r !== undefined);
        return (resources.length === 0 ? ['*'] : resources).map((resource) => ({
          action: action(operation),
          resource,
        }));
      }
      default:
        // A call this model does not know is evaluated on "*": only a grant on every resource allows it.
        return [{ action: action(operation), resource: '*' }];
    }
  };

  const decisions = new Map<string, IamDecision>();
  const denials: IamDenial[] = [];
  const check: IamEnforcer['check'] = (fn, requests) => {
    for (const request of requests) {
      const key = JSON.stringify([fn, request.action, request.resource, request.context ?? {}]);
      let decision = decisions.get(key);
      if (decision === undefined) {
        decision = evaluateRequest(policies, fn, request);
        decisions.set(key, decision);
      }
      if (decision.allowed) continue;
      const principal = policies.roles[fn]?.principal ?? fn;
      const why =
        decision.reason === 'ExplicitlyDenied'
          ? 'with an explicit deny in a policy'
          : `because no identity-based policy allows the ${request.action} action`;
      const denial = {
        fn,
        action: request.action,
        resource: request.resource,
        message: `User: ${principal} is not authorized to perform: ${request.action} on resource: ${request.resource} ${why}`,
      };
      denials.push(denial);
      onDenial(denial);
      return denial;
    }
    return undefined;
  };

  return { policies, requestsOf, check, fieldKeyArn, denials: () => [...denials] };
}

/** DynamoDB: one request per table (and index) an operation touches, with the action IAM checks. */
function dynamodbRequests(
  operation: string,
  input: Readonly<Record<string, unknown>>,
  tableArn: (name: unknown) => string,
): IamRequest[] {
  const action = (name: string) => `dynamodb:${name}`;
  const items = (list: unknown) =>
    Array.isArray(list) ? (list as Array<Record<string, { TableName?: unknown }>>) : [];
  // Transactions are authorized item by item, as the single-item action of each (AWS: no Transact* action exists).
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const kinds: Record<string, string> = {
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      ConditionCheck: 'ConditionCheckItem',
      Get: 'GetItem',
    };
    return items(input.TransactItems).flatMap((item) =>
      Object.entries(item).flatMap(([kind, body]) =>
        kinds[kind] === undefined
          ? []
          : [{ action: action(kinds[kind]), resource: tableArn(body.TableName) }],
      ),
    );
  }
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    return Object.keys((input.RequestItems as Record<string, unknown> | undefined) ?? {}).map((table) => ({
      action: action(operation),
      resource: tableArn(table),
    }));
  }
  if (input.TableName === undefined) return [{ action: action(operation), resource: '*' }];
  const table = tableArn(input.TableName);
  const resource = input.IndexName === undefined ? table : `${table}/index/${String(input.IndexName)}`;
  return [{ action: action(operation), resource }];
}
