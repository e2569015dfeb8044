import { RetentionDays } from 'aws-cdk-lib/aws-logs';

/** The retentions CloudWatch Logs offers, in days (`RetentionDays`; 9999 is "never expire"). */
const OFFERED = Object.values(RetentionDays).filter((v): v is number => typeof v === 'number' && v > 0);

/**
 * CloudWatch Logs' retention of `days`, or an error naming `setting` and the values on offer
 * (CloudFormation would refuse any other at deploy time, after the stack had started).
 */
export function retentionDaysOf(days: number, setting: string): RetentionDays {
  if (!OFFERED.includes(days)) {
    throw new Error(
      `${setting} must be a retention CloudWatch Logs offers (${OFFERED.join(', ')} days), got "${days}"`,
    );
  }
  return days as RetentionDays;
}
