import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Acknowledges one cdk-nag finding on `scope` and everything below it, with the reason in code
 * next to the resource it is about. `id` is `RuleId` or `RuleId[FindingId]`
 * (e.g. `AwsSolutions-IAM5[Resource::*]`): cdk-nag 3 matches findings one by one.
 */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}
