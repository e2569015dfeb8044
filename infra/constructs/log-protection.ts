import { type IAspect, Stack } from 'aws-cdk-lib';
import { CfnLogGroup } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';

/**
 * CloudWatch Logs managed data identifiers for phone numbers: they exist only per country
 * (`PhoneNumber-<CC>`, docs: "CloudWatch Logs managed data identifiers for sensitive data types",
 * CWL-managed-data-identifiers.html) and need a keyword such as "phone" near the number.
 */
export const PHONE_NUMBER_IDENTIFIERS = ['BR', 'DE', 'ES', 'FR', 'GB', 'IT', 'US'].map(
  (country) => `PhoneNumber-${country}`,
);

/**
 * A custom data identifier for any E.164 number (`+` and 7 to 15 digits), whatever the country
 * and with no keyword: SNS delivery-status lines carry the number as `"destination":"+1..."`, where
 * no managed identifier's keyword stands (CWL-custom-data-identifiers.html: at most 10 per policy,
 * regex up to 200 characters of a restricted set, which this one keeps to).
 */
export const E164_IDENTIFIER = { Name: 'E164PhoneNumber', Regex: '\\+[1-9][0-9]{6,14}' } as const;

/**
 * The data protection policy every log group of the stack gets: phone numbers are audited and
 * masked when ingested (readers without `logs:Unmask` see asterisks in the console, Insights,
 * `GetLogEvents`/`FilterLogEvents`, metric and subscription filters). The service never logs a
 * number (only keyed fingerprints); this covers a mistake, and the SNS delivery-status logs,
 * which hold every destination in clear. CloudFormation: `AWS::Logs::LogGroup` `DataProtectionPolicy`.
 */
function phoneNumberProtectionPolicy(scope: IConstruct): Record<string, unknown> {
  const { partition } = Stack.of(scope);
  const identifiers = [
    ...PHONE_NUMBER_IDENTIFIERS.map((id) => `arn:${partition}:dataprotection::aws:data-identifier/${id}`),
    E164_IDENTIFIER.Name,
  ];
  return {
    Name: 'reset-notifier-phone-numbers',
    Description: 'Masks phone numbers: the service logs only their keyed fingerprints',
    Version: '2021-06-01',
    Statement: [
      // A policy needs exactly one audit statement; findings go nowhere but the log group's metrics.
      { Sid: 'audit', DataIdentifier: identifiers, Operation: { Audit: { FindingsDestination: {} } } },
      { Sid: 'mask', DataIdentifier: identifiers, Operation: { Deidentify: { MaskConfig: {} } } },
    ],
    Configuration: { CustomDataIdentifier: [E164_IDENTIFIER] },
  };
}

/**
 * Gives every log group under the construct it is added to the phone-number data protection policy,
 * including the ones a provider or a later change adds (an aspect visits the whole tree at synthesis).
 * A log group with a policy of its own keeps it.
 */
export class ProtectPhoneNumbersInLogs implements IAspect {
  visit(node: IConstruct): void {
    if (node instanceof CfnLogGroup && node.dataProtectionPolicy === undefined) {
      node.dataProtectionPolicy = phoneNumberProtectionPolicy(node);
    }
  }
}
