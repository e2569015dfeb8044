/**
 * Synthesizes the stack offline for the local runtime (no bundling, no cdk-nag) and prints
 * `{ template, functions }` as JSON: the template `cdk synth` would produce for a provider, and
 * the logical id of each function the local stack runs. Run by `local/iam/template.ts` (which
 * caches the output by content); `local/` itself never loads the CDK.
 *
 *   tsx scripts/local-template.ts                          # { simulator, twilio, sns, eum }, each { template, functions }
 *   tsx scripts/local-template.ts --providers simulator,eum  # one { template, functions }: providers in failover order
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, CfnResource, type Stack } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { ServiceFunction } from '../infra/constructs/service-function.js';
import { PACKAGE_ROOT, type ResetNotifierProps } from '../infra/settings.js';
import { ResetNotifierStack } from '../infra/stack.js';
import { DEPLOYED } from '../local/iam/resolve.js';
import {
  type LocalFunction,
  type LocalTemplate,
  TEMPLATE_PROVIDERS,
  type TemplateProvider,
} from '../local/iam/template.js';

/** Which local function a construct of the stack is, by its construct path. */
const FUNCTION_PATHS: ReadonlyArray<readonly [RegExp, LocalFunction]> = [
  [/\/Api\/Handler$/, 'api'],
  [/\/Api\/Receipts$/, 'receipts'],
  [/\/AwsSms\/Receipts$/, 'eumReceipts'],
  [/\/Pipeline\/Forwarder$/, 'forwarder'],
  [/\/Pipeline\/Sender$/, 'sender'],
  [/\/Pipeline\/Reconciler$/, 'reconciler'],
  [/\/Pipeline\/ReconcileWorker$/, 'reconcileWorker'],
];

const secretArn = (name: string) =>
  `arn:${DEPLOYED.partition}:secretsmanager:${DEPLOYED.region}:${DEPLOYED.account}:secret:${name}-AbCdEf`;

/** The provider props a deployment of `provider` would pass (placeholders where the local stack has its own). */
function providerProps(
  scope: Stack,
  provider: TemplateProvider,
): NonNullable<ResetNotifierProps['provider']> {
  switch (provider) {
    case 'simulator':
      return {
        kind: 'simulator',
        baseUrl: 'http://127.0.0.1',
        authTokenSecret: Secret.fromSecretCompleteArn(scope, 'SimulatorToken', secretArn('simulator-token')),
      };
    case 'twilio':
      return {
        kind: 'twilio',
        accountSid: 'AC00000000000000000000000000000000',
        from: '+15005550006',
        authTokenSecret: Secret.fromSecretCompleteArn(scope, 'TwilioToken', secretArn('twilio-token')),
      };
    case 'eum':
      return {
        kind: 'eum',
        originationIdentityArn: `arn:${DEPLOYED.partition}:sms-voice:${DEPLOYED.region}:${DEPLOYED.account}:pool/pool-local`,
      };
    default:
      return { kind: 'sns' };
  }
}

/**
 * The template of the stack for `provider`, or for a list of providers in failover order (the
 * stack's `providers`: every listed provider's grants and resources), and its functions' logical ids.
 */
export function synthesizeLocalTemplate(
  provider: TemplateProvider | readonly TemplateProvider[],
): LocalTemplate {
  const listed = typeof provider === 'string' ? [provider] : provider;
  const cdkJson = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new ResetNotifierStack(app, DEPLOYED.stackName, {
    notifier: (scope) => ({
      // Required at synth; the local stack's own values come from its environment.
      abuseLimits: { resetUrlHosts: ['localhost'], allowedDestinationCountries: ['US'] },
      ...(listed.length === 1
        ? { provider: providerProps(scope, listed[0] as TemplateProvider) }
        : { providers: listed.map((kind) => providerProps(scope, kind)) }),
    }),
  });
  const functions: Partial<Record<LocalFunction, string>> = {};
  for (const construct of stack.node.findAll()) {
    if (!(construct instanceof ServiceFunction)) continue;
    const match = FUNCTION_PATHS.find(([pattern]) => pattern.test(construct.node.path));
    const child = construct.node.defaultChild;
    if (match && child instanceof CfnResource) functions[match[1]] = stack.getLogicalId(child);
  }
  const template = app.synth().getStackByName(stack.stackName).template as LocalTemplate['template'];
  return { template, functions };
}

/** The template of every provider, from one process (the CDK loads once). */
export function synthesizeLocalTemplates(): Record<TemplateProvider, LocalTemplate> {
  return Object.fromEntries(
    TEMPLATE_PROVIDERS.map((provider) => [provider, synthesizeLocalTemplate(provider)]),
  ) as Record<TemplateProvider, LocalTemplate>;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--providers');
  const list = at === -1 ? undefined : (process.argv[at + 1] ?? '').split(',');
  const unknown = list?.filter((kind) => !(TEMPLATE_PROVIDERS as readonly string[]).includes(kind)) ?? [];
  if (list !== undefined && (list.length === 0 || unknown.length > 0)) {
    throw new Error(`--providers takes kinds of ${TEMPLATE_PROVIDERS.join(', ')}, comma-separated`);
  }
  process.stdout.write(
    JSON.stringify(
      list === undefined ? synthesizeLocalTemplates() : synthesizeLocalTemplate(list as TemplateProvider[]),
    ),
  );
}
