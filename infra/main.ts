import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { decodeContext, SETTINGS } from '../shared/settings.js';
import type { ResetNotifierProps } from './settings.js';
import { CONTEXT_KEYS, notifierPropsFromContext, ResetNotifierStack } from './stack.js';

/** The stack's default construct id and CloudFormation stack name (context `stackName` sets another). */
export const STACK_ID = SETTINGS.stackName.aws;

/**
 * The stack as `cdk deploy` defines it, configured from context, without cdk-nag: its name from
 * `reset-notifier:stackName` (so two deployments of the service can share an account and region),
 * its props from {@link notifierPropsFromContext}. `overrides` replace context-derived props
 * (tests use it to point at stub handlers).
 */
export function defineStack(app: App, overrides: Partial<ResetNotifierProps> = {}): ResetNotifierStack {
  const name: unknown = app.node.tryGetContext(CONTEXT_KEYS.stackName);
  const id = name === undefined || name === null || String(name).trim() === '' ? STACK_ID : String(name);
  return new ResetNotifierStack(app, decodeContext('stackName', id), {
    notifier: (scope) => ({ ...notifierPropsFromContext(scope), ...overrides }),
  });
}

/**
 * Defines the deployable app on `app`: {@link defineStack} plus the cdk-nag AwsSolutions checks
 * (every remaining finding is acknowledged in code with its reason).
 */
export function defineApp(app: App, overrides: Partial<ResetNotifierProps> = {}): ResetNotifierStack {
  const stack = defineStack(app, overrides);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
