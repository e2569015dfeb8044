import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { type FunctionCodeSettings, PACKAGE_ROOT, type ResetNotifierProps } from '../../infra/settings.js';
import { CONTEXT_KEYS, ResetNotifierStack } from '../../infra/stack.js';
import { DEPLOYED, resolveIntrinsics as resolveTemplateIntrinsics } from '../../local/iam/resolve.js';

/** Synthesis loads much of aws-cdk-lib the first time: hooks that synthesize get this long. */
export const SYNTH_TIMEOUT_MS = 60_000;

/** The context of cdk.json (the recommended feature flags), so tests synthesize like `cdk synth`. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(resolve(PACKAGE_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

/**
 * A throw-away package with stub handlers: template tests must not depend on the real handlers
 * (another team's code) and skip bundling anyway; NodejsFunction only checks that the entry files
 * exist under the project root, next to a lock file.
 */
export function stubCode(): Required<FunctionCodeSettings> {
  const projectRoot = mkdtempSync(join(tmpdir(), 'reset-notifier-stubs-'));
  const entryDirectory = join(projectRoot, 'functions');
  mkdirSync(entryDirectory);
  for (const name of [
    'api',
    'forwarder',
    'sender',
    'reconciler',
    'reconcile-worker',
    'eum-receipts',
    'receipts',
  ]) {
    writeFileSync(join(entryDirectory, `${name}.ts`), 'export const handler = async () => undefined;\n');
  }
  const depsLockFilePath = join(projectRoot, 'package-lock.json');
  writeFileSync(depsLockFilePath, '{}\n');
  return { entryDirectory, projectRoot, depsLockFilePath };
}

/**
 * Example allow-lists for test stacks: a deployment must name its reset-URL hosts and destination
 * countries (synth fails otherwise, docs/deploy.md#required-context), so every synthesized test names these.
 */
export const EXAMPLE_ALLOW_LISTS = {
  resetUrlHosts: ['id.example.com'],
  allowedDestinationCountries: ['US'],
} as const;

/** {@link EXAMPLE_ALLOW_LISTS} as the CDK context `cdk deploy -c ...` passes, for tests of the deployable app. */
export const EXAMPLE_ALLOW_LIST_CONTEXT = {
  [CONTEXT_KEYS.resetUrlHosts]: EXAMPLE_ALLOW_LISTS.resetUrlHosts.join(','),
  [CONTEXT_KEYS.allowedDestinationCountries]: EXAMPLE_ALLOW_LISTS.allowedDestinationCountries.join(','),
};

/**
 * An App with cdk.json's context; bundling skipped unless asked for. CDK's built-in CloudFormation
 * validation (what `cdk synth` runs) is on only when asked for: the cdk-nag test keeps it, template
 * tests save its cost.
 */
export function testApp(
  options: { bundle?: boolean; validation?: boolean; context?: Record<string, unknown> } = {},
): App {
  return new App({
    builtinCloudFormationValidation: options.validation === true,
    context: {
      ...cdkJsonContext(),
      ...(options.bundle === true ? {} : { 'aws:cdk:bundling-stacks': [] }),
      ...options.context,
    },
  });
}

/**
 * Synthesizes the stack (no bundling, no cdk-nag) with stub handlers and returns its template.
 * `notifier` may be a function of the stack, to import resources (secrets, topics) into it.
 */
export function synthTemplate(notifier: ResetNotifierProps | ((stack: Stack) => ResetNotifierProps) = {}): {
  template: Template;
  stack: ResetNotifierStack;
} {
  const app = testApp();
  const code = stubCode();
  const stack = new ResetNotifierStack(app, 'TestStack', {
    notifier: (scope) => {
      const props = typeof notifier === 'function' ? notifier(scope) : notifier;
      return {
        ...props,
        abuseLimits: { ...EXAMPLE_ALLOW_LISTS, ...props.abuseLimits },
        code: { ...code, ...props.code },
      };
    },
  });
  return { template: Template.fromStack(stack), stack };
}

type Resources = Record<
  string,
  { Type: string; Properties?: Record<string, unknown>; [key: string]: unknown }
>;

/** The one resource of `type` whose properties match; fails when there is not exactly one. */
export function onlyResource(
  template: Template,
  type: string,
  properties: Record<string, unknown> = {},
): { logicalId: string; properties: Record<string, unknown>; resource: Resources[string] } {
  const found = template.findResources(type, { Properties: Match.objectLike(properties) }) as Resources;
  const entries = Object.entries(found);
  if (entries.length !== 1) {
    throw new Error(
      `expected exactly one ${type} matching ${JSON.stringify(properties)}, found ${entries.length}`,
    );
  }
  const [logicalId, resource] = entries[0] as [string, Resources[string]];
  return { logicalId, properties: resource.Properties ?? {}, resource };
}

/** The Lambda function whose description contains `text` (descriptions name the function's job). */
export function functionByDescription(template: Template, text: string) {
  return onlyResource(template, 'AWS::Lambda::Function', {
    Description: Match.stringLikeRegexp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
  });
}

/** A policy statement as CloudFormation renders it. */
export interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: Record<string, Record<string, string>>;
}

/** Every statement of every IAM policy attached to the role of the function. */
export function statementsOfFunction(template: Template, functionLogicalId: string): Statement[] {
  const fn = template.toJSON().Resources[functionLogicalId] as {
    Properties: { Role: { 'Fn::GetAtt': [string, string] } };
  };
  const roleId = fn.Properties.Role['Fn::GetAtt'][0];
  const policies = template.findResources('AWS::IAM::Policy', {
    Properties: { Roles: Match.arrayWith([{ Ref: roleId }]) },
  }) as Resources;
  return Object.values(policies).flatMap(
    (p) => (p.Properties as { PolicyDocument: { Statement: Statement[] } }).PolicyDocument.Statement,
  );
}

/** `Action` as a list. */
export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** Every action a function's role may perform. */
export function allActions(statements: readonly Statement[]): string[] {
  return [...new Set(statements.flatMap(actionsOf))].sort();
}

/** The logical id referenced by `{Ref}` or `{Fn::GetAtt}`, if `value` is one. */
export function referencedId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
  if (typeof v.Ref === 'string') return v.Ref;
  if (Array.isArray(v['Fn::GetAtt']) && typeof v['Fn::GetAtt'][0] === 'string') return v['Fn::GetAtt'][0];
  return undefined;
}

/** What the simulated deployment resolves CloudFormation's pseudo parameters to (the local stack's IAM model too). */
export { DEPLOYED };

/**
 * A policy document with CloudFormation's intrinsics resolved as a deployment in {@link DEPLOYED}
 * would resolve them (`local/iam/resolve.ts`: pseudo parameters, `Fn::Join`, `Fn::Sub`, ...), a
 * `Ref` / `Fn::GetAtt` of a resource to the ARN `arns` names for it.
 */
export function resolveIntrinsics(value: unknown, arns: Readonly<Record<string, string>>): unknown {
  return resolveTemplateIntrinsics(value, { ref: (id) => arns[id], getAtt: (id) => arns[id] });
}
