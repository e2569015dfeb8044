import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { ResetNotifierProps } from './settings.js';
import { notifierPropsFromContext, ResetNotifierStack } from './stack.js';

/** The stack's construct id (and default CloudFormation stack name). */
export const STACK_ID = 'ResetNotifier';

/**
 * Defines the deployable app on `app`: the stack, configured from context, plus the cdk-nag
 * AwsSolutions checks (every remaining finding is acknowledged in code with its reason).
 * `overrides` replace context-derived props (tests use it to point at stub handlers).
 */
export function defineApp(app: App, overrides: Partial<ResetNotifierProps> = {}): ResetNotifierStack {
  const stack = new ResetNotifierStack(app, STACK_ID, {
    notifier: (scope) => ({ ...notifierPropsFromContext(scope), ...overrides }),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
