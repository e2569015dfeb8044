import { createHash } from 'node:crypto';

/**
 * Where a synthesized (environment-agnostic) template is pretended to be deployed: the values
 * CloudFormation's pseudo parameters resolve to, so policies and ARNs can be compared as IAM
 * compares them.
 */
export interface Deployment {
  readonly account: string;
  readonly region: string;
  readonly partition: string;
  readonly stackName: string;
}

/** The deployment the local stack's IAM evaluation and the template tests assume. */
export const DEPLOYED: Deployment = {
  account: '111111111111',
  region: 'eu-west-1',
  partition: 'aws',
  stackName: 'ResetNotifier',
};

/** A CloudFormation template, as far as these helpers read it. */
export interface CfnTemplate {
  readonly Resources: Record<string, CfnResource>;
}

/** One resource of a {@link CfnTemplate}. */
interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

/** What `Ref` and `Fn::GetAtt` of a logical id resolve to. */
export interface References {
  ref(logicalId: string): string | undefined;
  getAtt(logicalId: string, attribute: string): string | undefined;
}

/**
 * Resolves CloudFormation's intrinsics in `value` as a deployment would: pseudo parameters,
 * `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select` and `Fn::Split`. A reference nothing
 * resolves throws (a policy half-resolved would be evaluated wrongly).
 */
export function resolveIntrinsics(
  value: unknown,
  refs: References,
  deployment: Deployment = DEPLOYED,
): unknown {
  const recurse = (v: unknown): unknown => resolveIntrinsics(v, refs, deployment);
  if (Array.isArray(value)) return value.map(recurse);
  if (typeof value !== 'object' || value === null) return value;
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v);
  if (keys.length === 1) {
    const pseudo = pseudoParameters(deployment);
    if (typeof v.Ref === 'string') {
      const resolved = pseudo[v.Ref] ?? refs.ref(v.Ref);
      if (resolved === undefined) throw new Error(`unresolved Ref ${v.Ref}`);
      return resolved;
    }
    if (Array.isArray(v['Fn::GetAtt'])) {
      const [id, attribute] = v['Fn::GetAtt'] as [string, string];
      const resolved = refs.getAtt(String(id), String(attribute));
      if (resolved === undefined) throw new Error(`unresolved GetAtt ${id}.${attribute}`);
      return resolved;
    }
    if (Array.isArray(v['Fn::Join'])) {
      const [separator, parts] = v['Fn::Join'] as [string, unknown];
      return (recurse(parts) as unknown[]).map(String).join(separator);
    }
    if (Array.isArray(v['Fn::Select'])) {
      const [index, list] = v['Fn::Select'] as [unknown, unknown];
      return (recurse(list) as unknown[])[Number(recurse(index))];
    }
    if (Array.isArray(v['Fn::Split'])) {
      const [separator, text] = v['Fn::Split'] as [string, unknown];
      return String(recurse(text)).split(separator);
    }
    if (v['Fn::Sub'] !== undefined) return resolveSub(v['Fn::Sub'], refs, deployment);
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, recurse(x)]));
}

function pseudoParameters(deployment: Deployment): Record<string, string> {
  return {
    'AWS::AccountId': deployment.account,
    'AWS::Region': deployment.region,
    'AWS::Partition': deployment.partition,
    'AWS::StackName': deployment.stackName,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackId': `arn:${deployment.partition}:cloudformation:${deployment.region}:${deployment.account}:stack/${deployment.stackName}/00000000-0000-4000-8000-000000000000`,
  };
}

function resolveSub(sub: unknown, refs: References, deployment: Deployment): string {
  const [text, variables] = Array.isArray(sub)
    ? (sub as [string, Record<string, unknown>])
    : [String(sub), {}];
  const pseudo = pseudoParameters(deployment);
  return text.replace(/\$\{([^}!]+)\}/g, (_match, name: string) => {
    if (Object.hasOwn(variables, name)) return String(resolveIntrinsics(variables[name], refs, deployment));
    const [id, attribute] = name.split('.');
    const resolved =
      attribute === undefined ? (pseudo[name] ?? refs.ref(name)) : refs.getAtt(String(id), attribute);
    if (resolved === undefined) throw new Error(`unresolved Fn::Sub variable ${name}`);
    return resolved;
  });
}

