import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Architecture, type CfnFunction, LoggingFormat, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { SETTINGS, settingsEnv } from '../../shared/settings.js';
import { acknowledge } from './nag.js';

/** Props of {@link ServiceFunction}: what differs between the service's functions. */
export interface ServiceFunctionProps {
  /** Absolute path of the TypeScript entry file; it must export `handler`. */
  readonly entry: string;
  readonly description: string;
  readonly timeout: Duration;
  /** @default 512 */
  readonly memorySize?: number;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  /** Directory esbuild may read (the package root). */
  readonly projectRoot: string;
  /** The lock file of that package (part of the bundle's asset hash). */
  readonly depsLockFilePath: string;
  /** Reserved concurrency; unset (the default) reserves none of the account's pool. */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Why the role needs a `"*"` resource besides X-Ray (e.g. `sns:Publish` to phone numbers); the
   * one cdk-nag acknowledgment of `Resource::*` on the role lists every reason.
   */
  readonly wildcardResourceReason?: string;
}

/**
 * The service's one Lambda flavour: Node.js 24 on ARM64, an ESM bundle built by the local esbuild
 * (never Docker), minified with source maps, JSON logs into an explicit log group
 * with a retention, and a role of its own that starts with nothing but writing to that log group.
 * Every other permission is granted explicitly by the construct that wires the function.
 */
export class ServiceFunction extends NodejsFunction {
  /** The function's role (no managed policies attached). */
  readonly serviceRole: iam.Role;
  /** Where the function logs; created here so its retention and removal policy are explicit. */
  readonly serviceLogGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    // Role and log group are siblings (they must exist before `super`): the role gets no
    // AWSLambdaBasicExecutionRole, whose `logs:*` on every log group is broader than needed.
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${id}`,
    });
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention,
      // Kept when the stack goes; removed if its first create rolls back (nothing logged yet).
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    });
    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout,
      role,
      logGroup,
      loggingFormat: LoggingFormat.JSON,
      ...(props.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      projectRoot: props.projectRoot,
      depsLockFilePath: props.depsLockFilePath,
      environment: { ...settingsEnv({ nodeOptions: SETTINGS.nodeOptions.aws }), ...props.environment },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        minify: true,
        sourceMap: true,
        // Keeps bundles small; stack traces still map to file and line.
        sourcesContent: false,
        mainFields: ['module', 'main'],
        // Bundle the pinned AWS SDK too: the code was tested against it, not the runtime's copy.
        externalModules: [],
        // CommonJS dependencies inside an ESM bundle still call `require`.
        banner: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
        forceDockerBundling: false,
        // Quiet synth output; esbuild still reports warnings and errors.
        logLevel: LogLevel.WARNING,
      },
    });
    this.serviceRole = role;
    this.serviceLogGroup = logGroup;
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'WriteOwnLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    if (props.wildcardResourceReason !== undefined) {
      acknowledge(role, 'AwsSolutions-IAM5[Resource::*]', props.wildcardResourceReason);
    }
  }
}

/** Lambda's limit for SQS event sources: the queue's visibility timeout is at least 6x this. */
export function visibilityTimeoutFor(functionTimeout: Duration): Duration {
  return Duration.seconds(functionTimeout.toSeconds() * 6);
}

/**
 * Turns on X-Ray active tracing of `fn` (what CDK's `tracing: Tracing.ACTIVE` writes: the mode and
 * the role's right to send segments), for deployments that opt in (`tracing`).
 */
export function enableActiveTracing(fn: ServiceFunction): void {
  (fn.node.defaultChild as CfnFunction).tracingConfig = { mode: 'Active' };
  fn.serviceRole.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
      resources: ['*'],
    }),
  );
  acknowledge(
    fn.serviceRole,
    'AwsSolutions-IAM5[Resource::*]',
    'X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions.',
  );
}
