import { runUnsafeSimulation } from '@cloud-copilot/iam-simulate';
import {
  type CfnTemplate,
  DEPLOYED,
  type Deployment,
  deployedReferences,
  type References,
  resolveIntrinsics,
} from './resolve.js';
import type { LocalFunction, LocalTemplate } from './template.js';

/** One AWS request as IAM sees it: who, what, on which resource, with which condition keys. */
export interface IamRequest {
  /** The IAM action, e.g. `dynamodb:GetItem`. */
  readonly action: string;
  /** The resource ARN, or `*` for actions without one (`sns:Publish` to a phone number). */
  readonly resource: string;
  /** Condition keys the request carries beyond the principal's and `aws:SecureTransport`. */
  readonly context?: Readonly<Record<string, string | string[]>>;
}

/** The outcome of one evaluation. */
export interface IamDecision {
  readonly allowed: boolean;
  /** `explicitly denied` / `implicitly denied` / `allowed`, and which policy type decided. */
  readonly reason: string;
}

type PolicyDocument = { Statement: unknown[]; Version?: string };

/** The policies of one deployed template, resolved as they would be in {@link DEPLOYED}. */
export interface TemplatePolicies {
  readonly deployment: Deployment;
  readonly refs: References;
  /** Per local function: its role's ARN, the session principal, and its identity policies. */
  readonly roles: Partial<
    Record<
      LocalFunction,
      { roleArn: string; principal: string; policies: Array<{ name: string; policy: PolicyDocument }> }
    >
  >;
  /** Resource policies (key, queue, topic and secret policies) by the ARN of their resource. */
  readonly resourcePolicies: ReadonlyMap<string, PolicyDocument>;
  /** Each function's environment, resolved (`TABLE_NAME` -> the table's deployed name, ...). */
  readonly environments: Partial<Record<LocalFunction, Record<string, string>>>;
}

const idOf = (value: unknown): string | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
  if (typeof v.Ref === 'string') return v.Ref;
  if (Array.isArray(v['Fn::GetAtt'])) return String(v['Fn::GetAtt'][0]);
  return undefined;
};