/**
 * What each resource of `template` would be called once deployed in `deployment`: its physical
 * name (the one the template gives it, else a stable one from its logical id) and its ARN and
 * other attributes, shaped as the service shapes them.
 */
export function deployedReferences(template: CfnTemplate, deployment: Deployment = DEPLOYED): References {
  const { account, region, partition } = deployment;
  const arn = (service: string, resource: string, regional = true) =>
    `arn:${partition}:${service}:${regional ? region : ''}:${account}:${resource}`;
  const cache = new Map<string, Record<string, string>>();
  const named = (id: string, property: string): string => {
    const given = template.Resources[id]?.Properties?.[property];
    return given === undefined
      ? `${deployment.stackName}-${id}`
      : String(resolveIntrinsics(given, refs, deployment));
  };
  const attributesOf = (id: string): Record<string, string> | undefined => {
    const resource = template.Resources[id];
    if (resource === undefined) return undefined;
    const hit = cache.get(id);
    if (hit) return hit;
    const attributes = describe(id, resource.Type);
    cache.set(id, attributes);
    return attributes;
  };
  const describe = (id: string, type: string): Record<string, string> => {
    switch (type) {
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable': {
        const name = named(id, 'TableName');
        const tableArn = arn('dynamodb', `table/${name}`);
        return { Ref: name, Arn: tableArn, StreamArn: `${tableArn}/stream/2026-01-01T00:00:00.000` };
      }
      case 'AWS::SQS::Queue': {
        const name = named(id, 'QueueName');
        return {
          Ref: `https://sqs.${region}.amazonaws.com/${account}/${name}`,
          Arn: arn('sqs', name),
          QueueName: name,
          QueueUrl: `https://sqs.${region}.amazonaws.com/${account}/${name}`,
        };
      }
      case 'AWS::KMS::Key': {
        const keyId = stableUuid(id);
        return { Ref: keyId, KeyId: keyId, Arn: arn('kms', `key/${keyId}`) };
      }
      case 'AWS::SNS::Topic': {
        const name = named(id, 'TopicName');
        const topicArn = arn('sns', name);
        return { Ref: topicArn, TopicArn: topicArn, TopicName: name };
      }
      case 'AWS::SecretsManager::Secret': {
        const secretArn = arn('secretsmanager', `secret:${named(id, 'Name')}-AbCdEf`);
        return { Ref: secretArn, Id: secretArn };
      }
      case 'AWS::Logs::LogGroup': {
        const name = named(id, 'LogGroupName');
        return { Ref: name, Arn: `${arn('logs', `log-group:${name}`)}:*` };
      }
      case 'AWS::IAM::Role': {
        const name = named(id, 'RoleName');
        return {
          Ref: name,
          RoleId: `AROA${stableUuid(id).replace(/-/g, '').slice(0, 17).toUpperCase()}`,
          Arn: arn('iam', `role/${name}`, false),
        };
      }
      case 'AWS::Lambda::Function': {
        const name = named(id, 'FunctionName');
        return { Ref: name, Arn: arn('lambda', `function:${name}`) };
      }
      case 'AWS::SMSVOICE::ConfigurationSet': {
        const name = named(id, 'ConfigurationSetName');
        return { Ref: name, Arn: arn('sms-voice', `configuration-set/${name}`) };
      }
      case 'AWS::ApiGatewayV2::Api': {
        const apiId = stableUuid(id).replace(/-/g, '').slice(0, 10);
        return {
          Ref: apiId,
          ApiId: apiId,
          ApiEndpoint: `https://${apiId}.execute-api.${region}.amazonaws.com`,
        };
      }
      default:
        return {
          Ref: `${deployment.stackName}-${id}`,
          Arn: arn(type.split('::')[1]?.toLowerCase() ?? 'unknown', id),
        };
    }
  };
  const refs: References = {
    ref: (id) => attributesOf(id)?.Ref,
    getAtt: (id, attribute) => attributesOf(id)?.[attribute],
  };
  return refs;
}

/** A UUID-shaped id derived from `seed` (KMS key ids), the same on every run. */
function stableUuid(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