/** Reads the roles, resource policies and environments of `local` (policies with intrinsics resolved). */
export function templatePolicies(local: LocalTemplate, deployment: Deployment = DEPLOYED): TemplatePolicies {
  const { template } = local;
  const refs = deployedReferences(template, deployment);
  const resolve = (value: unknown) => resolveIntrinsics(value, refs, deployment);
  const resources = Object.entries(template.Resources);
  const roles: TemplatePolicies['roles'] = {};
  const environments: TemplatePolicies['environments'] = {};
  for (const [name, logicalId] of Object.entries(local.functions) as Array<[LocalFunction, string]>) {
    const fn = template.Resources[logicalId];
    const roleId = idOf(fn?.Properties?.Role);
    if (fn === undefined || roleId === undefined)
      throw new Error(`function ${name} (${logicalId}) has no role in the template`);
    const role = template.Resources[roleId];
    const attached = (policy: { Roles?: unknown[] } | undefined) =>
      (policy?.Roles ?? []).some((r) => idOf(r) === roleId);
    const policies = [
      ...(
        (role?.Properties?.Policies as Array<{ PolicyName: string; PolicyDocument: unknown }> | undefined) ??
        []
      ).map((p) => ({ name: p.PolicyName, policy: resolve(p.PolicyDocument) as PolicyDocument })),
      ...resources
        .filter(
          ([, r]) =>
            (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy') &&
            attached(r.Properties as { Roles?: unknown[] }),
        )
        .map(([id, r]) => ({ name: id, policy: resolve(r.Properties?.PolicyDocument) as PolicyDocument })),
    ];
    if ((role?.Properties?.ManagedPolicyArns as unknown[] | undefined)?.length) {
      // AWS managed policies are not in the template: evaluating without them would deny what AWS allows.
      throw new Error(`function ${name}: managed policies on its role cannot be evaluated locally`);
    }
    const roleArn = String(refs.getAtt(roleId, 'Arn'));
    const roleName = String(refs.ref(roleId));
    const functionName = String(refs.ref(logicalId));
    roles[name] = {
      roleArn,
      principal: `arn:${deployment.partition}:sts::${deployment.account}:assumed-role/${roleName}/${functionName}`,
      policies,
    };
    const variables =
      (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    // Only the variables that name resources are read; one this model cannot resolve is left out.
    environments[name] = Object.fromEntries(
      Object.entries(variables).flatMap(([k, v]) => {
        try {
          return [[k, String(resolve(v))]];
        } catch {
          return [];
        }
      }),
    );
  }
  return {
    deployment,
    refs,
    roles,
    environments,
    resourcePolicies: resourcePoliciesOf(template, refs, resolve),
  };
}

function resourcePoliciesOf(
  template: CfnTemplate,
  refs: References,
  resolve: (value: unknown) => unknown,
): Map<string, PolicyDocument> {
  const byArn = new Map<string, PolicyDocument>();
  const add = (arn: string | undefined, policy: unknown) => {
    if (arn === undefined || policy === undefined) return;
    const document = resolve(policy) as PolicyDocument;
    const existing = byArn.get(arn);
    // Several policies on one resource act as one document (CloudFormation keeps only one in AWS).
    byArn.set(
      arn,
      existing ? { ...existing, Statement: [...existing.Statement, ...document.Statement] } : document,
    );
  };
  for (const [id, resource] of Object.entries(template.Resources)) {
    const p = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::KMS::Key':
        add(refs.getAtt(id, 'Arn'), p.KeyPolicy);
        break;
      case 'AWS::SQS::QueuePolicy':
        for (const queue of (p.Queues as unknown[]) ?? []) {
          const queueId = idOf(queue);
          if (queueId) add(refs.getAtt(queueId, 'Arn'), p.PolicyDocument);
        }
        break;
      case 'AWS::SNS::TopicPolicy':
        for (const topic of (p.Topics as unknown[]) ?? []) {
          const topicId = idOf(topic);
          if (topicId) add(refs.ref(topicId), p.PolicyDocument);
        }
        break;
      case 'AWS::SecretsManager::ResourcePolicy': {
        const secretId = idOf(p.SecretId);
        if (secretId) add(refs.ref(secretId), p.ResourcePolicy);
        break;
      }
      default:
        break;
    }
  }
  return byArn;
}

/**
 * Evaluates `request` by `fn` the way IAM does for a principal and a resource of one account:
 * the role's identity policies and the resource's policy, if the template holds one (a KMS key
 * policy must allow, directly or through the account root). Uses @cloud-copilot/iam-simulate's
 * engine. Its validating entry (`runSimulation`) drops `kms:EncryptionContext:<key>` as
 * inapplicable (0.1.173 matches variable keys only in their `prefix/` form), so the request is
 * built here with exactly the keys the call carries and evaluated without that filter.
 */
export function evaluateRequest(
  policies: TemplatePolicies,
  fn: LocalFunction,
  request: IamRequest,
): IamDecision {
  const role = policies.roles[fn];
  if (role === undefined) return { allowed: false, reason: `no function ${fn} in the template` };
  const { account } = policies.deployment;
  const resourcePolicy = policies.resourcePolicies.get(request.resource);
  const result = runUnsafeSimulation(
    {
      request: {
        principal: role.principal,
        action: request.action,
        resource: { resource: request.resource, accountId: account },
        contextVariables: {
          'aws:SecureTransport': 'true',
          'aws:PrincipalArn': role.roleArn,
          'aws:PrincipalAccount': account,
          'aws:RequestedRegion': policies.deployment.region,
          ...request.context,
        },
      },
      identityPolicies: role.policies,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      // In the validated-policy wrapper iam-policy's `loadPolicy` accepts, so the policy carries
      // a name: the engine's analysis reads one (a bare document crashes it in 0.1.173).
      ...(resourcePolicy === undefined
        ? {}
        : {
            resourcePolicy: {
              __validated: true,
              policyDocument: resourcePolicy,
              metadata: { name: `resource policy of ${request.resource}` },
              errors: [],
            },
          }),
    },
    {},
  );
  return { allowed: result === 'Allowed', reason: result };
}
